/* SPDX-License-Identifier: ISC */
/*
 * sha256.h - SHA-256 of a buffer or of a message given in pieces
 */
#ifndef HOOKINBOX_SHA256_H
#define HOOKINBOX_SHA256_H

#include <stddef.h>

#include "msgpart.h"

#define SHA256_LEN 32

/* SHA-256 of data; returns 0 or -1 */
int sha256_digest(const void *data, size_t len, unsigned char out[SHA256_LEN])
	__attribute__((warn_unused_result));
/* SHA-256 of the concatenation of parts[0..n-1]; returns 0 or -1 */
int sha256_parts(const msg_part *parts, size_t n, unsigned char out[SHA256_LEN])
	__attribute__((warn_unused_result));

#endif
