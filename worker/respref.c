/* SPDX-License-Identifier: ISC */
/*
 * respref.c - the downstream's reference read from its JSON answer
 */
#include "respref.h"

#include <stdlib.h>

#include "jscan.h"

#define RESPREF_DEPTH 32

void
respref_printable(char *out, size_t cap, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];

		out[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	out[o] = '\0';
}

int
respref_from_json(const char *body, size_t len, bool truncated, const char *path, char *out,
		  size_t cap, const char **why)
{
	jscan_value root, v;
	char *text = NULL;
	size_t text_len = 0;

	if (cap > 0)
		out[0] = '\0';
	if (truncated) {
		*why = "answer over 64 KiB";
		return -1;
	}
	if (jscan_parse(body, len, RESPREF_DEPTH, &root) != 0) {
		*why = "answer is not JSON";
		return -1;
	}
	if (jscan_path(&root, path, &v) != 0) {
		*why = "no such field";
		return -1;
	}
	if (v.type == JSCAN_NUMBER) {
		respref_printable(out, cap, v.p, v.len);
		return 0;
	}
	if (v.type != JSCAN_STRING || jscan_string(&v, &text, &text_len) != 0 || text_len == 0) {
		free(text);
		*why = "field is not a string or number";
		return -1;
	}
	respref_printable(out, cap, text, text_len);
	free(text);
	return 0;
}
