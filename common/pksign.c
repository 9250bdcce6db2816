/* SPDX-License-Identifier: ISC */
/*
 * pksign.c - one-shot public-key signatures through OpenSSL's EVP_PKEY
 */
#include "pksign.h"

bool
pksign_verify(EVP_PKEY *key, const EVP_MD *md, const void *msg, size_t len,
	      const unsigned char *sig, size_t siglen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool good = ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, md, NULL, key) == 1 &&
		    EVP_DigestVerify(ctx, sig, siglen, msg, len) == 1;

	EVP_MD_CTX_free(ctx);
	return good;
}

int
pksign_sign(EVP_PKEY *key, const EVP_MD *md, const void *msg, size_t len, unsigned char *sig,
	    size_t *siglen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int rc = ctx != NULL && EVP_DigestSignInit(ctx, NULL, md, NULL, key) == 1 &&
				 EVP_DigestSign(ctx, sig, siglen, msg, len) == 1
			 ? 0
			 : -1;

	EVP_MD_CTX_free(ctx);
	return rc;
}
