/* SPDX-License-Identifier: ISC */
/*
 * test_dynbuf.c - the capped growable buffer: appends up to the cap and no
 * further, a refused append changes nothing, the bytes stay NUL-terminated,
 * and xgrow's arrays
 */
#include "dynbuf.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(void);

int
main(void)
{
	dynbuf b;
	char big[1000];
	char *s;
	size_t len = 99;

	dynbuf_init(&b, 10);
	ok(b.buf == NULL && b.len == 0, "init: nothing allocated");
	ok(dynbuf_add(&b, "hello", 5) == 0 && b.len == 5 && strcmp(b.buf, "hello") == 0,
	   "add: bytes held, NUL after them");
	ok(dynbuf_addstr(&b, "world") == 0 && b.len == 10 && strcmp(b.buf, "helloworld") == 0,
	   "addstr up to the cap exactly");
	ok(dynbuf_add(&b, "!", 1) != 0 && b.len == 10 && strcmp(b.buf, "helloworld") == 0,
	   "one byte past the cap: refused, buffer unchanged");
	ok(dynbuf_add(&b, "", 0) == 0 && b.len == 10, "an empty append at the cap");
	ok(dynbuf_add(&b, big, SIZE_MAX) != 0 && b.len == 10, "SIZE_MAX bytes: refused, no wrap");
	ok(b.alloc <= 11, "the cap bounds the allocation (%zu)", b.alloc);
	dynbuf_reset(&b);
	ok(b.len == 0 && b.buf != NULL && b.buf[0] == '\0', "reset: empty, allocation kept");
	ok(dynbuf_extend(&b, 11) == NULL && b.len == 0, "extend past the cap: NULL");
	s = dynbuf_extend(&b, 3);
	ok(s != NULL && b.len == 3 && b.buf[3] == '\0', "extend: room for the caller, NUL after");
	memcpy(s, "abc", 3);
	s = dynbuf_detach(&b, &len);
	ok(strcmp(s, "abc") == 0 && len == 3, "detach: the bytes and their length");
	ok(b.buf == NULL && b.len == 0 && b.max == 10, "detach: empty again, same cap");
	free(s);
	s = dynbuf_detach(&b, &len);
	ok(s != NULL && s[0] == '\0' && len == 0, "detach of nothing: an empty string");
	free(s);

	dynbuf_init(&b, 100000);
	memset(big, 'x', sizeof(big));
	for (int i = 0; i < 100; i++)
		dynbuf_xadd(&b, big, sizeof(big));
	ok(b.len == 100000 && b.buf[99999] == 'x' && b.buf[100000] == '\0',
	   "growth over many appends to the cap exactly");
	ok(dynbuf_add(&b, "y", 1) != 0, "and not a byte further");
	dynbuf_release(&b);
	ok(b.buf == NULL && b.len == 0 && b.max == 100000, "release: empty, same cap");
	dynbuf_release(&b);
	ok(b.buf == NULL, "release twice");

	int *v = NULL;
	size_t alloc = 0;

	for (int i = 0; i < 1000; i++) {
		v = xgrow(v, (size_t)i + 1, &alloc, sizeof(*v));
		v[i] = i;
	}
	ok(alloc >= 1000 && v[999] == 999 && v[0] == 0, "xgrow: 1000 appends (alloc %zu)", alloc);
	ok(alloc < 2048, "xgrow: doubling, not more");
	ok(xgrow(v, 10, &alloc, sizeof(*v)) == v, "xgrow: no change when there is room");
	free(v);
	return done_testing();
}
