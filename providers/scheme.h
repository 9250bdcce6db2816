/* SPDX-License-Identifier: ISC */
/*
 * scheme.h - the pieces the providers' signature schemes share
 *
 * For providers/<name>.c only: reading a signature header strictly,
 * splitting its entries, checking a timestamp against the replay window,
 * trying every secret in constant time, and adding signed headers for
 * hookinbox-send.  Nothing here logs; computed MACs are wiped.
 */
#ifndef HOOKINBOX_SCHEME_H
#define HOOKINBOX_SCHEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"
#include "envelope.h"
#include "form.h"
#include "hmac.h"
#include "sign.h"
#include "verify.h"

#define SCHEME_HEADER_MAX 8192 /* a longer signature header is malformed */
#define SCHEME_ENTRIES_MAX 64  /* signature entries examined per header */

/* a span of a header value */
typedef struct span {
	const char *p;
	size_t len;
} span;

bool span_eq(span s, const char *lit);

/* fill *res for a refusal and return -1; for a pass with the secret's index and return 0 */
int scheme_fail(verify_result *res, verify_status st, const char *reason);
int scheme_pass(verify_result *res, size_t secret_index);

/*
 * Look a header up; NULL when absent.  *too_long is set for a value longer
 * than SCHEME_HEADER_MAX, which every caller treats as malformed.
 */
const char *scheme_header(const request_view *req, const char *name, size_t *len, bool *too_long);

/* strict unsigned decimal seconds (at most 12 digits); -1 if not */
int scheme_timestamp(const char *s, size_t len, int64_t *out);
/* likewise in milliseconds (at most 15 digits) */
int scheme_timestamp_ms(const char *s, size_t len, int64_t *out);

/*
 * ts against the endpoint's tolerance, else the provider's own window, in
 * both directions.  On a refusal scheme_window_fail fills *res.
 */
verify_status scheme_window(const provider_endpoint *ep, const request_view *req, int64_t ts);
int scheme_window_fail(verify_result *res, verify_status st);

/*
 * Split v[0..len) at sep into at most SCHEME_ENTRIES_MAX non-empty spans.
 * Returns the count, or -1 when there are more.
 */
int scheme_split(const char *v, size_t len, char sep, span out[SCHEME_ENTRIES_MAX]);
/* split "k=v" (or "k,v") at the first c; false when c is absent */
bool scheme_split_kv(span s, char c, span *k, span *v);

/*
 * "<ts><joiner><body>" ("" for no joiner), for the schemes that sign it
 * with a key of another kind (Ed25519, ECDSA); the caller frees it
 */
unsigned char *scheme_ts_message(const char *ts, size_t tslen, const char *joiner,
				 const unsigned char *body, size_t blen, size_t *len);

/* does hex entry s carry mac? (a bad digit or length simply does not match) */
bool scheme_hex_matches(span s, const unsigned char *mac, size_t maclen);

/* the HMAC of parts with the endpoint's secret i; 0 or -1 */
int scheme_mac_secret(hmac_alg alg, const provider_endpoint *ep, size_t i, const hmac_part *parts,
		      size_t n, unsigned char mac[HMAC_MAX_LEN])
	__attribute__((warn_unused_result));

/*
 * Try every secret of the endpoint against one decoded signature of
 * wantlen bytes (the MAC length of alg); pass with the matching index, or
 * mismatch.
 */
int scheme_match_secrets(hmac_alg alg, const provider_endpoint *ep, const hmac_part *parts,
			 size_t nparts, const unsigned char *want, size_t wantlen,
			 verify_result *res);

/*
 * Stripe and Paddle sign alike: one header of key=value entries holding a
 * timestamp and one or more hex HMAC-SHA256 signatures of
 * "<timestamp><joiner><body>"; only the names and separators differ.
 */
typedef struct timestamped_scheme {
	const char *header;
	const char *missing; /* reason when the header is absent */
	char sep;	     /* between entries */
	const char *ts_key;
	const char *sig_key;
	const char *no_sig; /* reason when no signature entry is there */
	char joiner;	    /* between timestamp and body in the signed content */
	bool ms;	    /* the timestamp is in milliseconds (WorkOS) */
	bool spaced;	    /* entries may start with spaces: "t=…, v1=…" (WorkOS) */
} timestamped_scheme;

int scheme_verify_timestamped(const timestamped_scheme *sc, const provider_endpoint *ep,
			      const request_view *req, verify_result *res);
/* sign.h's sign_headers for such a scheme: "<ts_key>=<ts><sep><sig_key>=<hex>" */
int scheme_sign_timestamped(const timestamped_scheme *sc, const sign_input *in, sign_output *out,
			    char *errbuf, size_t errlen);

