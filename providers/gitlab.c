/* SPDX-License-Identifier: ISC */
/*
 * gitlab.c - GitLab
 *
 * "X-Gitlab-Token" is the shared token itself, not a signature: it does not
 * cover the body, and the delivery id (X-Gitlab-Event-UUID) is not signed.
 */
#include "ct.h"
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <string.h>

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	bool too_long = false;
	size_t len;
	const char *v = scheme_header(req, "X-Gitlab-Token", &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing X-Gitlab-Token header");
	if (too_long)
		return scheme_fail(res, VERIFY_MALFORMED, "token header too long");
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t klen;
		const unsigned char *key = secret_get(ep->secrets, i, &klen);

		if (ct_equal(key, klen, v, len))
			return scheme_pass(res, i);
	}
	return scheme_fail(res, VERIFY_MISMATCH, "token mismatch");
}

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

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char *tok = xmalloc(in->secret_len + 1);

	(void)errbuf;
	(void)errlen;
	memcpy(tok, in->secret, in->secret_len);
	tok[in->secret_len] = '\0';
	sign_add(out, "X-Gitlab-Token", tok);
	sign_add_opt(out, "X-Gitlab-Event-UUID", in->event_id);
	sign_add_opt(out, "X-Gitlab-Event", in->event_type);
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
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
