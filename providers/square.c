/* SPDX-License-Identifier: ISC */
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
check(const provider_endpoint *ep)
{
	return ep->public_url == NULL
		       ? "provider square needs public_url (the notification URL Square signs)"
		       : NULL;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	if (ep->public_url == NULL)
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url for square");
	return scheme_verify_base64_body(ep, req, res, "X-Square-HmacSha256-Signature",
					 "missing X-Square-HmacSha256-Signature header",
					 ep->public_url);
}

static const env_body_fields fields = {"event_id", "type", "data.id", "created_at"};

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)];

	if (in->url == NULL) {
		snprintf(errbuf, errlen, "square signing needs the notification URL");
		return -1;
	}
	if (sign_body_b64(in, in->url, b64, errbuf, errlen) < 0)
		return -1;
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
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.fields = &fields,
	.sign = sign,
};
