/* SPDX-License-Identifier: ISC */
/*
 * linear.c - Linear
 *
 * "Linear-Signature: <hex>", HMAC-SHA256 of the body keyed with the
 * webhook's signing secret; freshness from the signed body's
 * webhookTimestamp (unix milliseconds), 60 s either way, as the SDK's
 * LinearWebhooks.verify checks it (a body without one is refused).  The
 * delivery id, Linear-Delivery, is not signed but the timestamp bounds
 * its replay.
 */
#include "fields.h"
#include "scheme.h"

static const body_mac row = {
	.header = "Linear-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.id_header = "Linear-Delivery",
	.type_header = "Linear-Event",
	.object_field = "data.id",
	.version_field = "webhookTimestamp",
};

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	jval body, at;
	int64_t ms;
	verify_status st;

	if (scheme_verify_body_mac(&row, ep, req, res) < 0)
		return -1;
	body = env_parse_object(req->body, req->body_len);
	at = env_json_path(&body, "webhookTimestamp");
	if (!at.present || !jscan_is_integer(&at.v) || at.v.p[0] == '-' ||
	    scheme_timestamp_ms(at.v.p, at.v.len, &ms) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "no webhookTimestamp in the body");
	if ((st = scheme_window(ep, req, ms / 1000)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	return 0;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	/* the body carries its own webhookTimestamp: the caller writes it */
	return scheme_sign_body_mac(&row, in, out, errbuf, errlen);
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	(void)ep;
	return scheme_extract_body_mac(&row, req, env, reason);
}

static const char *const headers[] = {"Linear-Delivery", "Linear-Event", NULL};

const provider_ops provider_linear = {
	.name = "linear",
	.tolerance = 60,
	.headers = headers,
	.id_signed = provider_id_signed, /* bounded by the signed webhookTimestamp */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
