/* SPDX-License-Identifier: ISC */
/*
 * paddle.c - Paddle Billing
 *
 * "Paddle-Signature: ts=<ts>;h1=<hex>[;h1=...]": HMAC-SHA256 over
 * "<ts>:<body>", the SDK's 5 s window.  The envelope is in the body.
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

static const timestamped_scheme scheme = {
	"Paddle-Signature",
	"missing Paddle-Signature header",
	';',
	"ts",
	"h1",
	"no h1 signature in signature header",
	':',
};

static int
verify(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_timestamped(&scheme, ep, req, res);
}

/* {"event_id", "event_type", "occurred_at", "data": {"id"}} */
static const env_body_fields fields = {"event_id", "event_type", "data.id", "occurred_at"};

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

	snprintf(pre, sizeof(pre), "%lld:", (long long)in->timestamp);
	if (sign_body_hex(in, pre, hex, errbuf, errlen) < 0)
		return -1;
	sign_add(out, "Paddle-Signature",
		 xasprintf("ts=%lld;h1=%s", (long long)in->timestamp, hex));
	return 0;
}

static const char *const headers[] = {"Paddle-Version", NULL};

const provider_ops provider_paddle = {
	.name = "paddle",
	.tolerance = 5,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
