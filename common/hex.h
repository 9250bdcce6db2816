/* SPDX-License-Identifier: ISC */
/*
 * hex.h - hex encoding and strict decoding
 *
 * Plain C on caller-owned buffers: no allocation, no OpenSSL.
 */
#ifndef HOOKINBOX_HEX_H
#define HOOKINBOX_HEX_H

#include <stddef.h>

/*
 * Lower-case hex of in into out, which must hold 2 * len + 1 bytes;
 * NUL-terminated.
 */
void hex_encode(const unsigned char *in, size_t len, char *out);

/*
 * Decode exactly len hex digits (either case) at in into out (len / 2
 * bytes).  Returns the number of bytes, or -1 for an odd length, a
 * non-hex digit or more than outcap bytes.
 */
long hex_decode(const char *in, size_t len, unsigned char *out, size_t outcap);

#endif
