/* SPDX-License-Identifier: ISC */
/*
 * verify.h - provider signature verification over the exact raw body
 *
 * One entry point for every provider scheme.  Signatures are compared in
 * constant time (CRYPTO_memcmp after a length check); every secret of the
 * endpoint is tried (rotation) and every signature entry the header carries.
 * Timestamped schemes reject timestamps outside the replay window in both
 * directions (past and future).
 */
#ifndef HOOKINBOX_VERIFY_H
#define HOOKINBOX_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"

/*
 * The request as the verifier and the envelope extractor see it.
 * header() returns the value of an HTTP request header, looked up by its
 * name as the provider documents it ("Stripe-Signature"), case-insensitive,
 * or NULL when absent.  The FastCGI glue maps it to HTTP_STRIPE_SIGNATURE.
 */
typedef struct request_view {
	const char *(*header)(const void *ctx, const char *name);
	const void *ctx;
	const unsigned char *body; /* exact bytes received, not NUL-terminated */
	size_t body_len;
	const char *query; /* QUERY_STRING or NULL (Twilio signs the URL) */
	int64_t now;	   /* unix seconds (clock_now()) */
} request_view;

typedef enum verify_status {
	VERIFY_OK = 0,
	VERIFY_UNSIGNED,   /* signature header(s) missing: 401 */
	VERIFY_MALFORMED,  /* header present but unparseable: 400 */
	VERIFY_MISMATCH,   /* no secret and no entry matched: 401 */
	VERIFY_STALE,	   /* timestamp older than the window: 401 */
	VERIFY_FUTURE,	   /* timestamp further ahead than the window: 401 */
	VERIFY_UNAVAILABLE /* a key the check needs is not at hand yet (a signing
			    * certificate not cached): 503, the provider retries */
} verify_status;

typedef struct verify_result {
	verify_status status;
	int secret_index;   /* which secret matched (0-based), -1 if none */
	const char *reason; /* static text for the log: "signature mismatch", ... */
	/*
	 * When the signature does not cover the raw body (Twilio's form
	 * callbacks: the URL and the decoded, sorted parameters), SHA-256 of
	 * what it covers, so that the replay defence compares what was signed:
	 * reordered, repeated or re-encoded parameters hash the same.
	 */
	bool has_signed_sha256;
	unsigned char signed_sha256[32];
} verify_result;

/* HTTP status to answer for a status other than VERIFY_OK (401, 400 or 503) */
int verify_http_status(verify_status st);

/*
 * Check the request against ep's scheme and secrets.  Fills *res and
 * returns 0 when the request is authentic, -1 otherwise.  Never logs.
 */
int verify_request(const provider_endpoint *ep, const request_view *req, verify_result *res);

#endif
