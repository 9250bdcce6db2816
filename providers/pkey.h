/* SPDX-License-Identifier: ISC */
/*
 * pkey.h - the asymmetric schemes' shared pieces: the provider's public
 * keys and the certificate authorities an endpoint trusts, loaded once at
 * start, and the checks built on them
 *
 * For providers/<name>.c only.  Keys come from files the operator keeps
 * (key_file: a JWK, Plaid's {"key": JWK} answer or a JWKS {"keys": [...]};
 * ca_file: PEM certificates), never from the network on the request path.
 * A pkeys handle is immutable once loaded, so the request threads share it;
 * only its memo of PEM chains verified before (pkeys_verify_chain_pem:
 * a chain's leaf key, for the time the whole chain is valid) changes, under
 * its own lock.
 * OpenSSL does the cryptography (EVP, X509_STORE); nothing here logs.
 */
#ifndef HOOKINBOX_PKEY_H
#define HOOKINBOX_PKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"
#include "jscan.h"
#include "sign.h"
#include "verify.h"

typedef struct pkeys pkeys;

/* digests the schemes sign with */
typedef enum pkey_alg {
	PKEY_ES256, /* ECDSA P-256 with SHA-256; the signature r || s, 64 bytes (JWS) */
	PKEY_RS256, /* RSASSA-PKCS1-v1_5 with SHA-256 */
	PKEY_RS1    /* RSASSA-PKCS1-v1_5 with SHA-1 (SNS SignatureVersion 1) */
} pkey_alg;

pkeys *pkeys_new(void);
/* accepts NULL */
void pkeys_free(pkeys *k);

/*
 * Add the JWKs of text (a JWK, {"key": JWK} or {"keys": [JWK, ...]}):
 * EC P-256 and RSA public keys with a "kid"; a key whose "expired_at" is
 * set (Plaid's rotation) and a key of another type are skipped.  Returns
 * the number added, or -1 with a message in errbuf for text that is not
 * such JSON.
 */
int pkeys_add_jwks(pkeys *k, const char *text, size_t len, char *errbuf, size_t errlen);
/* read path whole and add its JWKs; 0 when at least one was added, else -1 and errbuf */
int pkeys_load_jwks_file(pkeys *k, const char *path, char *errbuf, size_t errlen);
/* the certificates of the PEM file at path become the trusted roots; 0, or -1 and errbuf */
int pkeys_load_ca_file(pkeys *k, const char *path, char *errbuf, size_t errlen);
size_t pkeys_count(const pkeys *k);

/* does key kid of k verify sig over msg with alg? false when there is no such key */
bool pkeys_verify_kid(const pkeys *k, const char *kid, size_t kidlen, pkey_alg alg,
		      const unsigned char *msg, size_t msglen, const unsigned char *sig,
		      size_t siglen);

/*
 * Verify the DER certificate chain der[0..n) (leaf first, as JWS x5c
 * carries it) or the PEM text (leaf first, then any intermediates) against
 * k's roots at time now; the leaf's public key verifies sig over msg with
 * alg.  0 when both hold, -1 with a static *why otherwise.
 */
int pkeys_verify_chain_der(const pkeys *k, const unsigned char *const *der, const size_t *derlen,
			   size_t n, int64_t now, pkey_alg alg, const unsigned char *msg,
			   size_t msglen, const unsigned char *sig, size_t siglen,
			   const char **why);
/*
 * As pkeys_verify_chain_der, and certificate i of the chain must carry the
 * extension oids[i] (dotted text; NULL: any), as Apple's verifier demands
 * its marker extensions of the leaf and the intermediate.
 */
int pkeys_verify_chain_oids(const pkeys *k, const unsigned char *const *der, const size_t *derlen,
			    size_t n, const char *const *oids, int64_t now, pkey_alg alg,
			    const unsigned char *msg, size_t msglen, const unsigned char *sig,
			    size_t siglen, const char **why);
int pkeys_verify_chain_pem(const pkeys *k, const char *pem, size_t pemlen, int64_t now,
			   pkey_alg alg, const unsigned char *msg, size_t msglen,
			   const unsigned char *sig, size_t siglen, const char **why);

/* unpadded base64url (RFC 4648 section 5); the length, or -1 */
long b64url_decode(const char *in, size_t len, unsigned char *out, size_t outcap);
/* out needs 4 * ((len + 2) / 3) + 1 bytes; NUL-terminated */
void b64url_encode(const unsigned char *in, size_t len, char *out);

/*
 * A compact JWS "header.payload.signature" split and decoded: header and
 * payload are JSON objects (jscan values over the decoded text, which the
 * jws owns).  jws_parse returns 0, or -1 for a token that is not one.
 */
typedef struct jws {
	char *token; /* a copy of the token: signed_part points into it */
	char *header_text, *payload_text;
	size_t header_len, payload_len;
	jscan_value header, payload;
	const char *signed_part; /* "header.payload" as sent: what is signed */
	size_t signed_len;
	unsigned char sig[512];
	size_t sig_len;
} jws;

#define JWS_MAX 16384 /* a longer token is malformed */

