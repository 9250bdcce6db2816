/* SPDX-License-Identifier: ISC */
/*
 * respref.h - the downstream's reference read from its JSON answer
 *
 * A route's response_ref_field = data.id names where a downstream's 2xx
 * answer carries the id of what it created.  Pure, no I/O: unit-tested in
 * tests/unit/test_respref.c.
 */
#ifndef HOOKINBOX_RESPREF_H
#define HOOKINBOX_RESPREF_H

#include <stdbool.h>
#include <stddef.h>

#define RESPREF_BODY_MAX 65536 /* bytes of an answer read for the field; longer: not read */

/*
 * The value at the dotted path in body[0..len) (a JSON object), as
 * printable ASCII (other bytes become '?') in out[0..cap): a string
 * unescaped, a number as written.  truncated says the answer was longer
 * than what body holds.  Returns 0, or -1 with *why saying why there is
 * none (a static string: "answer is not JSON", "answer over 64 KiB", "no
 * such field", "field is not a string or number").
 */
int respref_from_json(const char *body, size_t len, bool truncated, const char *path, char *out,
		      size_t cap, const char **why);

/*
 * src[0..len) as printable ASCII (other bytes become '?'), at most cap - 1
 * bytes, in out: safe in a header, a log line or psql's output.  Every
 * reference the worker keeps (header, JSON field, start of the answer)
 * goes through it.
 */
void respref_printable(char *out, size_t cap, const char *src, size_t len);

#endif
