/* SPDX-License-Identifier: ISC */
/*
 * twilio.c - Twilio
 *
 * "X-Twilio-Signature: <base64>", HMAC-SHA1 keyed with the auth token over
 * the URL Twilio requested followed, for form bodies, by the parameters;
 * no timestamp.  The delivery id (I-Twilio-Idempotency-Token) is not
 * signed, and the signature does not cover a form body's bytes: the replay
 * defence compares what was signed (REPLAY_SIGNED).  The endpoint needs
 * public_url.
 */
#include "base64.h"
#include "ct.h"
#include "fields.h"
#include "form.h"
#include "hex.h"
#include "scheme.h"
#include "sha256.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *
check(const provider_endpoint *ep)
{
	return ep->public_url == NULL ? "provider twilio needs public_url (the URL Twilio signs)"
				      : NULL;
}

/*
 * Twilio: "X-Twilio-Signature: <base64>", HMAC-SHA1 keyed with the auth
 * token over the full URL Twilio requested followed, for form bodies, by
 * every parameter's name and value, sorted by name (repeated names: values
 * de-duplicated and sorted), as twilio-node's validateRequest does.  When
 * the query carries bodySHA256 (JSON bodies, validateRequestWithBody) no
 * parameters are appended and bodySHA256 must equal hex(SHA-256(body)).
 *
 * The URL is ep->public_url up to any '?', then "?" + the request's query
 * string when there is one.  Like the SDK we try it as configured and with
 * its port toggled: the default port added when it has none, the port
 * removed when it has one.
 */
