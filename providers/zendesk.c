/* SPDX-License-Identifier: ISC */
/*
 * zendesk.c - Zendesk webhooks
 *
 * "X-Zendesk-Webhook-Signature": base64 HMAC-SHA256 over the
 * "X-Zendesk-Webhook-Signature-Timestamp" header (RFC 3339) followed by the
 * body, keyed with the webhook's signing secret.  Zendesk states no window;
 * 300 s is ours (tolerance = changes it).  The invocation id,
 * x-zendesk-webhook-invocation-id, is not signed but the timestamp bounds
 * its replay.
 */
#include "base64.h"
#include "fields.h"
#include "rfc3339.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char want[32 + 3];
	bool too_long = false, long_sig = false;
	size_t tslen, len;
	int64_t us;
	verify_status st;
	const char *ts =
		scheme_header(req, "X-Zendesk-Webhook-Signature-Timestamp", &tslen, &too_long);
	const char *v = scheme_header(req, "X-Zendesk-Webhook-Signature", &len, &long_sig);

	if (ts == NULL || v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED,
				   "missing X-Zendesk-Webhook-Signature or its timestamp header");
	if (long_sig || base64_decode(v, len, want, sizeof(want)) != 32)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (too_long || rfc3339_us(ts, &us) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad signature timestamp header");
	/* floor division: a time before 1970 is simply stale */
	if ((st = scheme_window(ep, req, us >= 0 ? us / 1000000 : -1 - (-1 - us) / 1000000)) !=
	    VERIFY_OK)
		return scheme_window_fail(res, st);
	hmac_part parts[2] = {{ts, tslen}, {req->body, req->body_len}};

	if (scheme_match_secrets(HMAC_SHA256, ep, parts, 2, want, 32, res) == 0)
		return 0;
	return scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)], ts[32];
	time_t t = (time_t)in->timestamp;
	struct tm tm;
	hmac_part parts[2];

	if (gmtime_r(&t, &tm) == NULL || strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		snprintf(errbuf, errlen, "bad timestamp");
		return -1;
	}
	parts[0] = (hmac_part){ts, strlen(ts)};
	parts[1] = (hmac_part){in->body, in->body_len};
	if (sign_mac_b64(HMAC_SHA256, in->secret, in->secret_len, parts, 2, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, "X-Zendesk-Webhook-Signature", xstrdup(b64));
	sign_add(out, "X-Zendesk-Webhook-Signature-Timestamp", xstrdup(ts));
	sign_add_opt(out, "x-zendesk-webhook-invocation-id", in->event_id);
	return 0;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval body = env_body(req, env);

	(void)ep;
	if (env_need_id(
		    env_take_header(&env->event_id, req, "x-zendesk-webhook-invocation-id", &why),
		    &why, reason) < 0)
		return -1;
	env_optional(env,
		     env_take_json(&env->event_type, env_json_path(&body, "type"), false, &why),
		     "type", &why);
	env_optional(env,
		     env_take_json(&env->object_id, env_json_path(&body, "detail.id"), false, &why),
		     "object id", &why);
	env_optional(env, env_take_version(env, env_json_path(&body, "time")), "time",
		     &env_version_why);
	return 0;
}

static const char *const headers[] = {"x-zendesk-webhook-invocation-id",
				      "X-Zendesk-Webhook-Signature-Timestamp", NULL};

const provider_ops provider_zendesk = {
	.name = "zendesk",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed, /* bounded by the signed timestamp */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