int jws_parse(const char *tok, size_t len, jws *out) __attribute__((warn_unused_result));
void jws_release(jws *j);
/* the header's or the payload's string member name, unescaped (caller frees); NULL if not */
char *jws_string(const jscan_value *o, const char *name);
/* an integer member (seconds); -1 when absent or not a small integer */
int jws_int(const jscan_value *o, const char *name, int64_t *out);
/* does the JWS signature (alg as named by the header) verify with k's key of the header's kid? */
bool jws_verify_kid(const pkeys *k, const jws *j, pkey_alg alg);

/*
 * Signing, for hookinbox-send: the secret line "[label ...] <base64 of a
 * PKCS#8 DER private key>" (openssl pkcs8 -topk8 -nocrypt -outform DER).
 * The label words before the key are the provider's (a kid, a certificate
 * URL).  pkey_sign signs msg with alg; the signature (ES256: r || s) is
 * malloc'd.  Both return 0, or -1 with a message in errbuf.
 */
typedef struct pkey_secret {
	char *words[4]; /* the label words, NULL past the last */
	void *key;	/* EVP_PKEY */
} pkey_secret;

int pkey_secret_parse(const unsigned char *s, size_t len, pkey_secret *out, char *errbuf,
		      size_t errlen);
void pkey_secret_release(pkey_secret *ps);
int pkey_sign(const pkey_secret *ps, pkey_alg alg, const unsigned char *msg, size_t msglen,
	      unsigned char **sig, size_t *siglen, char *errbuf, size_t errlen);
/* a compact JWS of header and payload JSON signed with ps (caller frees); NULL and errbuf */
char *jws_sign(const pkey_secret *ps, pkey_alg alg, const char *header, const char *payload,
	       char *errbuf, size_t errlen);

/*
 * The bearer-JWT class (jwt.c: Plaid, Pub/Sub): one header carrying a
 * compact JWS ([prefix]<token>) whose header names alg and a kid of the
 * endpoint's keys (ep->keys, loaded at start).  Past the signature, the
 * provider's claims() checks the payload (the window, the body's digest,
 * the audience) and passes or fails *res.
 */
typedef struct jwt_scheme {
	const char *header;
	const char *prefix; /* "Bearer "; NULL for none */
	const char *missing;
	pkey_alg alg;
	const char *alg_name; /* the header's "alg": "ES256", "RS256" */
	int (*claims)(const provider_endpoint *ep, const request_view *req, const jws *j,
		      verify_result *res);
} jwt_scheme;

int scheme_verify_jwt(const jwt_scheme *sc, const provider_endpoint *ep, const request_view *req,
		      verify_result *res);
/*
 * hookinbox-send: the header carrying a JWS of payload, signed with the
 * secret "<kid> <base64 PKCS#8 DER>" (pkey_secret); 0, or -1 and errbuf
 */
int scheme_sign_jwt(const jwt_scheme *sc, const sign_input *in, const char *payload,
		    sign_output *out, char *errbuf, size_t errlen);

/*
 * The RSA-with-the-provider's-certificate class (certsig.c: PayPal, SNS).
 * The certificate's URL, sent with each delivery, must be on the
 * provider's pinned hosts (url_ok); the certificate is read from the
 * endpoint's cert_cache (the file <cert_cache>/<hex SHA-256 of the URL>.pem,
 * leaf first), never fetched here, and must chain to ca_file's roots.  A
 * certificate not in the cache is VERIFY_UNAVAILABLE (503: the provider
 * retries) and its URL is appended to <cert_cache>/wanted (at most 64 KB)
 * for hookinbox-fetch-certs to fetch off the request path.
 */
typedef struct cert_scheme {
	bool (*url_ok)(const char *url, size_t len);
} cert_scheme;

/* the URL's cache file name: "<hex sha256>.pem" (70 bytes with the NUL) */
#define CERT_FILE_LEN 70
int cert_file_name(const char *url, size_t len, char name[CERT_FILE_LEN]);

int scheme_verify_cert(const cert_scheme *sc, const provider_endpoint *ep, const request_view *req,
		       const char *url, size_t urllen, pkey_alg alg, const unsigned char *msg,
		       size_t msglen, const unsigned char *sig, size_t siglen, size_t secret_index,
		       verify_result *res);
/* what cert_cache and ca_file must be for the class (provider_ops.check) */
const char *scheme_check_cert(const provider_endpoint *ep);
/* load ca_file's roots (provider_ops.load) */
int scheme_load_cert(provider_endpoint *ep, char *errbuf, size_t errlen);
/*
 * "https://<host><path>" with host one of hosts (exact) and path starting
 * with path_prefix, of URL characters only (no port, user, query or "..")
 */
bool cert_url_pinned(const char *url, size_t len, const char *const *hosts,
		     const char *path_prefix);

/*
 * sns.c: the string an SNS message's Signature covers (malloc'd, *len) for
 * its Type; 0, or -1 for a body that is not such a message (unit tests)
 */
int sns_canonical(const unsigned char *body, size_t blen, char **out, size_t *len);

#endif
