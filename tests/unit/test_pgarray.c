/* SPDX-License-Identifier: ISC */
/*
 * test_pgarray.c - the binary array parameters of accept_batch(), byte by byte
 *
 * The layout array_recv() expects; the integration tests show that the
 * server reads them, this pins each field so that a change cannot
 * silently reorder or resize one.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pgarray.h"
#include "tap.h"

int main(void);

static uint32_t
get32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

int
main(void)
{
	pgarray *a = pgarray_new(PGARRAY_TEXT);
	const char *v;
	int len;

	pgarray_add_str(a, "ab");
	pgarray_add_str(a, NULL);
	pgarray_add(a, "", 0);
	v = pgarray_value(a, &len);
	ok(len == 20 + 6 + 4 + 4, "text: header, three elements (%d bytes)", len);
	ok(get32(v) == 1, "one dimension");
	ok(get32(v + 4) == 1, "has-nulls flag set");
	ok(get32(v + 8) == 25, "element type text");
	ok(get32(v + 12) == 3 && get32(v + 16) == 1, "three elements from index 1");
	ok(get32(v + 20) == 2 && memcmp(v + 24, "ab", 2) == 0,
	   "an element is its length and bytes");
	ok(get32(v + 26) == UINT32_MAX, "NULL is length -1, no bytes");
	ok(get32(v + 30) == 0, "an empty string is length 0");

	pgarray_reset(a);
	pgarray_add_str(a, "x");
	v = pgarray_value(a, &len);
	ok(len == 25 && get32(v + 4) == 0 && get32(v + 12) == 1,
	   "reset: one element, no NULL flag");
	pgarray_free(a);

	a = pgarray_new(PGARRAY_INT8);
	pgarray_add_int8(a, -2);
	pgarray_add_int8(a, INT64_C(1700000000123456));
	v = pgarray_value(a, &len);
	ok(len == 20 + 2 * 12 && get32(v + 8) == 20, "int8: two elements of 8 bytes");
	ok(get32(v + 20) == 8 && get32(v + 24) == UINT32_MAX && get32(v + 28) == UINT32_MAX - 1,
	   "int8 -2 big-endian");
	ok(get32(v + 36) == (uint32_t)(INT64_C(1700000000123456) >> 32) &&
		   get32(v + 40) == (uint32_t)INT64_C(1700000000123456),
	   "int8 1700000000123456 big-endian");
	pgarray_free(a);

	a = pgarray_new(PGARRAY_JSONB);
	pgarray_add_str(a, "{}");
	v = pgarray_value(a, &len);
	ok(len == 20 + 4 + 3 && get32(v + 8) == 3802, "jsonb: one element");
	ok(get32(v + 20) == 3 && v[24] == 1 && memcmp(v + 25, "{}", 2) == 0,
	   "jsonb: version byte 1, then the text");
	pgarray_free(a);

	a = pgarray_new(PGARRAY_BOOL);
	pgarray_add_bool(a, true);
	pgarray_add_bool(a, false);
	v = pgarray_value(a, &len);
	ok(len == 20 + 2 * 5 && get32(v + 8) == 16, "bool: two elements of 1 byte");
	ok(v[24] == 1 && v[29] == 0, "true is 1, false is 0");
	pgarray_free(a);

	a = pgarray_new(PGARRAY_BYTEA);
	for (int i = 0; i < 1000; i++)
		pgarray_add(a, "\0\1\2", 3);
	v = pgarray_value(a, &len);
	ok(len == 20 + 1000 * 7 && get32(v + 12) == 1000 && v[20 + 999 * 7 + 5] == 1,
	   "bytea: the buffer grows, bytes kept as they are");
	pgarray_free(a);
	return done_testing();
}