static size_t
twilio_urls(const char *public_url, const char *query, char *urls[2])
{
	size_t blen = strcspn(public_url, "?#"), n = 0;
	const char *q = query != NULL && *query != '\0' ? query : NULL;
	const char *scheme_end = strstr(public_url, "://");
	char *base = xstrndup(public_url, blen);

	urls[n++] = q != NULL ? xasprintf("%s?%s", base, q) : xstrdup(base);
	if (scheme_end != NULL && (size_t)(scheme_end - public_url) < blen) {
		const char *auth = scheme_end + 3;
		size_t alen = strcspn(auth, "/?#"), hoststart = 0, colon = 0;
		bool has_port = false;

		for (size_t i = 0; i < alen; i++) {
			if (auth[i] == '@')
				hoststart = i + 1;
		}
		for (size_t i = hoststart; i < alen; i++) {
			if (auth[i] == ']')
				has_port = false;
			else if (auth[i] == ':') {
				has_port = true;
				colon = i;
			}
		}
		if (has_port) {
			/* drop ":port" */
			size_t pre = (size_t)(auth - public_url) + colon;
			size_t post = (size_t)(auth - public_url) + alen;

			urls[n++] =
				xasprintf("%.*s%.*s%s%s", (int)pre, base, (int)(blen - post),
					  base + post, q != NULL ? "?" : "", q != NULL ? q : "");
		} else {
			const char *port = NULL;
			size_t at = (size_t)(auth - public_url) + alen;

			if (strncmp(public_url, "https://", 8) == 0)
				port = ":443";
			else if (strncmp(public_url, "http://", 7) == 0)
				port = ":80";
			if (port != NULL)
				urls[n++] = xasprintf("%.*s%s%.*s%s%s", (int)at, base, port,
						      (int)(blen - at), base + at,
						      q != NULL ? "?" : "", q != NULL ? q : "");
		}
	}
	free(base);
	return n;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	bool too_long = false, body_hash = false;
	size_t len, nurls = 0, nparts = 0;
	char *urls[2] = {NULL, NULL};
	form params = {NULL, 0}, query = {NULL, 0};
	hmac_part *parts = NULL;
	const form_param *bh = NULL;
	int rc = -1;
	const char *v = scheme_header(req, "X-Twilio-Signature", &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing X-Twilio-Signature header");
	if (too_long || len != BASE64_ENCODED_SIZE(20) - 1)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (ep->public_url == NULL)
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url for twilio");

	if (req->query != NULL) {
		if (form_parse(req->query, strlen(req->query), &query) < 0) {
			rc = scheme_fail(res, VERIFY_MALFORMED, "too many query parameters");
			goto out;
		}
		bh = form_get(&query, "bodySHA256");
		body_hash = bh != NULL;
	}
	if (!body_hash) {
		/* no bodySHA256: the body must be form parameters, all signed */
		if (form_parse((const char *)req->body, req->body_len, &params) < 0) {
			rc = scheme_fail(res, VERIFY_MALFORMED, "too many form parameters");
			goto out;
		}
		form_sort_unique(&params);
	}

	nurls = twilio_urls(ep->public_url, req->query, urls);
	parts = scheme_form_parts(urls[0], &params, &nparts);

	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		for (size_t u = 0; u < nurls; u++) {
			unsigned char mac[HMAC_MAX_LEN];
			char b64[BASE64_ENCODED_SIZE(20)];
			bool match;

			parts[0].data = urls[u];
			parts[0].len = strlen(urls[u]);
			if (scheme_mac_secret(HMAC_SHA1, ep, i, parts, nparts, mac) < 0) {
				rc = scheme_fail(res, VERIFY_MISMATCH,
						 "signature computation failed");
				goto out;
			}
			base64_encode(mac, 20, b64);
			match = ct_equal(b64, strlen(b64), v, len);
			secure_wipe(mac, sizeof(mac));
			if (!match)
				continue;
			if (body_hash) {
				unsigned char d[SHA256_LEN];
				char hex[2 * SHA256_LEN + 1];

				if (sha256_digest(req->body, req->body_len, d) < 0) {
					rc = scheme_fail(res, VERIFY_MISMATCH,
							 "signature computation failed");
					goto out;
				}
				hex_encode(d, sizeof(d), hex);
				if (!ct_equal(hex, strlen(hex), bh->value, bh->value_len)) {
					rc = scheme_fail(res, VERIFY_MISMATCH,
							 "body hash mismatch");
					goto out;
				}
			}
			rc = scheme_pass(res, i);
			if (!body_hash) {
				/* what was signed, with the URL as configured (not the port
				 * variant) */
				parts[0].data = urls[0];
				parts[0].len = strlen(urls[0]);
				if (sha256_parts(parts, nparts, res->signed_sha256) < 0) {
					rc = scheme_fail(res, VERIFY_MISMATCH,
							 "signature computation failed");
					goto out;
				}
				res->has_signed_sha256 = true;
			}
			goto out;
		}
	}
	rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
out:
	free(parts);
	for (size_t u = 0; u < 2; u++)
		free(urls[u]);
	form_release(&params);
	form_release(&query);
	return rc;
}

/*
 * Twilio: the I-Twilio-Idempotency-Token header (the same on retries);
 * without it a form callback's MessageSid/SmsSid/CallSid plus its status
 * ("SM123:delivered"), so each status change is its own event.  Type is
 * "twilio.<status>", else "twilio.message" / "twilio.call".
 */
