/* SPDX-License-Identifier: ISC */
/*
 * webflow.c - Webflow (webhooks created through the API or an app)
 *
 * "x-webflow-signature: <hex>" and "x-webflow-timestamp" (milliseconds),
 * HMAC-SHA256 over "<ts>:<body>" keyed with the webhook's secret (the v0
 * class, bare), 300 s window as Webflow documents.  No event id is sent:
 * the id is the body's hash, which a retry repeats.
 */
#include "fields.h"
#include "scheme.h"

static const v0_scheme scheme = {
	.sig_header = "x-webflow-signature",
	.ts_header = "x-webflow-timestamp",
	.missing = "missing x-webflow-signature or x-webflow-timestamp header",
	.bare = true,
	.ms = true,
};

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_v0(&scheme, ep, req, res);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	return scheme_sign_v0(&scheme, in, out, errbuf, errlen);
}

/* {"triggerType": "form_submission", "payload": {"id", ...}} */
static const env_body_fields fields = {NULL, "triggerType", "payload.id", NULL};

static const char *const headers[] = {"x-webflow-timestamp", NULL};

const provider_ops provider_webflow = {
	.name = "webflow",
	.klass = "HMAC of v0:<ts>:<body>",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = verify,
	.fields = &fields,
	.sign = sign,
};
