/* SPDX-License-Identifier: ISC */
/*
 * pksign.h - one-shot public-key signatures through OpenSSL's EVP_PKEY,
 * for the modules that hold such keys (ecdsa.c, ed25519.c,
 * providers/pkey.c)
 *
 * md is the digest (EVP_sha256()), or NULL for a scheme that fixes its
 * own (Ed25519).  The key is borrowed.
 */
#ifndef HOOKINBOX_PKSIGN_H
#define HOOKINBOX_PKSIGN_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>

/* whether sig[0..siglen) is key's signature of msg[0..len) */
bool pksign_verify(EVP_PKEY *key, const EVP_MD *md, const void *msg, size_t len,
		   const unsigned char *sig, size_t siglen);

/*
 * Sign msg[0..len) into sig: *siglen is sig's room, then the signature's
 * length; with sig NULL only the length (the most it can be) is set.
 * Returns 0 or -1.
 */
int pksign_sign(EVP_PKEY *key, const EVP_MD *md, const void *msg, size_t len, unsigned char *sig,
		size_t *siglen) __attribute__((warn_unused_result));

#endif
