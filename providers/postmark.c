/* SPDX-License-Identifier: ISC */
/*
 * postmark.c - Postmark
 *
 * Postmark signs nothing: the webhook URL carries Basic credentials
 * (https://user:password@host/...), sent as "Authorization: Basic ...",
 * and the secret file holds "user:password" (basicauth.c).  No event id is
 * sent: the id is the body's hash, which a retry repeats.
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

/* {"RecordType": "Delivery", "MessageID", "DeliveredAt", ...} */
static const env_body_fields fields = {NULL, "RecordType", "MessageID", NULL};

static const char *const headers[] = {NULL};

const provider_ops provider_postmark = {
	.name = "postmark",
	.klass = "Basic credentials",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned, /* nothing is signed */
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = verify,
	.fields = &fields,
	.sign = sign,
};
