/* SPDX-License-Identifier: ISC */
/*
 * ecdsa.h - ECDSA P-256 with SHA-256 over keys as providers show them
 *
 * Keys are DER: a public key is a SubjectPublicKeyInfo (what SendGrid
 * shows, base64-decoded), a private key PKCS#8 (for the signer).  Anything
 * else, another curve included, is refused when the key is read.  With
 * hmac.c and ed25519.c one of the few modules that include OpenSSL.
 * Nothing here logs; the private key's bytes stay the caller's.
 */
#ifndef HOOKINBOX_ECDSA_H
#define HOOKINBOX_ECDSA_H

#include <stdbool.h>
#include <stddef.h>

/* a DER ECDSA-Sig-Value of P-256 is at most this long */
#define ECDSA_SIG_MAX 72

typedef struct ecdsa_key ecdsa_key;

/*
 * A P-256 public key from its DER SubjectPublicKeyInfo; NULL when der is
 * not one (a truncated or trailing byte included).  The caller frees it
 * with ecdsa_key_free.  The keys read are cached for the life of the
 * process (a few dozen, found by their bytes), so that an endpoint's key is
 * decoded once.  Thread-safe.
 */
ecdsa_key *ecdsa_public_from_der(const unsigned char *der, size_t len);
void ecdsa_key_free(ecdsa_key *k);

/* true only for a valid DER signature of SHA-256(msg) by k */
bool ecdsa_verify(const ecdsa_key *k, const void *msg, size_t len, const unsigned char *sig,
		  size_t siglen);

/*
 * Sign SHA-256(msg) with a P-256 private key given as DER PKCS#8; writes a
 * DER signature of *siglen bytes (at most ECDSA_SIG_MAX).  0, or -1 when
 * der is not such a key.
 */
int ecdsa_sign_der(const unsigned char *der, size_t derlen, const void *msg, size_t len,
		   unsigned char sig[ECDSA_SIG_MAX], size_t *siglen)
	__attribute__((warn_unused_result));

#endif
