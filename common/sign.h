/*
 * sign.h - the signature headers a provider would send with a body
 *
 * Used by contrib/hookinbox-send (to play a provider) and by the worker
 * (which signs what it delivers downstream with Standard Webhooks
 * headers).  The output verifies with fcgi/verify.c for every provider.
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
 * Twilio JSON bodies: url with "bodySHA256=<hex sha256 of body>" appended
 * to its query ('?' or '&').  The caller frees the new string.
 */
char *sign_twilio_body_url(const char *url, const unsigned char *body, size_t len);

typedef enum standard_key_kind {
	STANDARD_KEY_NONE,   /* unusable: bad base64 after a prefix, bad length */
	STANDARD_KEY_HMAC,   /* *key is the HMAC key */
	STANDARD_KEY_ED25519 /* *key is a 32-byte Ed25519 public key */
} standard_key_kind;

typedef enum standard_key_use {
	STANDARD_KEY_VERIFY, /* whsk_ private keys give their public half */
	STANDARD_KEY_SIGN    /* whsk_ private keys give their 32-byte seed */
} standard_key_use;

/*
 * Decode one Standard Webhooks secret as the SDKs do: "whsec_<b64>" (or
 * bare base64) is the HMAC key; bare text that is not base64 is used as
 * raw bytes; "whpk_<b64>" is an Ed25519 public key, "whsk_<b64>" a private
 * key (32-byte seed, or seed || public as libsodium stores it).
 * *key is xmalloc'd with *kcap bytes of which the first *klen are the key;
 * the caller wipes *kcap bytes (OPENSSL_cleanse) and frees it.
 */
standard_key_kind standard_key_decode(const unsigned char *s, size_t len, standard_key_use use,
				      unsigned char **key, size_t *klen, size_t *kcap);

#endif
