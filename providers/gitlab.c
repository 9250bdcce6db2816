/* SPDX-License-Identifier: ISC */
/*
 * gitlab.c - GitLab
 *
 * "X-Gitlab-Token" is the shared token itself, not a signature: it does not
 * cover the body, and the delivery id (X-Gitlab-Event-UUID) is not signed.
 */
#include "fields.h"
#include "scheme.h"

static const token_scheme scheme = {
	.header = "X-Gitlab-Token",
	.missing = "missing X-Gitlab-Token header",
	.too_long = "token header too long",
	.mismatch = "token mismatch",
	.id_header = "X-Gitlab-Event-UUID",
	.type_header = "X-Gitlab-Event",
};

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval b = env_body(req, env);

	(void)ep;
	if (env_need_id(env_take_header(&env->event_id, req, "X-Gitlab-Event-UUID", &why), &why,
			reason) < 0)
		return -1;
	env_optional(env, env_take_header(&env->event_type, req, "X-Gitlab-Event", &why), "type",
		     &why);
	env_optional(env,
		     env_take_json(&env->object_id, env_json_path(&b, "object_attributes.id"), true,
				   &why),
		     "object id", &why);
	return 0;
}

static const char *const headers[] = {"X-Gitlab-Event", "X-Gitlab-Event-UUID", NULL};

const provider_ops provider_gitlab = {
	.name = "gitlab",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.token = &scheme, /* verifies and signs */
	.extract = extract,
};
