/* SPDX-License-Identifier: ISC */
/*
 * utf8.h - UTF-8 as PostgreSQL and JSON accept it
 *
 * Well-formed UTF-8 only: no overlong forms, no surrogates (U+D800..DFFF),
 * nothing above U+10FFFF.  Shared by the envelope reader (what may become
 * an event id) and the header store (what may go into jsonb).
 */
#ifndef HOOKINBOX_UTF8_H
#define HOOKINBOX_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The length (1..4) of the well-formed UTF-8 sequence at p (len > 0 bytes
 * available), or 0 when the bytes there are not one.  *cp is its code point.
 */
size_t utf8_next(const unsigned char *p, size_t len, uint32_t *cp);

/* code point cp as UTF-8 into out (4 bytes of room); the length, 0 for a surrogate or > U+10FFFF */
size_t utf8_put(uint32_t cp, unsigned char *out);

/*
 * A copy of s (NUL-terminated) in which every byte that is not part of a
 * well-formed sequence is written as the four characters "\xNN"; the
 * caller frees it.  Well-formed input is copied as it is.
 */
char *utf8_escape_invalid(const char *s);

#endif
