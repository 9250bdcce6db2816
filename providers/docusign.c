/* SPDX-License-Identifier: ISC */
/*
 * docusign.c - DocuSign Connect (JSON, HMAC enabled)
 *
 * "X-DocuSign-Signature-1" … "-N": base64 HMAC-SHA256 of the body, one
 * header per active Connect key (up to 100); any of them matching any
 * secret passes.  No timestamp.  The body has no event id: the delivery
 * key is "<data.envelopeId>:<event>:<generatedDateTime>", all signed; a
 * retry of the same message repeats them (retryCount is not in the key).
 *
 * Body: {"event": "envelope-completed", "apiVersion", "uri", "retryCount",
 *        "configurationId", "generatedDateTime", "data": {"accountId",
 *        "userId", "envelopeId", "recipientId", ...}}
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static const body_mac row = {
	.header = "X-DocuSign-Signature-1",
	.alg = HMAC_SHA256,
	.enc = HMAC_BASE64,
	.numbered = 100,
};

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval b = env_body(req, env);
	envelope_field event, when;
	char *id;
	int rc = -1, trc;

	(void)ep;
	if (!b.present)
		ENV_REFUSE("body is not a JSON object");
	if (env_need_id(env_take_json(&env->object_id, env_json_path(&b, "data.envelopeId"), false,
				      &why),
			&why, reason) < 0 ||
	    env_need_id(env_take_json(&event, env_json_path(&b, "event"), false, &why), &why,
			reason) < 0 ||
	    env_need_id(env_take_json(&when, env_json_path(&b, "generatedDateTime"), false, &why),
			&why, reason) < 0)
		goto out;
	id = xasprintf("%s:%s:%s", env->object_id, event, when);
	trc = env_take(&env->event_id, id, strlen(id), &why);
	free(id);
	if (env_need_id(trc, &why, reason) < 0)
		goto out;
	env_set(&env->event_type, event);
	env_optional(env, env_take_version(env, env_json_path(&b, "generatedDateTime")),
		     "generatedDateTime", &env_version_why);
	rc = 0;
out:
	return rc;
}

static const char *const headers[] = {NULL};

const provider_ops provider_docusign = {
	.name = "docusign",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.extract = extract,
	.body_mac = &row, /* verifies and signs */
	.id_in_body = true,
};
