/* SPDX-License-Identifier: ISC */
/*
 * chargebee.c - Chargebee
 *
 * Chargebee signs nothing: the webhook is configured with Basic
 * credentials, sent as "Authorization: Basic ...", and the secret file
 * holds "user:password" (basicauth.c).  The event id is in the body.
 */
#include "fields.h"
#include "scheme.h"

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_basic(ep, req, res);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	return scheme_sign_basic(in, out, errbuf, errlen);
}

/* {"id": "ev_...", "occurred_at", "event_type", "content": {...}} */
static const env_body_fields fields = {"id", "event_type", NULL, "occurred_at"};

static const char *const headers[] = {NULL};

const provider_ops provider_chargebee = {
	.name = "chargebee",
	.klass = "Basic credentials",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned, /* nothing is signed */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.fields = &fields,
	.sign = sign,
};
