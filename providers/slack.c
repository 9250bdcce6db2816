/* SPDX-License-Identifier: ISC */
/*
 * slack.c - Slack
 *
 * "X-Slack-Signature: v0=<hex>" and "X-Slack-Request-Timestamp",
 * HMAC-SHA256 over "v0:<ts>:<body>", 300 s window.  The event id is in the
 * body (JSON, or a form's trigger_id); url_verification is a handshake,
 * answered with its challenge and not stored.
 */
#include "fields.h"
#include "form.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>

static const v0_scheme scheme = {
	.sig_header = "X-Slack-Signature",
	.ts_header = "X-Slack-Request-Timestamp",
	.missing = "missing X-Slack-Signature or X-Slack-Request-Timestamp header",
};

/* url_verification: answered with its challenge, nothing stored */
static int
handshake(const provider_endpoint *ep, const request_view *req, size_t secret_index,
	  handshake_answer *ans, const char **reason)
{
	jval body = env_parse_object(req->body, req->body_len);
	envelope_field challenge;
	char *q;
	const char *why = NULL;

	(void)ep;
	(void)secret_index;
	if (!env_json_is(env_json_path(&body, "type"), "url_verification"))
		return 0;
	if (env_take_json(&challenge, env_json_path(&body, "challenge"), false, &why) != 0) {
		*reason = "bad challenge";
		return -1;
	}
	q = env_json_quote(challenge);
	ans->body = xasprintf("{\"challenge\":%s}\n", q);
	free(q);
	return 1;
}

/*
 * The id at path, or else the body's key: signed deliveries without an id
 * of their own (app_rate_limited, view_closed, block_suggestion) are keyed
 * by the hash of the signed body: a retry (same body) is its duplicate, and
 * Slack, which disables apps that keep failing, gets its 2xx.
 */
static int
id_or_body_key(jval at, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;

	if (!at.present)
		return env_take_body_hash(&env->event_id, req) < 0
			       ? (*reason = "could not hash the body", -1)
			       : 0;
	return env_need_id(env_take_json(&env->event_id, at, false, &why), &why, reason);
}

/*
 * Slack.  JSON bodies (Events API): event_callback has event_id and
 * event.type.  Form
 * bodies: slash commands (trigger_id, command) and interactivity
 * (payload=<JSON> with trigger_id and type).
 */
static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	form f = {NULL, 0};
	jval body;
	const jval *b = &body;
	jval type_at;
	const form_param *p;
	const char *why = NULL;
	int rc = -1;

	(void)ep;

	if (env_is_form(req)) {
		if (form_parse((const char *)req->body, req->body_len, &f) < 0)
			ENV_REFUSE("too many form parameters");
		if ((p = form_get(&f, "payload")) != NULL) {
			body = env_parse_object((const unsigned char *)p->value, p->value_len);
			if (!body.present)
				ENV_REFUSE("payload is not a JSON object");
			if (id_or_body_key(env_json_path(b, "trigger_id"), req, env, reason) < 0)
				goto out;
			env_optional(env,
				     env_take_json(&env->event_type, env_json_path(b, "type"),
						   false, &why),
				     "type", &why);
		} else {
			if ((p = form_get(&f, "trigger_id")) == NULL)
				ENV_REFUSE("no event id");
			if (env_need_id(env_take(&env->event_id, p->value, p->value_len, &why),
					&why, reason) < 0)
				goto out;
			if ((p = form_get(&f, "command")) != NULL)
				env_optional(
					env,
					env_take(&env->event_type, p->value, p->value_len, &why),
					"type", &why);
		}
		rc = 0;
		goto out;
	}
	body = env_parse_object(req->body, req->body_len);
	if (!body.present)
		ENV_REFUSE("body is not a JSON object");
	if (id_or_body_key(env_json_path(b, "event_id"), req, env, reason) < 0)
		goto out;
	/* an event's type, or the envelope's for app_rate_limited and the like */
	type_at = env_json_path(b, "event.type");
	if (!type_at.present)
		type_at = env_json_path(b, "type");
	env_optional(env, env_take_json(&env->event_type, type_at, false, &why), "type", &why);
	env_optional(env, env_take_version(env, env_json_path(b, "event_time")), "event_time",
		     &env_version_why);
	rc = 0;
out:
	form_release(&f);
	return rc;
}

static const char *const headers[] = {"X-Slack-Retry-Num", "X-Slack-Retry-Reason",
				      "X-Slack-Request-Timestamp", NULL};

const provider_ops provider_slack = {
	.name = "slack",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.v0 = &scheme, /* verifies and signs */
	.extract = extract,
	.handshake = handshake,
	.form_bodies = true,
};
