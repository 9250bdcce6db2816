/* SPDX-License-Identifier: ISC */
/*
 * twitch.c - Twitch EventSub (webhook transport)
 *
 * "Twitch-Eventsub-Message-Signature: sha256=<hex>", HMAC-SHA256 keyed
 * with the subscription's secret over Twitch-Eventsub-Message-Id,
 * Twitch-Eventsub-Message-Timestamp (RFC 3339, nanoseconds) and the body,
 * in that order; 10-minute window, as Twitch's guide checks it.  The
 * message id, signed, is the delivery key; a retry repeats it.
 *
 * Twitch-Eventsub-Message-Type: "webhook_callback_verification" is
 * answered with the body's challenge as text/plain and not stored;
 * "notification" and "revocation" are stored (a revocation's type is
 * "revocation").
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static const stamp_mac scheme = {
	.sig_headers = {"Twitch-Eventsub-Message-Signature", NULL},
	.ts_header = "Twitch-Eventsub-Message-Timestamp",
	.id_header = "Twitch-Eventsub-Message-Id",
	.layout = "itb",
	.enc = HMAC_HEX,
	.prefix = "sha256=",
	.missing = "missing Twitch-Eventsub-Message-Signature, -Id or -Timestamp header",
};

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	if (scheme_sign_stamp_mac(&scheme, in, out, errbuf, errlen) < 0)
		return -1;
	sign_add(out, "Twitch-Eventsub-Message-Type", xstrdup("notification"));
	sign_add_opt(out, "Twitch-Eventsub-Subscription-Type", in->event_type);
	return 0;
}

static bool
message_type(const request_view *req, const char *type)
{
	const char *v = req->header(req->ctx, "Twitch-Eventsub-Message-Type");

	return v != NULL && strcmp(v, type) == 0;
}

static int
handshake(const provider_endpoint *ep, const request_view *req, size_t secret_index,
	  handshake_answer *ans, const char **reason)
{
	jval body = env_parse_object(req->body, req->body_len);
	envelope_field challenge;
	const char *why = NULL;

	(void)ep;
	(void)secret_index;
	if (!message_type(req, "webhook_callback_verification"))
		return 0;
	if (env_take_json(&challenge, env_json_path(&body, "challenge"), false, &why) != 0) {
		*reason = "bad challenge";
		return -1;
	}
	ans->body = xstrdup(challenge);
	ans->content_type = "text/plain";
	return 1;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval b = env_body(req, env);

	(void)ep;
	if (env_need_id(env_take_header(&env->event_id, req, "Twitch-Eventsub-Message-Id", &why),
			&why, reason) < 0)
		return -1;
	if (message_type(req, "revocation"))
		env_set(&env->event_type, "revocation");
	else
		env_optional(env,
			     env_take_json(&env->event_type, env_json_path(&b, "subscription.type"),
					   false, &why),
			     "type", &why);
	env_optional(
		env,
		env_take_json(&env->object_id, env_json_path(&b, "subscription.id"), false, &why),
		"object id", &why);
	return 0;
}

static const char *const headers[] = {"Twitch-Eventsub-Message-Id",
				      "Twitch-Eventsub-Message-Timestamp",
				      "Twitch-Eventsub-Message-Type",
				      "Twitch-Eventsub-Message-Retry",
				      "Twitch-Eventsub-Subscription-Type",
				      "Twitch-Eventsub-Subscription-Version",
				      NULL};

const provider_ops provider_twitch = {
	.name = "twitch",
	.tolerance = 600,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.stamp_mac = &scheme, /* verifies */
	.handshake = handshake,
	.extract = extract,
	.sign = sign,
};
