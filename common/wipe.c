/* SPDX-License-Identifier: ISC */
/*
 * wipe.c - wiping secret material
 */
#include "wipe.h"

#include <openssl/crypto.h>

void
secure_wipe(void *p, size_t len)
{
	if (p != NULL && len > 0)
		OPENSSL_cleanse(p, len);
}
