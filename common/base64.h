/* SPDX-License-Identifier: ISC */
/*
 * base64.h - standard, padded base64 (RFC 4648 section 4)
 *
 * Plain C on caller-owned buffers: no allocation, no OpenSSL.
 */
#ifndef HOOKINBOX_BASE64_H
#define HOOKINBOX_BASE64_H

#include <stddef.h>

/* size of the buffer base64_encode needs for len bytes, including the NUL */
#define BASE64_ENCODED_SIZE(len) ((((len) + 2) / 3) * 4 + 1)
/* upper bound of the decoded size of len base64 characters */
#define BASE64_DECODED_MAX(len) ((((len) + 3) / 4) * 3)

/* padded standard base64 of in into out (BASE64_ENCODED_SIZE(len) bytes); NUL-terminated */
void base64_encode(const unsigned char *in, size_t len, char *out);

/*
 * Decode standard, padded base64 (len a multiple of 4, "=" only at the
 * end, no whitespace) into out.  Returns the number of bytes, padding
 * taken into account, or -1 for invalid input or more than outcap bytes.
 */
long base64_decode(const char *in, size_t len, unsigned char *out, size_t outcap);

#endif
