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
#include "fields.h"
#include "scheme.h"

static const stamp_mac scheme = {
	.sig_headers = {"box-signature-primary", "box-signature-secondary"},
	.ts_header = "box-delivery-timestamp",
	.id_header = "box-delivery-id",
	.layout = "bt",
	.enc = HMAC_BASE64,
	.missing = "missing box-signature-primary or box-delivery-timestamp header",
};

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
	.stamp_mac = &scheme, /* verifies and signs */
	.extract = extract,
};
