/* SPDX-License-Identifier: ISC */
/*
 * hmac.c - HMAC-SHA1/256/512 over a message given in pieces
 *
 * OpenSSL 3 EVP_MAC only; the deprecated HMAC_CTX API is not used.
 */
#include "hmac.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

size_t
hmac_len(hmac_alg alg)
{
	switch (alg) {
	case HMAC_SHA1:
		return 20;
	case HMAC_SHA256:
		return 32;
	case HMAC_SHA512:
		return 64;
	}
	return 0;
}

static const char *
digest_name(hmac_alg alg)
{
	switch (alg) {
	case HMAC_SHA1:
		return "SHA1";
	case HMAC_SHA256:
		return "SHA256";
	case HMAC_SHA512:
		return "SHA512";
	}
	return "SHA256";
}

int
hmac_compute(hmac_alg alg, const unsigned char *key, size_t key_len, const hmac_part *parts,
	     size_t n, unsigned char out[HMAC_MAX_LEN])
{
	static const unsigned char empty_key[1];
	EVP_MAC *mac = NULL;
	EVP_MAC_CTX *ctx = NULL;
	OSSL_PARAM params[2];
	char dname[16];
	size_t outl = 0;
	int rc = -1;

	/* OSSL_PARAM wants a writable string; keep the literal const */
	if ((size_t)snprintf(dname, sizeof(dname), "%s", digest_name(alg)) >= sizeof(dname))
		goto out;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, dname, 0);
	params[1] = OSSL_PARAM_construct_end();

	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (mac == NULL)
		goto out;
	ctx = EVP_MAC_CTX_new(mac);
	if (ctx == NULL)
		goto out;
	/* an empty key is legal HMAC; OpenSSL wants a non-NULL pointer */
	if (!EVP_MAC_init(ctx, key_len > 0 ? key : empty_key, key_len, params))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (parts[i].len > 0 && !EVP_MAC_update(ctx, parts[i].data, parts[i].len))
			goto out;
	}
	if (!EVP_MAC_final(ctx, out, &outl, HMAC_MAX_LEN) || outl != hmac_len(alg))
		goto out;
	rc = 0;
out:
	if (rc != 0)
		OPENSSL_cleanse(out, HMAC_MAX_LEN);
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return rc;
}

int
hmac_sha1_key(const void *key, size_t len, unsigned char out[20])
{
	unsigned int outl = 0;

	if (!EVP_Digest(key, len, out, &outl, EVP_sha1(), NULL) || outl != 20)
		return -1;
	return 0;
}
