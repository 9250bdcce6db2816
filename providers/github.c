/* SPDX-License-Identifier: ISC */
/*
 * github.c - GitHub
 *
 * "X-Hub-Signature-256: sha256=<hex>", HMAC-SHA256 over the body; no
 * timestamp.  The delivery id (X-GitHub-Delivery) is not signed.
 */
#include "fields.h"
#include "form.h"
#include "hex.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char want[32];
	bool too_long = false;
	size_t len;
	const char *v = scheme_header(req, "X-Hub-Signature-256", &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing X-Hub-Signature-256 header");
	if (too_long || len != 7 + 64 || strncmp(v, "sha256=", 7) != 0 ||
	    hex_decode(v + 7, 64, want, sizeof(want)) != 32)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	hmac_part part = {req->body, req->body_len};

	return scheme_match_secrets(HMAC_SHA256, ep, &part, 1, want, 32, res);
}

/*
 * Id and event from the headers; type is "<event>.<action>" when the body
 * has an action.  The object is body[<event>].id ("pull_request",
 * "release", ...) or body[<event> less a final 's'].id ("issues" ->
 * "issue"); events without such an object ("push") have none.
 */
static int
extract_fields(const request_view *req, const jval *b, envelope *env, const char **reason)
{
	const char *ev = req->header(req->ctx, "X-GitHub-Event");
	jval obj, id;
	const char *why = NULL;
	char key[ENVELOPE_FIELD_MAX + 1], *action;
	size_t n, alen;

	if (env_need_id(env_take_header(&env->event_id, req, "X-GitHub-Delivery", &why), &why,
			reason) < 0)
		return -1;
	if (ev == NULL)
		return 0;
	n = strnlen(ev, ENVELOPE_FIELD_MAX + 1);
	if (env_take(&env->event_type, ev, n, &why) < 0) {
		env_note(env, "type", why);
		return 0;
	}
	if (env_json_text(env_json_path(b, "action"), &action, &alen)) {
		char *t = xasprintf("%s.%s", ev, action);

		/* when refused, the type stays the event's alone */
		if (strlen(action) != alen || env_take(&env->event_type, t, strlen(t), &why) < 0)
			env_note(env, "type action", strlen(action) == alen ? why : ENV_WHY_UNTAME);
		free(t);
		free(action);
	}
	memcpy(key, ev, n + 1);
	obj = env_json_path(b, key);
	if ((!obj.present || obj.v.type != JSCAN_OBJECT) && n > 1 && key[n - 1] == 's') {
		key[n - 1] = '\0';
		obj = env_json_path(b, key);
	}
	if (obj.present && obj.v.type == JSCAN_OBJECT) {
		id = env_json_path(&obj, "id");
		env_optional(env, env_take_json(&env->object_id, id, true, &why), "object id",
			     &why);
	}
	return 0;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	jval b = env_no_value;
	form f = {NULL, 0};
	int rc;

	(void)ep;
	if (env_is_form(req)) {
		/* GitHub's form content type: payload=<JSON> (b points into f) */
		const form_param *p;

		if (form_parse((const char *)req->body, req->body_len, &f) == 0 &&
		    (p = form_get(&f, "payload")) != NULL)
			b = env_parse_object((const unsigned char *)p->value, p->value_len);
		/* the event id is a header: a body that is not JSON only loses its fields */
		if (!b.present)
			env_note(env, "body", "not a JSON object");
	} else {
		b = env_body(req, env);
	}
	rc = extract_fields(req, &b, env, reason);
	form_release(&f);
	return rc;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char hex[2 * HMAC_MAX_LEN + 1];

	if (sign_body_hex(in, "", hex, errbuf, errlen) < 0)
		return -1;
	sign_add(out, "X-Hub-Signature-256", xasprintf("sha256=%s", hex));
	sign_add_opt(out, "X-GitHub-Delivery", in->event_id);
	sign_add_opt(out, "X-GitHub-Event", in->event_type);
	return 0;
}

static const char *const headers[] = {"X-GitHub-Event", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
				      NULL};

const provider_ops provider_github = {
	.name = "github",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
