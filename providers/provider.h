/* SPDX-License-Identifier: ISC */
/*
 * provider.h - what a webhook provider is and does, one row per provider
 *
 * As curl keeps each TLS backend in one file filling one struct Curl_ssl
 * (lib/vtls/vtls_int.h) and dispatches only in vtls.c, each provider lives
 * in providers/<name>.c and fills one provider_ops; provider.c holds the
 * table, and verify.c, envelope.c and sign.c are the only dispatchers.
 *
 * Adding a provider: its file (providers/<name>.c), an id below and a row
 * in provider.c's table, its tests, and its rows in the docs
 * (docs/providers.md, README.md) and in sql/purge.sql's replay horizons.
 * A scheme like Stripe's or Paddle's with its envelope in plain body fields
 * is only data (stripe.c: a timestamped_scheme and env_body_fields), and so
 * is one that is an HMAC of the body in one header (razorpay.c: a body_mac).
 *
 * This header includes nothing of ours: endpoint.h includes it for the id
 * type, and the operations take the types of endpoint.h, verify.h,
 * envelope.h and sign.h by their struct tags.
 */
#ifndef HOOKINBOX_PROVIDER_H
#define HOOKINBOX_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the ids, in the order the configuration's error message lists them */
typedef enum provider {
	PROVIDER_STRIPE,
	PROVIDER_GITHUB,
	PROVIDER_STANDARD, /* Standard Webhooks; also Svix's svix-* header names */
	PROVIDER_SVIX,
	PROVIDER_HMAC, /* generic HMAC, configured per endpoint */
	PROVIDER_SHOPIFY,
	PROVIDER_SLACK,
	PROVIDER_PADDLE,
	PROVIDER_TWILIO,
	PROVIDER_GITLAB,
	PROVIDER_SQUARE,
	PROVIDER_ADYEN_PLATFORM,
	PROVIDER_LINEAR,
	PROVIDER_MUX,
	PROVIDER_WORKOS,
	PROVIDER_RAZORPAY,
	PROVIDER_DISCORD,
	PROVIDER_ZOOM,
	PROVIDER_TELNYX,
	PROVIDER_INTERCOM,
	PROVIDER_BITBUCKET,
	PROVIDER_TYPEFORM,
	PROVIDER_CALENDLY,
	PROVIDER_WOOCOMMERCE,
	PROVIDER_SENTRY,
	PROVIDER_PAGERDUTY,
	PROVIDER_VERCEL,
	PROVIDER_CHECKOUT,
	PROVIDER_LEMONSQUEEZY,
	PROVIDER_NOTION,
	PROVIDER_POSTMARK,
	PROVIDER_CHARGEBEE,
	PROVIDER_BOX,
	PROVIDER_WEBFLOW,
	PROVIDER_GOCARDLESS,
	PROVIDER_META,
	PROVIDER_CLERK,
	PROVIDER_RESEND,
	PROVIDER_OKTA,
	PROVIDER_ZENDESK,
	PROVIDER_ADYEN,
	PROVIDER_SENDGRID,
	PROVIDER_HUBSPOT,
	PROVIDER_MAILGUN,
	PROVIDER_BRAINTREE,
	PROVIDER_TRELLO,
	PROVIDER_MANDRILL,
	PROVIDER_TWITTER,
	PROVIDER_DROPBOX,
	PROVIDER_ASANA,
	PROVIDER_TWITCH,
	PROVIDER_XERO,
	PROVIDER_DOCUSIGN,
	/* the asymmetric schemes (pkey.h) */
	PROVIDER_PLAID,
	PROVIDER_PUBSUB,
	PROVIDER_PAYPAL,
	PROVIDER_SNS,
	PROVIDER_APPLE,
	PROVIDER_GRAPH,
	PROVIDER__COUNT
} provider;

struct provider_endpoint;
struct request_view;
struct verify_result;
struct envelope;
struct sign_input;
struct sign_output;
struct timestamped_scheme;
struct env_body_fields;
struct body_mac;
struct batch_rows;
struct stamp_mac;
struct v0_scheme;
struct ed25519_scheme;
struct token_scheme;
struct handshake_answer;

