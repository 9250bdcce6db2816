/* SPDX-License-Identifier: ISC */
/*
 * ct.c - constant-time comparison
 */
#include "ct.h"

#include <openssl/crypto.h>

bool
ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	if (alen != blen)
		return false;
	if (alen == 0)
		return true;
	return CRYPTO_memcmp(a, b, alen) == 0;
}
