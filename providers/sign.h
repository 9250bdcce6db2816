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

#include <stddef.h>
#include <stdint.h>

#include "conf.h"

#define SIGN_MAX_HEADERS 6

typedef struct sign_input {
	provider provider;
	const hmac_conf *hmac;	      /* PROVIDER_HMAC only; NULL otherwise */
	const unsigned char *secret; /* one secret as it appears in a secret file */
	size_t secret_len;
	const char *event_id;	      /* NULL: no id header; required for standard/svix */
	const char *event_type;	      /* NULL: no type header */
	int64_t timestamp;	      /* unix seconds, for timestamped schemes */
	const unsigned char *body;    /* exact bytes that will be sent */
	size_t body_len;
	const char *url;	      /* twilio: the full URL requested (see below) */
} sign_input;

typedef struct sign_header {
	const char *name; /* static text, or ep->hmac's header names */
	char *value;	  /* owned by the sign_output */
} sign_header;

typedef struct sign_output {
	sign_header h[SIGN_MAX_HEADERS];
	size_t n;
} sign_output;

/*
 * Fill *out with the headers for in->provider (HTTP header names as the
 * providers spell them):
 *   stripe   Stripe-Signature: t=<ts>,v1=<hex>   (the event id lives in the body)
 *   github   X-Hub-Signature-256, X-GitHub-Delivery (id), X-GitHub-Event (type)
 *   standard webhook-id, webhook-timestamp, webhook-signature: v1,<b64>
 *            (secret "whsec_<b64>"; a "whsk_<b64>" Ed25519 key gives v1a,<b64>)
 *   svix     the same with svix-id, svix-timestamp, svix-signature
 *   hmac     hmac->header: [prefix]<hex|b64>, hmac->id_header, hmac->type_header
 *   shopify  X-Shopify-Hmac-Sha256, X-Shopify-Webhook-Id, X-Shopify-Topic
 *   slack    X-Slack-Request-Timestamp, X-Slack-Signature: v0=<hex>
 *   paddle   Paddle-Signature: ts=<ts>;h1=<hex>
 *   twilio   X-Twilio-Signature, I-Twilio-Idempotency-Token (id); a url
 *            carrying bodySHA256 (see sign_twilio_body_url) signs the URL
 *            only, otherwise the body is form parameters and is signed too
 *   gitlab   X-Gitlab-Token (the secret itself), X-Gitlab-Event-UUID, X-Gitlab-Event
 * Returns 0, or -1 with a message (never secret bytes) in errbuf.  The
 * caller releases *out with sign_release in every case.
 */
int sign_headers(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
	__attribute__((warn_unused_result));
void sign_release(sign_output *out);

/*
 * Twilio JSON bodies (providers/twilio.c): url with "bodySHA256=<hex sha256 of body>" appended
 * to its query ('?' or '&').  The caller frees the new string.
 */
char *sign_twilio_body_url(const char *url, const unsigned char *body, size_t len);

#endif
