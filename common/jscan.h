/* SPDX-License-Identifier: ISC */
/*
 * jscan.h - a strict JSON reader that keeps each value's source text
 *
 * The envelope fields must be exactly what the provider's own SDK reads
 * with JSON.parse: an integer id keeps all its digits (json-c saturates
 * at int64, so two 20-digit ids became one), a key is compared with all
 * its bytes (json-c cut keys at an escaped NUL, so "id\u0000x" overwrote
 * "id"), the last of repeated keys wins, and a lone surrogate is not
 * silently replaced (json-c maps it to U+FFFD, making two ids one).
 *
 * jscan_parse checks the whole text once (RFC 8259, well-formed UTF-8,
 * nesting bounded); the values it hands out are spans of that text, and
 * lookups in them scan without recursion.  Nothing is allocated except by
 * jscan_string (and by jscan_member for a key written with escapes).
 */
#ifndef HOOKINBOX_JSCAN_H
#define HOOKINBOX_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

typedef enum jscan_type {
	JSCAN_NULL,
	JSCAN_FALSE,
	JSCAN_TRUE,
	JSCAN_NUMBER,
	JSCAN_STRING,
	JSCAN_ARRAY,
	JSCAN_OBJECT
} jscan_type;

/* a value: its type and its exact source text (a string with its quotes) */
typedef struct jscan_value {
	jscan_type type;
	const char *p;
	size_t len;
} jscan_value;

/*
 * 0 when s[0..len) is one JSON value, nested at most max_depth deep, with
 * only JSON whitespace around it; *root is that value.  -1 otherwise.
 */
int jscan_parse(const char *s, size_t len, int max_depth, jscan_value *root)
	__attribute__((warn_unused_result));

/*
 * The member of object o whose key, unescaped, is exactly key[0..key_len)
 * (the last one when the key is repeated, as JSON.parse does).  0 and *out
 * set, or -1 when o is not an object or has no such member.  o must come
 * from jscan_parse.
 */
int jscan_member(const jscan_value *o, const char *key, size_t key_len, jscan_value *out);

/*
 * The elements of array a in turn: *pos is NULL for the first call and
 * is advanced past each element.  0 and *out set, or -1 after the last
 * element or when a is not an array.  a must come from jscan_parse.
 */
int jscan_element(const jscan_value *a, const char **pos, jscan_value *out);

/*
 * The value at a dotted path ("data.object.id": each part a key, unescaped
 * as with jscan_member) through nested objects from o.  0 and *out set, or
 * -1 when a part is missing or what it is looked up in is not an object.
 */
int jscan_path(const jscan_value *o, const char *path, jscan_value *out);

/*
 * The unescaped UTF-8 text of a string value, NUL-terminated (it may hold
 * NUL bytes itself: *len is its length); the caller frees it.  -1 when v
 * is not a string or holds a lone surrogate (\ud800 alone), which UTF-8
 * cannot carry.
 */
int jscan_string(const jscan_value *v, char **out, size_t *len);

/*
 * The same text into buf, of cap bytes, without allocating (the envelope
 * fields are read on every delivery): 0 when it fits with its NUL; 1 when
 * it is longer than cap - 1 bytes (buf then holds no usable text); -1 as
 * jscan_string.  A lone surrogate gives -1 wherever it is, even past cap.
 */
int jscan_string_into(const jscan_value *v, char *buf, size_t cap, size_t *len)
	__attribute__((warn_unused_result));

/* true when a number's source text is an integer (no fraction, no exponent) */
bool jscan_is_integer(const jscan_value *v);

#endif