/*
 * One header carrying the base64 HMAC-SHA256, keyed with each secret, of
 * prefix ("" for none) followed by the body (Shopify, Square).
 */
int scheme_verify_base64_body(const provider_endpoint *ep, const request_view *req,
			      verify_result *res, const char *header, const char *missing,
			      const char *prefix);

/*
 * One header carrying [prefix]<hex|base64> of an HMAC of the body (GitHub's
 * class, and the generic hmac provider's): the whole scheme is this row.
 * The envelope comes from the named headers and dotted body paths; with no
 * id header or field, the event id is "sha256:<hex of the body>", which a
 * redelivery of the same signed bytes repeats (providers that send no id).
 */
typedef struct body_mac {
	const char *header;
	hmac_alg alg;
	hmac_encoding enc;
	const char *prefix; /* before each signature ("sha256="); NULL for none */
	char list_sep;	    /* between several signatures (PagerDuty's ','); 0: one */
	bool hex_key;	    /* the secret as shown is hex and the key its bytes (Adyen) */
	/*
	 * header ends in "1" and is the first of at most this many numbered
	 * headers, sent in order from 1, any of which may carry a matching
	 * signature (DocuSign's X-DocuSign-Signature-1..N, one per Connect
	 * key); 0: one header
	 */
	unsigned numbered;
	bool url_after; /* the body is followed by the endpoint's public_url (Trello) */
	/*
	 * What is signed, as a template (template.h), instead of the body
	 * (and url_after); ts_header the header {timestamp} is read from, in
	 * seconds or, with ts_ms, milliseconds, within the endpoint's window
	 */
	const char *signed_content;
	const char *ts_header;
	bool ts_ms;
	const char *id_header, *id_field;
	const char *type_header, *type_field;
	const char *object_field, *version_field;
} body_mac;

int scheme_verify_body_mac(const body_mac *m, const provider_endpoint *ep, const request_view *req,
			   verify_result *res);
int scheme_extract_body_mac(const body_mac *m, const request_view *req, envelope *env,
			    const char **reason);
int scheme_sign_body_mac(const body_mac *m, const sign_input *in, sign_output *out, char *errbuf,
			 size_t errlen);
/* whether the row's event id is covered by the signature */
bool scheme_body_mac_id_signed(const body_mac *m);
/*
 * What a row with signed_content also needs (its timestamp header, the
 * endpoint's public_url for {url}): NULL when complete, else a static text
 */
const char *scheme_body_mac_check(const body_mac *m, const provider_endpoint *ep);

/*
 * Slack's and Zoom's class: "<sig header>: v0=<hex>" with the timestamp in
 * its own header, HMAC-SHA256 over "v0:<ts>:<body>".  Webflow's is the same
 * with no "v0" and the timestamp in milliseconds: "<hex>", "<ts>:<body>".
 */
typedef struct v0_scheme {
	const char *sig_header, *ts_header;
	const char *missing; /* reason when either header is absent */
	bool bare;	     /* no "v0=" before the signature, no "v0:" before the timestamp */
	bool ms;	     /* the timestamp is in milliseconds */
} v0_scheme;

int scheme_verify_v0(const v0_scheme *sc, const provider_endpoint *ep, const request_view *req,
		     verify_result *res);
int scheme_sign_v0(const v0_scheme *sc, const sign_input *in, sign_output *out, char *errbuf,
		   size_t errlen);

/*
 * Discord's and Telnyx's class: an Ed25519 signature over
 * "<ts><joiner><body>", the signature and the timestamp in two headers,
 * checked with each public key of the endpoint (32 bytes in key_enc).
 * The window applies when the provider or the endpoint sets one.  To sign,
 * the secret is the 32-byte private seed (or seed || public key) in key_enc.
 */
typedef struct ed25519_scheme {
	const char *sig_header, *ts_header;
	const char *missing;
	hmac_encoding sig_enc, key_enc;
	const char *joiner;
} ed25519_scheme;

int scheme_verify_ed25519(const ed25519_scheme *sc, const provider_endpoint *ep,
			  const request_view *req, verify_result *res);
int scheme_sign_ed25519(const ed25519_scheme *sc, const sign_input *in, sign_output *out,
			char *errbuf, size_t errlen);

/*
 * Providers that sign nothing and send the credentials of the URL they
 * were given (https://user:password@host/...): "Authorization: Basic
 * <base64 of user:password>", compared whole and in constant time with
 * each "user:password" line of the secret file.  Weaker than a signature:
 * the body is not covered, so ids are deduplicated on the body too.  The
 * two are such a provider's provider_ops.verify and .sign as they stand.
 */
int scheme_verify_basic(const provider_endpoint *ep, const request_view *req, verify_result *res);
int scheme_sign_basic(const sign_input *in, sign_output *out, char *errbuf, size_t errlen);