/* what the replay defence of an unsigned delivery id compares */
typedef enum provider_replay {
	REPLAY_BODY,  /* SHA-256 of the raw body */
	REPLAY_SIGNED /* what verify reports it checked, when that is not the raw body */
} provider_replay;

typedef struct provider_ops {
	const char *name;  /* "stripe": the configuration's provider = value */
	int64_t tolerance; /* the SDK's replay window in seconds; 0: nothing timestamped */
	/*
	 * Request headers kept with the body (event metadata, never a
	 * credential); NULL-terminated.  Every provider's are kept on every
	 * endpoint, with provider_common_headers.
	 */
	const char *const *headers;
	/*
	 * Whether the delivery id is covered by the signature (or bounded by a
	 * signed timestamp).  When it is not, a captured body re-sent under a
	 * fresh id must count as a duplicate: the body is deduplicated too.
	 */
	bool (*id_signed)(const struct provider_endpoint *ep);
	/*
	 * Whether its events carry a version (a number or time to order them
	 * by): an ordered route needs one (conf.c refuses order otherwise).
	 */
	bool (*sends_version)(const struct provider_endpoint *ep);
	provider_replay replay;
	/*
	 * What the endpoint must configure besides secret_file: NULL when
	 * complete, else a static text for "endpoint \"NAME\": <text>".
	 */
	const char *(*check)(const struct provider_endpoint *ep);
	/* verify.h's verify_request for this scheme; secrets are present */
	int (*verify)(const struct provider_endpoint *ep, const struct request_view *req,
		      struct verify_result *res);
	/* envelope.h's envelope_extract; *env is zeroed, *reason "bad envelope" */
	int (*extract)(const struct provider_endpoint *ep, const struct request_view *req,
		       struct envelope *env, const char **reason);
	/* sign.h's sign_headers for this provider; out->n is 0 */
	int (*sign)(const struct sign_input *in, struct sign_output *out, char *errbuf,
		    size_t errlen);
	/*
	 * A verified request that checks the endpoint rather than delivering
	 * an event (Slack's url_verification, Discord's PING, Zoom's
	 * endpoint.url_validation), answered and never stored: envelope.h's
	 * envelope_handshake.  NULL: the provider has none.
	 */
	int (*handshake)(const struct provider_endpoint *ep, const struct request_view *req,
			 size_t secret_index, struct handshake_answer *ans, const char **reason);
	/*
	 * A request answered before its body is read or its signature
	 * checked, and never stored (Dropbox's GET challenge, Trello's HEAD,
	 * Asana's X-Hook-Secret POST): envelope.h's envelope_greeting.  NULL:
	 * the provider has none.
	 */
	int (*greeting)(const struct provider_endpoint *ep, const struct request_view *req,
			const char *method, struct handshake_answer *ans, const char **reason);
	/*
	 * Every answer has an empty body, and a refused signature is 401
	 * whatever is wrong with it (Xero's "intent to receive" contract).
	 */
	bool bare_answers;
	/*
	 * Load the keys or roots the endpoint's files hold into ep->keys, once
	 * at start (the asymmetric schemes, pkey.h): 0, or -1 with a message
	 * in errbuf.  NULL: nothing to load.
	 */
	int (*load)(struct provider_endpoint *ep, char *errbuf, size_t errlen);
	/*
	 * A scheme that is only data needs no functions: with verify and sign
	 * NULL, scheme.h's body_mac, stamp_mac, v0, ed25519 or token row (the
	 * one set) or else the timestamped scheme verifies and signs; with
	 * extract NULL, the body_mac row's fields, or the stamp_mac row's id
	 * header and the body fields of fields.h, or those body fields alone
	 * are extracted.
	 */
	/*
	 * What hookinbox-send asks of a provider (sign.h): whether it sends
	 * urlencoded forms (a body that is not JSON is sent as one), whether
	 * its event id travels in the body (no id is made up), and, for a
	 * provider that signs a JSON body through the URL (Twilio's
	 * bodySHA256), the URL to request; NULL: the URL itself.
	 */
	bool form_bodies;
	bool id_in_body;
	char *(*json_body_url)(const char *url, const unsigned char *body, size_t len);
	const struct timestamped_scheme *timestamped;
	const struct env_body_fields *fields;
	const struct body_mac *body_mac;
	/*
	 * A provider that sends several events in one request (Adyen,
	 * SendGrid, HubSpot): batch.h's row says where the events are and how
	 * each is read; each is stored as its own delivery, all in one
	 * transaction, and the request is answered once.  NULL: one event.
	 */
	const struct batch_rows *batch;
	/*
	 * The class of scheme it shares with others, for `make bench`'s cost
	 * per class ("Ed25519 over <ts><body>"); NULL: derived from the row
	 * (body_mac, timestamped), else the provider's own scheme.
	 */
	const char *klass;
	/* with verify (and sign) NULL, scheme.h's stamp_mac row verifies (and signs) */
	const struct stamp_mac *stamp_mac;
	/* likewise its v0_scheme row (Slack's class) and ed25519_scheme row (Discord's) */
	const struct v0_scheme *v0;
	const struct ed25519_scheme *ed25519;
	/* likewise its token_scheme row (GitLab's, Okta's: the secret in a header) */
	const struct token_scheme *token;
} provider_ops;

