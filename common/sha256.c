/* SPDX-License-Identifier: ISC */
/*
 * sha256.c - SHA-256 through OpenSSL's EVP_Digest
 */
#include "sha256.h"

#include <openssl/evp.h>

int
sha256_digest(const void *data, size_t len, unsigned char out[SHA256_LEN])
{
	unsigned int outl = 0;

	if (!EVP_Digest(data, len, out, &outl, EVP_sha256(), NULL) || outl != SHA256_LEN)
		return -1;
	return 0;
}

int
sha256_parts(const msg_part *parts, size_t n, unsigned char out[SHA256_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int outl = 0;
	int rc = -1;

	if (ctx == NULL || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!EVP_DigestUpdate(ctx, parts[i].data, parts[i].len))
			goto out;
	if (EVP_DigestFinal_ex(ctx, out, &outl) && outl == SHA256_LEN)
		rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}
