/* SPDX-License-Identifier: ISC */
/*
 * hmac.c - HMAC-SHA1/256/512 over a message given in pieces
 *
 * OpenSSL 3 EVP_MAC only; the deprecated HMAC_CTX API is not used.
 */
#include "hmac.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
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

/*
 * One context per thread and algorithm, kept: a new one (EVP_MAC_fetch,
 * EVP_MAC_CTX_new, the digest named) costs a dozen allocations per call,
 * and EVP_MAC_init re-keys a used one.  Freed when its thread ends.
 */
typedef struct mac_cache {
	EVP_MAC_CTX *ctx[HMAC_SHA512 + 1];
} mac_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_ok;

static void
cache_free(void *p)
{
	mac_cache *c = p;

	for (size_t i = 0; i < sizeof(c->ctx) / sizeof(c->ctx[0]); i++)
		EVP_MAC_CTX_free(c->ctx[i]);
	OPENSSL_free(c);
}

static void
cache_init(void)
{
	cache_ok = pthread_key_create(&cache_key, cache_free) == 0;
}

/* a context for alg with its digest set, not keyed; NULL when OpenSSL fails */
static EVP_MAC_CTX *
mac_new(hmac_alg alg)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[2];
	char dname[16];

	EVP_MAC_free(mac); /* the context keeps its own reference */
	/* OSSL_PARAM wants a writable string; keep the literal const */
	if (ctx == NULL ||
	    (size_t)snprintf(dname, sizeof(dname), "%s", digest_name(alg)) >= sizeof(dname))
		goto fail;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, dname, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_CTX_set_params(ctx, params))
		goto fail;
	return ctx;
fail:
	EVP_MAC_CTX_free(ctx);
	return NULL;
}

/* this thread's context for alg, or NULL (then the caller makes its own) */
static EVP_MAC_CTX *
mac_cached(hmac_alg alg)
{
	mac_cache *c;

	(void)pthread_once(&cache_once, cache_init);
	if (!cache_ok || (unsigned)alg > HMAC_SHA512)
		return NULL;
	c = pthread_getspecific(cache_key);
	if (c == NULL) {
		c = OPENSSL_zalloc(sizeof(*c));
		if (c == NULL || pthread_setspecific(cache_key, c) != 0) {
			OPENSSL_free(c);
			return NULL;
		}
	}
	if (c->ctx[alg] == NULL)
		c->ctx[alg] = mac_new(alg);
	return c->ctx[alg];
}

int
hmac_compute(hmac_alg alg, const unsigned char *key, size_t key_len, const hmac_part *parts,
	     size_t n, unsigned char out[HMAC_MAX_LEN])
{
	static const unsigned char empty_key[1];
	EVP_MAC_CTX *ctx = mac_cached(alg), *own = NULL;
	size_t outl = 0;
	int rc = -1;

	if (ctx == NULL && (ctx = own = mac_new(alg)) == NULL)
		goto out;
	/* an empty key is legal HMAC; OpenSSL wants a non-NULL pointer */
	if (!EVP_MAC_init(ctx, key_len > 0 ? key : empty_key, key_len, NULL))
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
	EVP_MAC_CTX_free(own);
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
