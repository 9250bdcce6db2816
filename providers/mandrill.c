/* SPDX-License-Identifier: ISC */
/*
 * mandrill.c - Mandrill (Mailchimp Transactional) webhooks
 *
 * "X-Mandrill-Signature: <base64>", HMAC-SHA1 keyed with the webhook's key
 * over the webhook URL exactly as entered in Mandrill (the endpoint's
 * public_url) followed by each POST parameter's name and value sorted by
 * name: Twilio's class.  No timestamp.  The form body's one parameter,
 * mandrill_events, is a JSON array of events, stored as one row keyed by
 * "sha256:<hex of the decoded mandrill_events>": signed, and the same
 * however the form is encoded; a retry repeats it.  The type is the
 * events' "event" when they all share one, else "mixed".  The HEAD
 * Mandrill sends when the webhook is added is answered 200.
 */
#include "base64.h"
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *
check(const provider_endpoint *ep)
{
	return ep->public_url == NULL
		       ? "provider mandrill needs public_url (the webhook URL Mandrill signs)"
		       : NULL;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char want[20 + 3];
	bool too_long = false;
	size_t len, n;
	form params = {NULL, 0};
	hmac_part *parts;
	int rc;
	const char *v = scheme_header(req, "X-Mandrill-Signature", &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing X-Mandrill-Signature header");
	if (too_long || base64_decode(v, len, want, sizeof(want)) != 20)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (ep->public_url == NULL)
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url for mandrill");
	if (form_parse((const char *)req->body, req->body_len, &params) < 0) {
		form_release(&params);
		return scheme_fail(res, VERIFY_MALFORMED, "too many form parameters");
	}
	form_sort_unique(&params);
	parts = scheme_form_parts(ep->public_url, &params, &n);
	rc = scheme_match_secrets(HMAC_SHA1, ep, parts, n, want, 20, res);
	free(parts);
	form_release(&params);
	return rc;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char b64[BASE64_ENCODED_SIZE(20)];

	if (in->url == NULL) {
		snprintf(errbuf, errlen, "mandrill signing needs the webhook URL");
		return -1;
	}
	if (sign_form_b64(in, in->url, true, b64, errbuf, errlen) < 0)
		return -1;
	sign_add(out, "X-Mandrill-Signature", xstrdup(b64));
	return 0;
}

/* *type = the events' common "event", "mixed" when they differ; untouched when there is none */
static void
common_event(const jval *events, envelope_field *type)
{
	const char *pos = NULL, *why = NULL;
	jscan_value el;
	envelope_field first = "";

	while (jscan_element(&events->v, &pos, &el) == 0) {
		jval e = {true, el};
		envelope_field t;

		if (env_take_json(&t, env_json_path(&e, "event"), false, &why) != 0)
			return;
		if (first[0] == '\0') {
			env_set(&first, t);
		} else if (strcmp(first, t) != 0) {
			env_set(type, "mixed");
			return;
		}
	}
	if (first[0] != '\0')
		env_set(type, first);
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	form f = {NULL, 0};
	const form_param *p;
	jval events;
	int rc = -1;

	(void)ep;
	if (form_parse((const char *)req->body, req->body_len, &f) < 0)
		ENV_REFUSE("too many form parameters");
	if ((p = form_get(&f, "mandrill_events")) == NULL)
		ENV_REFUSE("no mandrill_events");
	if (env_take_hash(&env->event_id, p->value, p->value_len) < 0)
		ENV_REFUSE("could not hash the events");
	events = env_parse_json((const unsigned char *)p->value, p->value_len);
	if (!events.present || events.v.type != JSCAN_ARRAY)
		env_note(env, "mandrill_events", "not a JSON array");
	else
		common_event(&events, &env->event_type);
	rc = 0;
out:
	form_release(&f);
	return rc;
}

static const char *const headers[] = {NULL};

const provider_ops provider_mandrill = {
	.name = "mandrill",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed, /* derived from the signed parameter */
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.extract = extract,
	.sign = sign,
	.greeting = scheme_greet_head, /* the HEAD of adding the webhook */
	.form_bodies = true,
	.id_in_body = true,
};
