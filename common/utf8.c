/* SPDX-License-Identifier: ISC */
/*
 * utf8.c - UTF-8 as PostgreSQL and JSON accept it
 */
#include "utf8.h"

#include "xalloc.h"

#include <stdio.h>
#include <string.h>

size_t
utf8_next(const unsigned char *p, size_t len, uint32_t *cp)
{
	unsigned c = p[0];
	size_t n;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 1;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 2;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (len <= n)
		return 0;
	for (size_t k = 1; k <= n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[k] & 0x3f);
	}
	if ((n == 2 && v < 0x800) || (n == 3 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n + 1;
}

size_t
utf8_put(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		return 0;
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

char *
utf8_escape_invalid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), o = 0;
	char *out = xmalloc(4 * len + 1);

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_next(p + i, len - i, &cp);

		if (n == 0) {
			snprintf(out + o, 5, "\\x%02x", p[i]);
			o += 4;
			i++;
			continue;
		}
		memcpy(out + o, p + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return out;
}
