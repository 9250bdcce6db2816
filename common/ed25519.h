/* SPDX-License-Identifier: ISC */
/*
 * ed25519.h - Ed25519 (RFC 8032, raw 32-byte keys) as Standard Webhooks
 * v1a uses it
 */
#ifndef HOOKINBOX_ED25519_H
#define HOOKINBOX_ED25519_H

#include <stdbool.h>
#include <stddef.h>

#define ED25519_KEY_LEN 32
#define ED25519_SIG_LEN 64

/* true only for a valid signature of msg by pub */
bool ed25519_verify(const unsigned char pub[ED25519_KEY_LEN], const void *msg, size_t len,
		    const unsigned char sig[ED25519_SIG_LEN]);
/* a 64-byte signature made with the 32-byte private seed; returns 0 or -1 */
int ed25519_sign(const unsigned char seed[ED25519_KEY_LEN], const void *msg, size_t len,
		 unsigned char sig[ED25519_SIG_LEN]) __attribute__((warn_unused_result));
/* the public key of a private seed; returns 0 or -1 */
int ed25519_public(const unsigned char seed[ED25519_KEY_LEN], unsigned char pub[ED25519_KEY_LEN])
	__attribute__((warn_unused_result));

#endif