/*
 * GitLab's and Okta's class: the secret itself in one header, not a
 * signature, compared whole and in constant time with each line of the
 * secret file.  It does not cover the body, so ids are deduplicated on the
 * body too.  Signing sends the secret, and the event id and type in their
 * headers when the row names them.
 */
typedef struct token_scheme {
	const char *header;
	const char *missing;		     /* reason when the header is absent */
	const char *too_long;		     /* reason when it is longer than SCHEME_HEADER_MAX */
	const char *mismatch;		     /* reason when no secret is its value */
	const char *id_header, *type_header; /* NULL: not sent */
} token_scheme;

int scheme_verify_token(const token_scheme *sc, const provider_endpoint *ep,
			const request_view *req, verify_result *res);
int scheme_sign_token(const token_scheme *sc, const sign_input *in, sign_output *out, char *errbuf,
		      size_t errlen);

/*
 * Box's, Zendesk's and Twitch's class: an HMAC-SHA256 over parts of the
 * request in the order layout names them ('b' the body, 't' the RFC 3339
 * timestamp header, 'i' the delivery id header), carried as
 * [prefix]<enc> in one header or either of two (Box's primary and
 * secondary, each keyed with one of the app's two keys); the window is on
 * the timestamp.  Signing adds the id header with the sign_input's event
 * id (required when the layout signs it).
 */
typedef struct stamp_mac {
	const char *sig_headers[2]; /* the second NULL when there is one */
	const char *ts_header, *id_header;
	const char *layout; /* "tb", "bt", "itb" */
	hmac_encoding enc;
	const char *prefix; /* before the signature ("sha256="); NULL for none */
	const char *missing;
} stamp_mac;

int scheme_verify_stamp_mac(const stamp_mac *sc, const provider_endpoint *ep,
			    const request_view *req, verify_result *res);
int scheme_sign_stamp_mac(const stamp_mac *sc, const sign_input *in, sign_output *out, char *errbuf,
			  size_t errlen);

/*
 * Twilio's and Mandrill's class: an HMAC-SHA1 over a URL followed by each
 * form parameter's name and value, sorted by name (form_sort_unique).
 * The parts of that content: url, then params in their order; the caller
 * frees the array, which points into url and params.
 */
hmac_part *scheme_form_parts(const char *url, const form *params, size_t *n);
/*
 * The base64 HMAC-SHA1, keyed with in->secret, of url followed by the
 * parameters of in->body (sorted) when body_params, else url alone; b64
 * holds BASE64_ENCODED_SIZE(20) bytes.  0, or -1 with a message in errbuf.
 */
int sign_form_b64(const sign_input *in, const char *url, bool body_params, char *b64, char *errbuf,
		  size_t errlen) __attribute__((warn_unused_result));

/* provider_ops.greeting of a provider whose HEAD checks the URL exists (Trello, Mandrill) */
int scheme_greet_head(const provider_endpoint *ep, const request_view *req, const char *method,
		      handshake_answer *ans, const char **reason);

/*
 * For a provider_ops.greeting that echoes a query parameter (Dropbox's
 * challenge, Meta's hub.challenge): *ans the parameter as text/plain and 1,
 * or -1 with *reason when it is absent or not tame (fields.h).
 */
int scheme_echo_query(const request_view *req, const char *name, handshake_answer *ans,
		      const char **reason);

/* ---- signing (sign.h) ---- */

/* add a header; value is owned by out from now on */
void sign_add(sign_output *out, const char *name, char *value);
/* add a copy of value when both name and value are set */
void sign_add_opt(sign_output *out, const char *name, const char *value);
/* lower-case hex / base64 of the HMAC of parts keyed with in->secret; 0 or -1 */
int sign_mac_hex(hmac_alg alg, const sign_input *in, const hmac_part *parts, size_t n, char *hex)
	__attribute__((warn_unused_result));
int sign_mac_b64(hmac_alg alg, const unsigned char *key, size_t klen, const hmac_part *parts,
		 size_t n, char *b64) __attribute__((warn_unused_result));
/*
 * The HMAC-SHA256 of prefix ("" for none) followed by in->body, keyed with
 * in->secret, as lower-case hex (2 * HMAC_MAX_LEN + 1 bytes) or base64
 * (BASE64_ENCODED_SIZE(HMAC_MAX_LEN) bytes).  Returns 0, or -1 with a
 * message in errbuf.
 */
int sign_body_hex(const sign_input *in, const char *prefix, char *hex, char *errbuf, size_t errlen)
	__attribute__((warn_unused_result));
int sign_body_b64(const sign_input *in, const char *prefix, char *b64, char *errbuf, size_t errlen)
	__attribute__((warn_unused_result));

#endif
