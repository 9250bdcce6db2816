/* SPDX-License-Identifier: ISC */
/*
 * box.c - Box (webhooks v2)
 *
 * "box-signature-primary" and "box-signature-secondary": base64
 * HMAC-SHA256 over the body followed by the "box-delivery-timestamp"
 * header (RFC 3339), each keyed with one of the app's two keys; the
 * secret file holds both (Box's own rotation: either may match), and the
 * 10-minute window Box's SDKs check.  The delivery id, box-delivery-id, is
 * not signed but the timestamp bounds its replay.
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
	static const char *const sig_headers[] = {"box-signature-primary",
						  "box-signature-secondary"};
	unsigned char want[2][32 + 3];
	bool too_long = false, have[2] = {false, false}, present[2] = {false, false};
	size_t tslen, len;
	int64_t us;
	verify_status st;
	const char *ts = scheme_header(req, "box-delivery-timestamp", &tslen, &too_long);

	if (ts == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing box-delivery-timestamp header");
	for (int i = 0; i < 2; i++) {
		bool long_one = false;
		const char *v = scheme_header(req, sig_headers[i], &len, &long_one);

		present[i] = v != NULL;
		have[i] = v != NULL && !long_one &&
			  base64_decode(v, len, want[i], sizeof(want[i])) == 32;
	}
	if (!present[0] && !present[1])
		return scheme_fail(res, VERIFY_UNSIGNED, "missing box-signature-primary header");
	if (!have[0] && !have[1])
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (too_long || rfc3339_us(ts, &us) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad box-delivery-timestamp header");
	/* floor division: a time before 1970 is simply stale */
	if ((st = scheme_window(ep, req, us >= 0 ? us / 1000000 : -1 - (-1 - us) / 1000000)) !=
	    VERIFY_OK)
		return scheme_window_fail(res, st);
	hmac_part parts[2] = {{req->body, req->body_len}, {ts, tslen}};

	for (int i = 0; i < 2; i++) {
		if (have[i] &&
		    scheme_match_secrets(HMAC_SHA256, ep, parts, 2, want[i], 32, res) == 0)
			return 0;
	}
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
	parts[0] = (hmac_part){in->body, in->body_len};
	parts[1] = (hmac_part){ts, strlen(ts)};
	if (sign_mac_b64(HMAC_SHA256, in->secret, in->secret_len, parts, 2, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, "box-signature-primary", xstrdup(b64));
	sign_add(out, "box-delivery-timestamp", xstrdup(ts));
	sign_add_opt(out, "box-delivery-id", in->event_id);
	return 0;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval body = env_body(req, env);

	(void)ep;
	if (env_need_id(env_take_header(&env->event_id, req, "box-delivery-id", &why), &why,
			reason) < 0)
		return -1;
	env_optional(env,
		     env_take_json(&env->event_type, env_json_path(&body, "trigger"), false, &why),
		     "type", &why);
	env_optional(env,
		     env_take_json(&env->object_id, env_json_path(&body, "source.id"), false, &why),
		     "object id", &why);
	env_optional(env, env_take_version(env, env_json_path(&body, "created_at")), "created_at",
		     &env_version_why);
	return 0;
}

static const char *const headers[] = {"box-delivery-id", "box-delivery-timestamp", NULL};

const provider_ops provider_box = {
	.name = "box",
	.tolerance = 600,
	.headers = headers,
	.id_signed = provider_id_signed, /* bounded by the signed timestamp */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
