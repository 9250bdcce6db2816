/* SPDX-License-Identifier: ISC */
/*
 * base64.c - standard, padded base64 (RFC 4648 section 4), by hand
 */
#include "base64.h"

#include <limits.h>

void
base64_encode(const unsigned char *in, size_t len, char *out)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0, i = 0;

	/* done by hand: EVP_EncodeBlock takes an int length */
	for (; len - i >= 3; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = alphabet[v & 63];
	}
	if (len - i == 1) {
		unsigned v = (unsigned)in[i] << 16;

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (len - i == 2) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
base64_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	size_t pad = 0, outlen, o = 0;

	if (len % 4 != 0)
		return -1;
	if (len > 0 && in[len - 1] == '=')
		pad++;
	if (len > 1 && in[len - 2] == '=')
		pad++;
	outlen = len / 4 * 3 - pad;
	if (outlen > outcap || outlen > LONG_MAX)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		unsigned w;

		for (int k = 0; k < 4; k++) {
			if (i + (size_t)k >= len - pad)
				v[k] = 0; /* the padding at the very end */
			else if ((v[k] = b64_value(in[i + (size_t)k])) < 0)
				return -1;
		}
		w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
		    (unsigned)v[3];
		if (o < outlen)
			out[o++] = (unsigned char)(w >> 16);
		if (o < outlen)
			out[o++] = (unsigned char)(w >> 8 & 0xff);
		if (o < outlen)
			out[o++] = (unsigned char)(w & 0xff);
	}
	return (long)outlen;
}
