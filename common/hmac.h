/*
 * hmac.h - the MAC, digest, encoding and Ed25519 primitives hookinbox uses
 *
 * The only module that includes OpenSSL apart from secret.c (as lighttpd
 * keeps HMAC behind algo_hmac.[ch]).  Every function works on caller-owned
 * buffers; nothing here allocates except where a comment says so, and
 * nothing logs.
 */
#ifndef HOOKINBOX_HMAC_H
#define HOOKINBOX_HMAC_H

#include <stdbool.h>
#include <stddef.h>

#include "conf.h" /* hmac_alg */

#define HMAC_MAX_LEN 64		/* SHA-512 */
#define SHA256_LEN 32
#define ED25519_KEY_LEN 32
#define ED25519_SIG_LEN 64

/* one piece of a message that is MACed as the concatenation of all pieces */
typedef struct hmac_part {
	const void *data;
	size_t len;
} hmac_part;

/* digest length of alg in bytes (20, 32 or 64) */
size_t hmac_len(hmac_alg alg);

/*
 * HMAC over the concatenation of parts[0..n-1]; writes hmac_len(alg)
 * bytes to out (at least HMAC_MAX_LEN bytes).  Returns 0, or -1 when
 * OpenSSL fails (out is then wiped).
 */
int hmac_compute(hmac_alg alg, const unsigned char *key, size_t key_len, const hmac_part *parts,
		 size_t n, unsigned char out[HMAC_MAX_LEN]) __attribute__((warn_unused_result));

/* SHA-256 of data; returns 0 or -1 */
int sha256_digest(const void *data, size_t len, unsigned char out[SHA256_LEN])
	__attribute__((warn_unused_result));
/* SHA-256 of the concatenation of parts[0..n-1]; returns 0 or -1 */
int sha256_parts(const hmac_part *parts, size_t n, unsigned char out[SHA256_LEN])
	__attribute__((warn_unused_result));

/*
 * Lower-case hex of in into out, which must hold 2 * len + 1 bytes;
 * NUL-terminated.
 */
void hex_encode(const unsigned char *in, size_t len, char *out);

/*
 * Decode exactly len hex digits (either case) at in into out (len / 2
 * bytes).  Returns the number of bytes, or -1 for an odd length, a
 * non-hex digit or more than outcap bytes.
 */
long hex_decode(const char *in, size_t len, unsigned char *out, size_t outcap);

/* size of the buffer base64_encode needs for len bytes, including the NUL */
#define BASE64_ENCODED_SIZE(len) ((((len) + 2) / 3) * 4 + 1)
/* upper bound of the decoded size of len base64 characters */
#define BASE64_DECODED_MAX(len) ((((len) + 3) / 4) * 3)

/* padded standard base64 of in into out (BASE64_ENCODED_SIZE(len) bytes); NUL-terminated */
void base64_encode(const unsigned char *in, size_t len, char *out);

/*
 * Decode standard, padded base64 (len a multiple of 4, "=" only at the
 * end, no whitespace) into out.  Returns the number of bytes, padding
 * taken into account, or -1 for invalid input or more than outcap bytes.
 */
long base64_decode(const char *in, size_t len, unsigned char *out, size_t outcap);

/*
 * Constant-time comparison: true when the lengths are equal and the bytes
 * are too (CRYPTO_memcmp after a length check).  The lengths are not
 * secret.
 */
bool ct_equal(const void *a, size_t alen, const void *b, size_t blen);

/*
 * Ed25519 (RFC 8032, raw 32-byte keys) as Standard Webhooks v1a uses it.
 * ed25519_verify returns true only for a valid signature.
 * ed25519_sign writes a 64-byte signature made with the 32-byte private
 * seed; returns 0 or -1.
 */
bool ed25519_verify(const unsigned char pub[ED25519_KEY_LEN], const void *msg, size_t len,
		    const unsigned char sig[ED25519_SIG_LEN]);
int ed25519_sign(const unsigned char seed[ED25519_KEY_LEN], const void *msg, size_t len,
		 unsigned char sig[ED25519_SIG_LEN]) __attribute__((warn_unused_result));
/* the public key of a private seed; returns 0 or -1 */
int ed25519_public(const unsigned char seed[ED25519_KEY_LEN], unsigned char pub[ED25519_KEY_LEN])
	__attribute__((warn_unused_result));

/* wipe a buffer that held secret material (OPENSSL_cleanse) */
void secure_wipe(void *p, size_t len);

#endif
