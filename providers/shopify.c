/* SPDX-License-Identifier: ISC */
/*
 * shopify.c - Shopify
 *
 * "X-Shopify-Hmac-Sha256: <base64>", HMAC-SHA256 over the body; no
 * timestamp.  The delivery id (X-Shopify-Event-Id, else
 * X-Shopify-Webhook-Id) is not signed.
 */
#include "base64.h"
#include "fields.h"
#include "rfc3339.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_base64_body(ep, req, res, "X-Shopify-Hmac-Sha256",
					 "missing X-Shopify-Hmac-Sha256 header", "");
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *at = req->header(req->ctx, "X-Shopify-Triggered-At");
	const char *why = NULL;
	jval body = env_body(req, env);
	const jval *b = &body;
	int rc = env_take_header(&env->event_id, req, "X-Shopify-Event-Id", &why);

	(void)ep;
	if (rc > 0)
		rc = env_take_header(&env->event_id, req, "X-Shopify-Webhook-Id", &why);
	if (env_need_id(rc, &why, reason) < 0)
		return -1;
	env_optional(env, env_take_header(&env->event_type, req, "X-Shopify-Topic", &why), "type",
		     &why);
	rc = env_take_json(&env->object_id, env_json_path(b, "admin_graphql_api_id"), false, &why);
	if (rc > 0)
		rc = env_take_json(&env->object_id, env_json_path(b, "id"), true, &why);
	env_optional(env, rc, "object id", &why);
	if (at != NULL) {
		if (rfc3339_us(at, &env->version) == 0)
			env->has_version = true;
		else
			env_note(env, "X-Shopify-Triggered-At", "not an RFC 3339 time");
	} else {
		env_optional(env, env_take_version(env, env_json_path(b, "updated_at")),
			     "updated_at", &env_version_why);
	}
	return 0;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)];

	if (sign_body_b64(in, "", b64, errbuf, errlen) < 0)
		return -1;
	sign_add(out, "X-Shopify-Hmac-Sha256", xstrdup(b64));
	sign_add_opt(out, "X-Shopify-Webhook-Id", in->event_id);
	sign_add_opt(out, "X-Shopify-Topic", in->event_type);
	return 0;
}

static const char *const headers[] = {
	"X-Shopify-Topic",
	"X-Shopify-Shop-Domain",
	"X-Shopify-Webhook-Id",
	"X-Shopify-Event-Id",
	"X-Shopify-Triggered-At",
	"X-Shopify-API-Version",
	NULL,
};

const provider_ops provider_shopify = {
	.name = "shopify",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
