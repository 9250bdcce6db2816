/* SPDX-License-Identifier: ISC */
/*
 * stripe.c - Stripe
 *
 * "Stripe-Signature: t=<ts>,v1=<hex>[,v1=...][,v0=...]": HMAC-SHA256 over
 * "<t>.<body>" keyed with the whole "whsec_..." string, 300 s window (the
 * SDK's).  The envelope is in the body.
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

static const timestamped_scheme scheme = {
	"Stripe-Signature",
	"missing Stripe-Signature header",
	',',
	"t",
	"v1",
	"no v1 signature in signature header",
	'.',
};

static int
verify(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_timestamped(&scheme, ep, req, res);
}

/* {"id", "type", "created", "data": {"object": {"id"}}} */
static const env_body_fields fields = {"id", "type", "data.object.id", "created"};

static int
extract(const endpoint_conf *ep, const request_view *req, envelope *env, const char **reason)
{
	(void)ep;
	return env_extract_fields(req, &fields, env, reason);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char hex[2 * HMAC_MAX_LEN + 1], pre[48];

	snprintf(pre, sizeof(pre), "%lld.", (long long)in->timestamp);
	if (sign_body_hex(in, pre, hex, errbuf, errlen) < 0)
		return -1;
	sign_add(out, "Stripe-Signature", xasprintf("t=%lld,v1=%s", (long long)in->timestamp, hex));
	return 0;
}

static const char *const headers[] = {NULL};

const provider_ops provider_stripe = {
	.name = "stripe",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
