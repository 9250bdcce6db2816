/*
 * square.c - Square
 *
 * "x-square-hmacsha256-signature: <base64>", HMAC-SHA256 keyed with the
 * subscription's signature key over the notification URL (exactly as
 * registered with Square: the endpoint's public_url) followed by the body,
 * as the SDKs' WebhooksHelper.verifySignature computes it.  No timestamp;
 * the event id is in the signed body, so a replay is a duplicate of it.
 *
 * Body: {"merchant_id", "type", "event_id", "created_at",
 *        "data": {"type", "id", "object": {...}}}
 */
#include "base64.h"
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

static const char *
check(const endpoint_conf *ep)
{
	return ep->public_url == NULL ? "provider square needs public_url (the notification URL Square signs)"
				      : NULL;
}

static int
verify(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	unsigned char want[32 + 3];
	bool too_long = false;
	size_t len;
	const char *v = scheme_header(req, "X-Square-HmacSha256-Signature", &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing X-Square-HmacSha256-Signature header");
	if (too_long || base64_decode(v, len, want, sizeof(want)) != 32)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (ep->public_url == NULL)
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url for square");
	hmac_part parts[2] = {{ep->public_url, strlen(ep->public_url)}, {req->body, req->body_len}};

	return scheme_match_secrets(HMAC_SHA256, ep, parts, 2, want, 32, res);
}

static const env_body_fields fields = {"event_id", "type", "data.id", "created_at"};

static int
extract(const endpoint_conf *ep, const request_view *req, envelope *env, const char **reason)
{
	jval b = env_body(req, env);

	(void)ep;
	return env_extract_fields(&b, &fields, env, reason);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)];
	hmac_part parts[2] = {{in->url, 0}, {in->body, in->body_len}};

	if (in->url == NULL) {
		snprintf(errbuf, errlen, "square signing needs the notification URL");
		return -1;
	}
	parts[0].len = strlen(in->url);
	if (sign_mac_b64(HMAC_SHA256, in->secret, in->secret_len, parts, 2, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, "X-Square-HmacSha256-Signature", xstrdup(b64));
	return 0;
}

static const char *const headers[] = {"Square-Environment", "Square-Initial-Delivery-Timestamp",
				      "Square-Retry-Number", "Square-Retry-Reason", NULL};

const provider_ops provider_square = {
	.name = "square",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