/* the row of p; p must be a valid id */
const provider_ops *provider_get(provider p);

/* "stripe" for PROVIDER_STRIPE, ...; "unknown" for an invalid id */
const char *provider_name(provider p);
/* 0 and *out set, or -1 for an unknown name */
int provider_from_name(const char *name, provider *out);
/* "stripe, github, ...": every name, for messages; truncated to len */
void provider_names(char *buf, size_t len);

/* for provider_ops.id_signed */
bool provider_id_signed(const struct provider_endpoint *ep);
bool provider_id_unsigned(const struct provider_endpoint *ep);
/* for yes/no members such as provider_ops.sends_version */
bool provider_always(const struct provider_endpoint *ep);
bool provider_never(const struct provider_endpoint *ep);

/* "Content-Type", "User-Agent": kept for every provider; NULL-terminated */
extern const char *const provider_common_headers[];

/*
 * The questions the programs ask; only the dispatchers (this file's
 * provider.c, verify.c, envelope.c and sign.c) read a provider's row.
 */

/* the id of an endpoint whose provider = is not set yet, and the test for it */
provider provider_unset(void);
bool provider_is_set(provider p);
/*
 * The request headers kept with a body, list i (provider_common_headers,
 * then each provider's), every list on every endpoint; NULL past the last.
 */
const char *const *provider_kept_headers(size_t i);
/* the headers p's own deliveries carry (NULL-terminated), for a backfill */
const char *const *provider_headers(provider p);
/* what the endpoint must configure besides secret_file (provider_ops.check), or NULL */
const char *provider_endpoint_check(const struct provider_endpoint *ep);
/*
 * provider_ops.load, once the secrets are loaded: 0, or -1 and errbuf;
 * provider_endpoint_release frees what it loaded (accepts an unloaded one)
 */
int provider_endpoint_load(struct provider_endpoint *ep, char *errbuf, size_t errlen);
void provider_endpoint_release(struct provider_endpoint *ep);
/* provider_ops.sends_version: an ordered route needs event versions */
bool provider_endpoint_sends_version(const struct provider_endpoint *ep);
/*
 * provider_ops.id_signed: false when a body re-sent under a fresh delivery
 * id must count as a duplicate (the body is deduplicated too)
 */
bool provider_endpoint_id_signed(const struct provider_endpoint *ep);
/* provider_ops.bare_answers: answer p's requests with an empty body */
bool provider_bare_answers(provider p);
/* what the replay defence of an unsigned delivery id compares for p */
provider_replay provider_replay_class(provider p);
/* the class of p's scheme (provider_ops.klass, or derived), for the bench */
const char *provider_class(provider p);
/* whether p sends several events in one request (envelope.h's batches) */
bool provider_batched(provider p);

#endif
