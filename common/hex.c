/* SPDX-License-Identifier: ISC */
/*
 * hex.c - lower-case hex encoding and strict hex decoding
 */
#include "hex.h"

#include <limits.h>

void
hex_encode(const unsigned char *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long
hex_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	if (len % 2 != 0 || len / 2 > outcap || len / 2 > LONG_MAX)
		return -1;
	for (size_t i = 0; i < len; i += 2) {
		int hi = hex_value(in[i]), lo = hex_value(in[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(len / 2);
}