static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	static const char *const sids[] = {"MessageSid", "SmsSid", "CallSid"};
	static const char *const statuses[] = {"MessageStatus", "SmsStatus", "CallStatus"};
	form f = {NULL, 0};
	jval body;
	const jval *b = &body;
	const form_param *sid = NULL, *status = NULL;
	const char *why = NULL;
	int rc = -1, hrc;
	size_t which = 0;

	(void)ep;

	hrc = env_take_header(&env->event_id, req, "I-Twilio-Idempotency-Token", &why);
	if (hrc < 0 && env_need_id(hrc, &why, reason) < 0)
		goto out;
	if (req->body_len > 0 && (req->body[0] == '{' || req->body[0] == '[')) {
		body = env_parse_json(req->body, req->body_len);
		if (!body.present && hrc > 0)
			ENV_REFUSE("body is not JSON");
		if (!body.present)
			env_note(env, "body", "not JSON");
		if (hrc > 0 &&
		    env_need_id(env_take_json(&env->event_id, env_json_path(b, "id"), false, &why),
				&why, reason) < 0)
			goto out;
		env_optional(env,
			     env_take_json(&env->event_type, env_json_path(b, "type"), false, &why),
			     "type", &why);
		if (env->event_type[0] == '\0')
			env_set(&env->event_type, "twilio.event");
		rc = 0;
		goto out;
	}
	if (form_parse((const char *)req->body, req->body_len, &f) < 0)
		ENV_REFUSE("too many form parameters");
	for (size_t i = 0; i < 3 && sid == NULL; i++) {
		sid = form_get(&f, sids[i]);
		which = i;
	}
	for (size_t i = 0; i < 3 && status == NULL; i++)
		status = form_get(&f, statuses[i]);
	if (sid != NULL && env_take(&env->object_id, sid->value, sid->value_len, &why) < 0) {
		env_note(env, "object id", why);
		sid = NULL;
	}
	if (status != NULL) {
		char *t = xasprintf("twilio.%.*s", (int)status->value_len, status->value);

		if (env_take(&env->event_type, t, strlen(t), &why) < 0) {
			env_note(env, "type", why);
			status = NULL;
		}
		free(t);
	}
	if (env->event_type[0] == '\0')
		env_set(&env->event_type, sid == NULL  ? "twilio.event"
					  : which == 2 ? "twilio.call"
						       : "twilio.message");
	if (hrc > 0) {
		char *id;
		int trc;

		if (sid == NULL)
			ENV_REFUSE("no event id");
		id = status != NULL ? xasprintf("%s:%.*s", env->object_id, (int)status->value_len,
						status->value)
				    : xstrdup(env->object_id);
		trc = env_take(&env->event_id, id, strlen(id), &why);
		free(id);
		if (env_need_id(trc, &why, reason) < 0)
			goto out;
	}
	rc = 0;
out:
	form_release(&f);
	return rc;
}

/* JSON bodies: signed through a bodySHA256 query parameter */
static char *
json_body_url(const char *url, const unsigned char *body, size_t len)
{
	unsigned char d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];

	if (sha256_digest(body, len, d) < 0)
		abort(); /* only fails when OpenSSL itself is broken */
	hex_encode(d, sizeof(d), hex);
	return xasprintf("%s%cbodySHA256=%s", url, strchr(url, '?') != NULL ? '&' : '?', hex);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	form query = {NULL, 0};
	const char *q;
	char b64[BASE64_ENCODED_SIZE(20)];
	int rc = -1;

	if (in->url == NULL) {
		snprintf(errbuf, errlen, "twilio signing needs the URL");
		return -1;
	}
	q = strchr(in->url, '?');
	if (q != NULL && form_parse(q + 1, strlen(q + 1), &query) < 0) {
		snprintf(errbuf, errlen, "too many query parameters");
		goto out;
	}
	/* with bodySHA256 in the query, the URL alone is signed */
	if (sign_form_b64(in, in->url, form_get(&query, "bodySHA256") == NULL, b64, errbuf,
			  errlen) < 0)
		goto out;
	sign_add(out, "X-Twilio-Signature", xstrdup(b64));
	sign_add_opt(out, "I-Twilio-Idempotency-Token", in->event_id);
	rc = 0;
out:
	form_release(&query);
	return rc;
}

static const char *const headers[] = {"I-Twilio-Idempotency-Token", NULL};

const provider_ops provider_twilio = {
	.name = "twilio",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_SIGNED,
	.check = check,
	.verify = verify,
	.extract = extract,
	.sign = sign,
	.form_bodies = true,
	.json_body_url = json_body_url,
};
