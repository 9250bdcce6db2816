/* SPDX-License-Identifier: ISC */
/*
 * sendgrid.c - Twilio SendGrid Event Webhook (signed)
 *
 * "X-Twilio-Email-Event-Webhook-Signature: <base64 DER ECDSA signature>"
 * and "X-Twilio-Email-Event-Webhook-Timestamp": ECDSA P-256 with SHA-256
 * over "<timestamp><body>", checked with the verification key as Mail
 * Settings shows it (base64 of a DER SubjectPublicKeyInfo), as
 * @sendgrid/eventwebhook's verifySignature does.  No window by default
 * (the SDK has none; tolerance = adds one): every event's sg_event_id is
 * in the signed body.  A batch: the body is an array of events, each
 * stored under its sg_event_id.  hookinbox-send signs with the private key
 * as base64 DER PKCS#8.
 */
#include "base64.h"
#include "batch.h"
#include "ecdsa.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIG_HEADER "X-Twilio-Email-Event-Webhook-Signature"
#define TS_HEADER "X-Twilio-Email-Event-Webhook-Timestamp"
#define KEY_B64_MAX 2048 /* a P-256 SubjectPublicKeyInfo is 91 bytes; PKCS#8 about 138 */

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char sig[ECDSA_SIG_MAX + 3], *msg;
	bool too_long = false;
	size_t len, tslen, msglen;
	long siglen;
	int64_t ts;
	verify_status st;
	int rc;
	const char *v = scheme_header(req, SIG_HEADER, &len, &too_long);
	const char *tsv = scheme_header(req, TS_HEADER, &tslen, &too_long);

	if (v == NULL || tsv == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED,
				   "missing " SIG_HEADER " or " TS_HEADER " header");
	if (too_long || (siglen = base64_decode(v, len, sig, sizeof(sig))) <= 0 ||
	    siglen > ECDSA_SIG_MAX)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (scheme_timestamp(tsv, tslen, &ts) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad timestamp header");
	if (ep->tolerance > 0 && (st = scheme_window(ep, req, ts)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	msg = scheme_ts_message(tsv, tslen, "", req->body, req->body_len, &msglen);
	rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char der[BASE64_DECODED_MAX(KEY_B64_MAX)];
		size_t klen;
		const unsigned char *k = secret_get(ep->secrets, i, &klen);
		long n = klen <= KEY_B64_MAX
				 ? base64_decode((const char *)k, klen, der, sizeof(der))
				 : -1;
		ecdsa_key *key = n > 0 ? ecdsa_public_from_der(der, (size_t)n) : NULL;
		bool good = key != NULL && ecdsa_verify(key, msg, msglen, sig, (size_t)siglen);

		ecdsa_key_free(key); /* not a P-256 public key: matches nothing */
		if (good) {
			rc = scheme_pass(res, i);
			break;
		}
	}
	free(msg);
	return rc;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	unsigned char der[BASE64_DECODED_MAX(KEY_B64_MAX)], sig[ECDSA_SIG_MAX], *msg;
	char ts[32], b64[BASE64_ENCODED_SIZE(ECDSA_SIG_MAX)];
	size_t msglen, siglen = 0;
	long n = in->secret_len <= KEY_B64_MAX
			 ? base64_decode((const char *)in->secret, in->secret_len, der, sizeof(der))
			 : -1;
	int rc;

	snprintf(ts, sizeof(ts), "%lld", (long long)in->timestamp);
	msg = scheme_ts_message(ts, strlen(ts), "", in->body, in->body_len, &msglen);
	rc = n > 0 ? ecdsa_sign_der(der, (size_t)n, msg, msglen, sig, &siglen) : -1;
	secure_wipe(der, sizeof(der));
	free(msg);
	if (rc < 0) {
		snprintf(errbuf, errlen,
			 "the secret is not a P-256 private key (base64 of DER PKCS#8)");
		return -1;
	}
	base64_encode(sig, siglen, b64);
	sign_add(out, SIG_HEADER, xstrdup(b64));
	sign_add(out, TS_HEADER, xstrdup(ts));
	return 0;
}

/* [{"email", "timestamp", "event", "sg_event_id", "sg_message_id", ...}, ...] */
static const env_body_fields fields = {"sg_event_id", "event", "sg_message_id", "timestamp"};

static const batch_rows rows = {.fields = &fields};

static const char *const headers[] = {TS_HEADER, NULL};

const provider_ops provider_sendgrid = {
	.name = "sendgrid",
	.klass = "batch: ECDSA P-256 over <ts><body>",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.sign = sign,
	.id_in_body = true,
	.batch = &rows,
};
