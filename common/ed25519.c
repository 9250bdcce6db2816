/* SPDX-License-Identifier: ISC */
/*
 * ed25519.c - Ed25519 (RFC 8032) with raw 32-byte keys, through OpenSSL's
 * EVP_PKEY interface
 */
#include "ed25519.h"

#include <openssl/evp.h>

#include "pksign.h"

bool
ed25519_verify(const unsigned char pub[ED25519_KEY_LEN], const void *msg, size_t len,
	       const unsigned char sig[ED25519_SIG_LEN])
{
	EVP_PKEY *pkey;
	bool good;

	pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, ED25519_KEY_LEN);
	if (pkey == NULL)
		return false;
	good = pksign_verify(pkey, NULL, msg, len, sig, ED25519_SIG_LEN);
	EVP_PKEY_free(pkey);
	return good;
}

int
ed25519_sign(const unsigned char seed[ED25519_KEY_LEN], const void *msg, size_t len,
	     unsigned char sig[ED25519_SIG_LEN])
{
	EVP_PKEY *pkey;
	size_t siglen = ED25519_SIG_LEN;
	int rc;

	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, ED25519_KEY_LEN);
	if (pkey == NULL)
		return -1;
	rc = pksign_sign(pkey, NULL, msg, len, sig, &siglen) == 0 && siglen == ED25519_SIG_LEN ? 0
											       : -1;
	EVP_PKEY_free(pkey);
	return rc;
}

int
ed25519_public(const unsigned char seed[ED25519_KEY_LEN], unsigned char pub[ED25519_KEY_LEN])
{
	EVP_PKEY *pkey;
	size_t publen = ED25519_KEY_LEN;
	int rc = -1;

	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, ED25519_KEY_LEN);
	if (pkey == NULL)
		return -1;
	if (EVP_PKEY_get_raw_public_key(pkey, pub, &publen) == 1 && publen == ED25519_KEY_LEN)
		rc = 0;
	EVP_PKEY_free(pkey);
	return rc;
}
