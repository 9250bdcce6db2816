/*
 * hmac.c - the MAC, digest, encoding and Ed25519 primitives hookinbox uses
 *
 * OpenSSL 3 EVP interfaces only (EVP_MAC, EVP_Digest, EVP_PKEY raw keys);
 * the deprecated HMAC_CTX API is not used.
 */
#include "hmac.h"

#include <limits.h>
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
	strcpy(dname, digest_name(alg));
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
sha256_digest(const void *data, size_t len, unsigned char out[SHA256_LEN])
{
	unsigned int outl = 0;

	if (!EVP_Digest(data, len, out, &outl, EVP_sha256(), NULL) || outl != SHA256_LEN)
		return -1;
	return 0;
}

int
sha256_parts(const hmac_part *parts, size_t n, unsigned char out[SHA256_LEN])
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

void
hex_encode(const unsigned char *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long
hex_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	if (len % 2 != 0 || len / 2 > outcap || len / 2 > LONG_MAX)
		return -1;
	for (size_t i = 0; i < len; i += 2) {
		int hi = hex_value(in[i]), lo = hex_value(in[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(len / 2);
}

void
base64_encode(const unsigned char *in, size_t len, char *out)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0, i = 0;

	/* done by hand: EVP_EncodeBlock takes an int length */
	for (; len - i >= 3; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = alphabet[v & 63];
	}
	if (len - i == 1) {
		unsigned v = (unsigned)in[i] << 16;

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (len - i == 2) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
base64_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	size_t pad = 0, outlen, o = 0;

	if (len % 4 != 0)
		return -1;
	if (len > 0 && in[len - 1] == '=')
		pad++;
	if (len > 1 && in[len - 2] == '=')
		pad++;
	outlen = len / 4 * 3 - pad;
	if (outlen > outcap || outlen > LONG_MAX)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		unsigned w;

		for (int k = 0; k < 4; k++) {
			if (i + (size_t)k >= len - pad)
				v[k] = 0; /* the padding at the very end */
			else if ((v[k] = b64_value(in[i + (size_t)k])) < 0)
				return -1;
		}
		w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
		if (o < outlen)
			out[o++] = (unsigned char)(w >> 16);
		if (o < outlen)
			out[o++] = (unsigned char)(w >> 8 & 0xff);
		if (o < outlen)
			out[o++] = (unsigned char)(w & 0xff);
	}
	return (long)outlen;
}

bool
ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	if (alen != blen)
		return false;
	if (alen == 0)
		return true;
	return CRYPTO_memcmp(a, b, alen) == 0;
}

bool
ed25519_verify(const unsigned char pub[ED25519_KEY_LEN], const void *msg, size_t len,
	       const unsigned char sig[ED25519_SIG_LEN])
{
	EVP_PKEY *pkey;
	EVP_MD_CTX *md = NULL;
	bool good = false;

	pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, ED25519_KEY_LEN);
	if (pkey == NULL)
		return false;
	md = EVP_MD_CTX_new();
	if (md == NULL)
		goto out;
	if (EVP_DigestVerifyInit(md, NULL, NULL, NULL, pkey) != 1)
		goto out;
	good = EVP_DigestVerify(md, sig, ED25519_SIG_LEN, msg, len) == 1;
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return good;
}

int
ed25519_sign(const unsigned char seed[ED25519_KEY_LEN], const void *msg, size_t len,
	     unsigned char sig[ED25519_SIG_LEN])
{
	EVP_PKEY *pkey;
	EVP_MD_CTX *md = NULL;
	size_t siglen = ED25519_SIG_LEN;
	int rc = -1;

	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, ED25519_KEY_LEN);
	if (pkey == NULL)
		return -1;
	md = EVP_MD_CTX_new();
	if (md == NULL)
		goto out;
	if (EVP_DigestSignInit(md, NULL, NULL, NULL, pkey) != 1)
		goto out;
	if (EVP_DigestSign(md, sig, &siglen, msg, len) != 1 || siglen != ED25519_SIG_LEN)
		goto out;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
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

void
secure_wipe(void *p, size_t len)
{
	if (p != NULL && len > 0)
		OPENSSL_cleanse(p, len);
}
