/* SPDX-License-Identifier: ISC */
/*
 * sign.h - the signature headers a provider would send with a body
 *
 * Used by contrib/hookinbox-send (to play a provider) and by the worker
 * (which signs what it delivers downstream with Standard Webhooks
 * headers).  The output verifies with verify.c for every provider.
 * No I/O, no logging; secret bytes are wiped from every temporary.
 */
#ifndef HOOKINBOX_SIGN_H
#define HOOKINBOX_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"

#define SIGN_MAX_HEADERS 6

typedef struct sign_input {
	provider provider;
	const hmac_conf *hmac;	     /* the generic hmac provider's settings; others ignore it */
	const unsigned char *secret; /* one secret as it appears in a secret file */
	size_t secret_len;
	const char *event_id;	   /* NULL: no id header; required for standard/svix */
	const char *event_type;	   /* NULL: no type header */
	int64_t timestamp;	   /* unix seconds, for timestamped schemes */
	const unsigned char *body; /* exact bytes that will be sent */
	size_t body_len;
	const char *url; /* the full URL requested, for providers that sign it */
	/*
	 * Headers the sender adds as they are ("Name: value"), which the
	 * hmac provider's signed_content may sign ({header:Name})
	 */
	const char *const *headers;
	size_t n_headers;
} sign_input;

typedef struct sign_header {
	const char *name; /* static text, or ep->hmac's header names */
	char *value;	  /* owned by the sign_output */
} sign_header;

typedef struct sign_output {
	sign_header h[SIGN_MAX_HEADERS];
	size_t n;
	/*
	 * A provider that signs inside the body (Adyen's items, Mailgun's
	 * signature object): the body to send instead of the payload, owned
	 * by the sign_output; NULL otherwise.
	 */
	unsigned char *body;
	size_t body_len;
} sign_output;

/*
 * Fill *out with the headers in->provider sends with the body, named as
 * the provider spells them: its signature, and the event id and type where
 * it sends them as headers (where it keeps them in the body they are not
 * used).  Each provider's sign() in providers/<name>.c says which.
 * Returns 0, or -1 with a message (never secret bytes) in errbuf.  The
 * caller releases *out with sign_release in every case.
 */
int sign_headers(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
	__attribute__((warn_unused_result));
/*
 * The headers the worker sends with each delivery to a route that has a
 * secret: Standard Webhooks (webhook-id, webhook-timestamp,
 * webhook-signature), which any Standard Webhooks receiver verifies.
 * As sign_headers, with in->provider not read.
 */
int sign_delivery_headers(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
	__attribute__((warn_unused_result));
void sign_release(sign_output *out);

/*
 * The URL to request with a JSON body for p: url itself, or for a provider
 * that signs JSON bodies through the URL, url with that parameter (Twilio:
 * "bodySHA256=<hex sha256 of body>" appended to its query).  The caller
 * frees the new string.
 */
char *sign_json_body_url(provider p, const char *url, const unsigned char *body, size_t len);
/* whether p sends urlencoded forms: a body that is not JSON is sent as one */
bool sign_form_bodies(provider p);
/* whether p's event id travels in the body, so a sender makes none up */
bool sign_id_in_body(provider p);

#endif
