/* SPDX-License-Identifier: ISC */
/*
 * form.c - application/x-www-form-urlencoded bodies and query strings
 */
#include "form.h"

#include "dynbuf.h"
#include "hex.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* decode s[0..len) into a new string; *outlen gets its length */
static char *
decode(const char *s, size_t len, size_t *outlen)
{
	char *out = xmalloc(len + 1);
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char byte;

		if (s[i] == '+') {
			out[o++] = ' ';
		} else if (s[i] == '%' && len - i > 2 && hex_decode(s + i + 1, 2, &byte, 1) == 1) {
			out[o++] = (char)byte;
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

int
form_parse(const char *s, size_t len, form *f)
{
	size_t cap = 0;

	f->params = NULL;
	f->n = 0;
	for (size_t i = 0; i < len;) {
		size_t j = i, eq;
		form_param *p;

		while (j < len && s[j] != '&')
			j++;
		if (j == i) {
			i = j + 1;
			continue;
		}
		if (f->n == FORM_MAX_PARAMS)
			return -1;
		f->params = xgrow(f->params, f->n + 1, &cap, sizeof(*f->params));
		for (eq = i; eq < j && s[eq] != '='; eq++)
			;
		p = &f->params[f->n++];
		p->key = decode(s + i, eq - i, &p->key_len);
		if (eq < j)
			p->value = decode(s + eq + 1, j - eq - 1, &p->value_len);
		else
			p->value = decode("", 0, &p->value_len);
		i = j + 1;
	}
	return 0;
}

void
form_release(form *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->params[i].key);
		free(f->params[i].value);
	}
	free(f->params);
	f->params = NULL;
	f->n = 0;
}

const form_param *
form_get(const form *f, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < f->n; i++) {
		if (f->params[i].key_len == klen && memcmp(f->params[i].key, key, klen) == 0)
			return &f->params[i];
	}
	return NULL;
}

static int
bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

static int
param_cmp(const void *a, const void *b)
{
	const form_param *x = a, *y = b;
	int c = bytes_cmp(x->key, x->key_len, y->key, y->key_len);

	return c != 0 ? c : bytes_cmp(x->value, x->value_len, y->value, y->value_len);
}

void
form_sort_unique(form *f)
{
	size_t o = 0;

	if (f->n < 2)
		return;
	qsort(f->params, f->n, sizeof(*f->params), param_cmp);
	for (size_t i = 0; i < f->n; i++) {
		if (o > 0 && param_cmp(&f->params[o - 1], &f->params[i]) == 0) {
			free(f->params[i].key);
			free(f->params[i].value);
			continue;
		}
		f->params[o++] = f->params[i];
	}
	f->n = o;
}
