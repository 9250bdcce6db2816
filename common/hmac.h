/* SPDX-License-Identifier: ISC */
/*
 * hmac.h - HMAC over a message given in pieces
 *
 * With sha256.h and ed25519.h one of the few modules that include OpenSSL
 * (as lighttpd keeps HMAC behind algo_hmac.[ch]).  Works on caller-owned
 * buffers and logs nothing; OpenSSL's context is kept per thread and
 * algorithm, made on first use and freed when the thread ends.
 */
#ifndef HOOKINBOX_HMAC_H
#define HOOKINBOX_HMAC_H

#include <stddef.h>

#include "msgpart.h"

#define HMAC_MAX_LEN 64 /* SHA-512 */

typedef enum hmac_alg { HMAC_SHA1, HMAC_SHA256, HMAC_SHA512 } hmac_alg;

/* one piece of a message that is MACed as the concatenation of all pieces */
typedef msg_part hmac_part;

/* digest length of alg in bytes (20, 32 or 64) */
size_t hmac_len(hmac_alg alg);

/*
 * HMAC over the concatenation of parts[0..n-1]; writes hmac_len(alg)
 * bytes to out (at least HMAC_MAX_LEN bytes).  Returns 0, or -1 when
 * OpenSSL fails (out is then wiped).
 */
int hmac_compute(hmac_alg alg, const unsigned char *key, size_t key_len, const hmac_part *parts,
		 size_t n, unsigned char out[HMAC_MAX_LEN]) __attribute__((warn_unused_result));

/*
 * The SHA-1 digest of key, the HMAC key Braintree derives from a private
 * key; 0, or -1 when OpenSSL fails.
 */
int hmac_sha1_key(const void *key, size_t len, unsigned char out[20])
	__attribute__((warn_unused_result));

#endif
