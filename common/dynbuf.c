/* SPDX-License-Identifier: ISC */
/*
 * dynbuf.c - growable buffers with a hard cap
 */
#include "dynbuf.h"

#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DYNBUF_FIRST 256 /* the first allocation, unless more is asked for */

void
dynbuf_init(dynbuf *b, size_t max)
{
	b->buf = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
}

void
dynbuf_release(dynbuf *b)
{
	free(b->buf);
	dynbuf_init(b, b->max);
}

void
dynbuf_reset(dynbuf *b)
{
	b->len = 0;
	if (b->buf != NULL)
		b->buf[0] = '\0';
}

void *
dynbuf_extend(dynbuf *b, size_t n)
{
	char *p;

	/* len <= max always, so neither subtraction wraps */
	if (n > b->max - b->len || n > SIZE_MAX - 1 - b->len)
		return NULL;
	if (b->alloc - b->len <= n || b->buf == NULL) {
		size_t need = b->len + n + 1;
		size_t alloc = b->alloc != 0 ? b->alloc : DYNBUF_FIRST;

		while (alloc < need)
			alloc = alloc > SIZE_MAX / 2 ? need : alloc * 2;
		/* the cap bounds the allocation too */
		if (b->max < SIZE_MAX && alloc > b->max + 1)
			alloc = b->max + 1 > need ? b->max + 1 : need;
		b->buf = xrealloc(b->buf, alloc);
		b->alloc = alloc;
	}
	p = b->buf + b->len;
	b->len += n;
	b->buf[b->len] = '\0';
	return p;
}

int
dynbuf_add(dynbuf *b, const void *data, size_t n)
{
	char *p = dynbuf_extend(b, n);

	if (p == NULL)
		return -1;
	if (n > 0)
		memcpy(p, data, n);
	return 0;
}

int
dynbuf_addstr(dynbuf *b, const char *s)
{
	return dynbuf_add(b, s, strlen(s));
}

void
dynbuf_xadd(dynbuf *b, const void *data, size_t n)
{
	if (dynbuf_add(b, data, n) != 0) {
		fprintf(stderr, "buffer over its cap (%zu bytes)\n", b->max);
		abort();
	}
}

char *
dynbuf_detach(dynbuf *b, size_t *len)
{
	char *p = b->buf != NULL ? b->buf : xstrdup("");

	if (len != NULL)
		*len = b->len;
	dynbuf_init(b, b->max);
	return p;
}

void *
xgrow(void *v, size_t need, size_t *alloc, size_t elem)
{
	size_t n = *alloc;

	if (need <= n)
		return v;
	n = n != 0 ? n : 16;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	if (elem != 0 && n > SIZE_MAX / elem) {
		fprintf(stderr, "array too large (%zu elements of %zu bytes)\n", need, elem);
		abort();
	}
	*alloc = n;
	return xrealloc(v, n * elem);
}
