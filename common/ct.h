/* SPDX-License-Identifier: ISC */
/*
 * ct.h - constant-time comparison of MACs, signatures and tokens
 */
#ifndef HOOKINBOX_CT_H
#define HOOKINBOX_CT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True when the lengths are equal and the bytes are too (CRYPTO_memcmp
 * after a length check).  The lengths are not secret.
 */
bool ct_equal(const void *a, size_t alen, const void *b, size_t blen);

#endif
