/* SPDX-License-Identifier: ISC */
/*
 * okta.c - Okta event hooks
 *
 * The hook's "Authorization" header carries the secret value configured
 * with the hook, not a signature: it does not cover the body, and the
 * event id (body "eventId") is not signed, so the body is deduplicated as
 * for GitLab's token.  The one-time verification GET is answered.
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static const token_scheme scheme = {
	.header = "Authorization",
	.missing = "missing Authorization header",
	.too_long = "Authorization header too long",
	.mismatch = "Authorization mismatch",
};

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval b = env_body(req, env);

	(void)ep;
	if (env_need_id(env_take_json(&env->event_id, env_json_path(&b, "eventId"), false, &why),
			&why, reason) < 0)
		return -1;
	env_optional(env,
		     env_take_json(&env->event_type, env_json_path(&b, "eventType"), false, &why),
		     "type", &why);
	env_optional(env, env_take_version(env, env_json_path(&b, "eventTime")), "eventTime",
		     &env_version_why);
	return 0;
}

/*
 * Okta's one-time verification: a GET carrying X-Okta-Verification-Challenge
 * and the hook's Authorization, answered {"verification": <the challenge>}
 * when the Authorization is one of ours; nothing is stored.
 */
static int
greeting(const provider_endpoint *ep, const request_view *req, const char *method,
	 handshake_answer *ans, const char **reason)
{
	const char *why = NULL;
	envelope_field challenge;
	verify_result res;
	int rc;

	if (strcmp(method, "GET") != 0)
		return 0;
	rc = env_take_header(&challenge, req, "X-Okta-Verification-Challenge", &why);
	if (rc != 0) {
		*reason =
			rc > 0 ? "no X-Okta-Verification-Challenge" : "bad verification challenge";
		return -1;
	}
	if (scheme_verify_token(&scheme, ep, req, &res) != 0) {
		*reason = res.reason;
		return -1;
	}
	char *q = env_json_quote(challenge);

	ans->body = xasprintf("{\"verification\":%s}\n", q);
	free(q);
	return 1;
}

static const char *const headers[] = {NULL};

const provider_ops provider_okta = {
	.name = "okta",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.token = &scheme, /* verifies and signs */
	.greeting = greeting,
	.extract = extract,
};
