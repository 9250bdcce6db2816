/* SPDX-License-Identifier: ISC */
/*
 * fuzz_form.c - application/x-www-form-urlencoded decoding (common/form.c)
 *
 * Parses the input, looks a few keys up, sorts and de-duplicates, and
 * checks that the result is sorted, unique and no longer than the input.
 */
#include "form.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c != 0 ? c : alen < blen ? -1 : alen > blen;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so an overread is an ASan report */
	char *s = malloc(size ? size : 1);
	form f;
	int rc;

	if (s == NULL)
		return 0;
	if (size > 0)
		memcpy(s, data, size);
	rc = form_parse(s, size, &f);
	if (rc == 0 || rc == -1) {
		for (size_t i = 0; i < f.n; i++) {
			const form_param *p = &f.params[i];

			if (p->key_len > size || p->value_len > size ||
			    p->key[p->key_len] != '\0' || p->value[p->value_len] != '\0')
				abort();
		}
		(void)form_get(&f, "payload");
		(void)form_get(&f, "bodySHA256");
		(void)form_get(&f, "mandrill_events");
		(void)form_get(&f, "bt_payload");
		(void)form_get(&f, "");
		form_sort_unique(&f);
		for (size_t i = 1; i < f.n; i++) {
			const form_param *a = &f.params[i - 1], *b = &f.params[i];
			int c = cmp(a->key, a->key_len, b->key, b->key_len);

			if (c > 0 ||
			    (c == 0 && cmp(a->value, a->value_len, b->value, b->value_len) >= 0))
				abort();
		}
	} else {
		abort();
	}
	if (f.n > FORM_MAX_PARAMS)
		abort();
	form_release(&f);
	free(s);
	return 0;
}
