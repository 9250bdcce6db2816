/* SPDX-License-Identifier: ISC */
/*
 * ecdsa.c - ECDSA P-256 with SHA-256 through OpenSSL's EVP_PKEY interface
 *
 * The signature is checked by OpenSSL as it is (DER, strict): a signature
 * with trailing bytes or a non-minimal encoding does not verify.  Nothing
 * secret is compared here: a public-key check has no MAC to compare.
 */
#include "ecdsa.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <pthread.h>
#include <string.h>

#include "pksign.h"

/* a SubjectPublicKeyInfo longer than this is not cached (a P-256 one is 91 bytes) */
#define CACHE_DER_MAX 128
#define CACHE_SLOTS 32

struct ecdsa_key {
	EVP_PKEY *pkey;
};

/*
 * Reading a key costs OpenSSL 3's decoders about twice the verification
 * itself, and an endpoint's keys are the same on every request: the keys
 * read are kept for the life of the process, found by their DER bytes
 * (public keys: nothing secret is kept), at most CACHE_SLOTS of them.
 */
static struct {
	unsigned char der[CACHE_DER_MAX];
	size_t len;
	EVP_PKEY *pkey;
} cache[CACHE_SLOTS];
static size_t cached;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* a new reference to der's cached key, or NULL */
static EVP_PKEY *
cache_find(const unsigned char *der, size_t len)
{
	EVP_PKEY *pkey = NULL;

	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < cached && pkey == NULL; i++)
		if (cache[i].len == len && memcmp(cache[i].der, der, len) == 0 &&
		    EVP_PKEY_up_ref(cache[i].pkey) == 1)
			pkey = cache[i].pkey;
	pthread_mutex_unlock(&cache_lock);
	return pkey;
}

static void
cache_add(const unsigned char *der, size_t len, EVP_PKEY *pkey)
{
	if (len > CACHE_DER_MAX)
		return;
	pthread_mutex_lock(&cache_lock);
	if (cached < CACHE_SLOTS && EVP_PKEY_up_ref(pkey) == 1) {
		memcpy(cache[cached].der, der, len);
		cache[cached].len = len;
		cache[cached].pkey = pkey;
		cached++;
	}
	pthread_mutex_unlock(&cache_lock);
}

/* is pkey an EC key on P-256? */
static bool
on_p256(const EVP_PKEY *pkey)
{
	char curve[32];
	size_t n = 0;

	if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC)
		return false;
	if (EVP_PKEY_get_utf8_string_param(pkey, "group", curve, sizeof(curve), &n) != 1)
		return false;
	return strcmp(curve, "prime256v1") == 0 || strcmp(curve, "P-256") == 0;
}

ecdsa_key *
ecdsa_public_from_der(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	EVP_PKEY *pkey;
	ecdsa_key *k;

	if (len == 0 || len > 1024)
		return NULL;
	pkey = cache_find(der, len);
	if (pkey == NULL) {
		pkey = d2i_PUBKEY(NULL, &p, (long)len);
		if (pkey == NULL)
			return NULL;
		if (p != der + len || !on_p256(pkey)) {
			EVP_PKEY_free(pkey);
			return NULL;
		}
		cache_add(der, len, pkey);
	}
	k = OPENSSL_zalloc(sizeof(*k));
	if (k == NULL) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	k->pkey = pkey;
	return k;
}

void
ecdsa_key_free(ecdsa_key *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pkey);
	OPENSSL_free(k);
}

bool
ecdsa_verify(const ecdsa_key *k, const void *msg, size_t len, const unsigned char *sig,
	     size_t siglen)
{
	if (siglen == 0 || siglen > ECDSA_SIG_MAX)
		return false;
	return pksign_verify(k->pkey, EVP_sha256(), msg, len, sig, siglen);
}

int
ecdsa_sign_der(const unsigned char *der, size_t derlen, const void *msg, size_t len,
	       unsigned char sig[ECDSA_SIG_MAX], size_t *siglen)
{
	const unsigned char *p = der;
	EVP_PKEY *pkey;
	size_t n = ECDSA_SIG_MAX;
	int rc = -1;

	if (derlen == 0 || derlen > 4096)
		return -1;
	pkey = d2i_AutoPrivateKey(NULL, &p, (long)derlen);
	if (pkey == NULL)
		return -1;
	if (p != der + derlen || !on_p256(pkey) ||
	    pksign_sign(pkey, EVP_sha256(), msg, len, sig, &n) != 0)
		goto out;
	*siglen = n;
	rc = 0;
out:
	EVP_PKEY_free(pkey);
	return rc;
}
