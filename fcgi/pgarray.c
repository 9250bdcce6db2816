/* SPDX-License-Identifier: ISC */
/*
 * pgarray.c - one-dimensional PostgreSQL arrays in the binary wire format
 *
 * The format array_recv() reads: int32 ndim, int32 has-nulls flag, OID of
 * the element type, then per dimension int32 length and int32 lower bound;
 * then each element as int32 length (-1: NULL) and the element's own binary
 * form.  All integers are big-endian.
 */
#include "pgarray.h"

#include "dynbuf.h"
#include "xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_LEN 20	/* ndim, flags, element OID, length, lower bound */
#define JSONB_VERSION 1 /* jsonb_recv: a version byte before the JSON text */
/* a backstop: PostgreSQL takes no parameter over 1 GB */
#define PGARRAY_MAX ((size_t)1 << 30)

struct pgarray {
	pgarray_type type;
	dynbuf b;
	int32_t n;
	bool has_null;
};

static void
put32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

static char *
grow(pgarray *a, size_t more)
{
	char *p = dynbuf_extend(&a->b, more);

	/* the caller bounds bodies far below this (max_body) */
	if (p == NULL)
		abort();
	return p;
}

pgarray *
pgarray_new(pgarray_type type)
{
	pgarray *a = xcalloc(1, sizeof(*a));

	a->type = type;
	dynbuf_init(&a->b, PGARRAY_MAX);
	pgarray_reset(a);
	return a;
}

void
pgarray_free(pgarray *a)
{
	if (a == NULL)
		return;
	dynbuf_release(&a->b);
	free(a);
}

void
pgarray_reset(pgarray *a)
{
	dynbuf_reset(&a->b);
	(void)grow(a, HEADER_LEN); /* filled in by pgarray_value */
	a->n = 0;
	a->has_null = false;
}

void
pgarray_add_null(pgarray *a)
{
	put32(grow(a, 4), UINT32_MAX); /* -1 */
	a->has_null = true;
	a->n++;
}

void
pgarray_add(pgarray *a, const void *data, size_t len)
{
	bool jsonb = a->type == PGARRAY_JSONB;
	size_t elen = len + (jsonb ? 1 : 0);
	char *p;

	/* the caller bounds bodies far below this (max_body) */
	if (elen > INT32_MAX)
		abort();
	p = grow(a, 4 + elen);
	put32(p, (uint32_t)elen);
	p += 4;
	if (jsonb)
		*p++ = JSONB_VERSION;
	if (len > 0)
		memcpy(p, data, len);
	a->n++;
}

void
pgarray_add_str(pgarray *a, const char *s)
{
	if (s == NULL)
		pgarray_add_null(a);
	else
		pgarray_add(a, s, strlen(s));
}

void
pgarray_add_int8(pgarray *a, int64_t v)
{
	char *p = grow(a, 12);
	uint64_t u = (uint64_t)v;

	put32(p, 8);
	put32(p + 4, (uint32_t)(u >> 32));
	put32(p + 8, (uint32_t)u);
	a->n++;
}

void
pgarray_add_bool(pgarray *a, bool v)
{
	char *p = grow(a, 5);

	put32(p, 1);
	p[4] = v ? 1 : 0;
	a->n++;
}

const char *
pgarray_value(pgarray *a, int *len)
{
	put32(a->b.buf, 1);
	put32(a->b.buf + 4, a->has_null ? 1 : 0);
	put32(a->b.buf + 8, (uint32_t)a->type);
	put32(a->b.buf + 12, (uint32_t)a->n);
	put32(a->b.buf + 16, 1);
	if (a->b.len > INT_MAX)
		abort();
	*len = (int)a->b.len;
	return a->b.buf;
}
