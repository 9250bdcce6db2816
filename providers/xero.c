/* SPDX-License-Identifier: ISC */
/*
 * xero.c - Xero webhooks
 *
 * "x-xero-signature: <base64>", HMAC-SHA256 of the body keyed with the
 * webhook key; no timestamp.  Xero's contract ("intent to receive"): every
 * answer has an empty body, a correctly signed request gets 200 and any
 * other 401 (a malformed signature too).  Its validation requests carry
 * "events": [] and are answered without being stored.  A delivery is a
 * batch ({"events": [...], "firstEventSequence", "lastEventSequence"})
 * with no single id: the id is the body's hash, which a retry repeats.
 */
#include "fields.h"
#include "scheme.h"

static const body_mac row = {
	.header = "x-xero-signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_BASE64,
	.version_field = "lastEventSequence",
};

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	int rc = scheme_verify_body_mac(&row, ep, req, res);

	if (rc < 0 && res->status == VERIFY_MALFORMED)
		res->status = VERIFY_MISMATCH; /* 401 for anything not correctly signed */
	return rc;
}

/* an intent-to-receive request: signed, with an empty events list */
static int
handshake(const provider_endpoint *ep, const request_view *req, size_t secret_index,
	  handshake_answer *ans, const char **reason)
{
	jval body = env_parse_object(req->body, req->body_len);
	jval events = env_json_path(&body, "events");
	const char *pos = NULL;
	jscan_value first;

	(void)ep;
	(void)secret_index;
	(void)reason;
	(void)ans; /* an empty body */
	if (!events.present || events.v.type != JSCAN_ARRAY ||
	    jscan_element(&events.v, &pos, &first) == 0)
		return 0;
	return 1;
}

static const char *const headers[] = {NULL};

const provider_ops provider_xero = {
	.name = "xero",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.handshake = handshake,
	.body_mac = &row, /* extracts and signs */
	.bare_answers = true,
};
