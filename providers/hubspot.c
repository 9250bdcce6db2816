/* SPDX-License-Identifier: ISC */
/*
 * hubspot.c - HubSpot webhooks (v3 signatures)
 *
 * "X-HubSpot-Signature-v3: <base64>" and "X-HubSpot-Request-Timestamp"
 * (milliseconds): HMAC-SHA256, keyed with the app's client secret, over
 * "POST" + URI + body + timestamp, as @hubspot/api-client's
 * Signature.isValid computes it; 300 s window, both ways.  The URI is the
 * endpoint's public_url (as registered in HubSpot), then "?" and the query
 * the request arrived with, if any.  HubSpot's documentation has the
 * receiver decode some percent-escapes (%3A, %2F, ...) first and the SDK
 * does not: both forms are tried.
 *
 * A batch: the body is an array of events, each stored under
 * "<subscriptionId>:<eventId>" (HubSpot says eventId alone is not
 * guaranteed to be unique).
 */
#include "base64.h"
#include "batch.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SIG_HEADER "X-HubSpot-Signature-v3"
#define TS_HEADER "X-HubSpot-Request-Timestamp"

static const char *
check(const provider_endpoint *ep)
{
	return ep->public_url == NULL
		       ? "provider hubspot needs public_url (the webhook URL HubSpot signs)"
		       : NULL;
}

/* public_url, then "?" and the query when there is one, xmalloc'd */
static char *
signed_uri(const char *base, const char *query)
{
	size_t cut = strcspn(base, "?");

	if (query == NULL || *query == '\0')
		return xasprintf("%.*s", (int)cut, base);
	return xasprintf("%.*s?%s", (int)cut, base, query);
}

/* the escapes HubSpot's documentation decodes before signing; true when any was */
static bool
decode_listed(char *s)
{
	static const char *const esc[][2] = {
		{"%3A", ":"}, {"%2F", "/"}, {"%3F", "?"}, {"%40", "@"}, {"%21", "!"}, {"%24", "$"},
		{"%27", "'"}, {"%28", "("}, {"%29", ")"}, {"%2A", "*"}, {"%2C", ","}, {"%3B", ";"},
	};
	char *w = s;
	bool changed = false;

	for (const char *r = s; *r != '\0';) {
		size_t k = 0;

		while (k < sizeof(esc) / sizeof(esc[0]) && strncasecmp(r, esc[k][0], 3) != 0)
			k++;
		if (k < sizeof(esc) / sizeof(esc[0])) {
			*w++ = esc[k][1][0];
			r += 3;
			changed = true;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return changed;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char want[HMAC_MAX_LEN + 3];
	bool too_long = false;
	size_t len, tslen;
	int64_t ms;
	verify_status st;
	char *uri;
	int rc = -1;
	const char *v = scheme_header(req, SIG_HEADER, &len, &too_long);
	const char *tsv = scheme_header(req, TS_HEADER, &tslen, &too_long);

	if (ep->public_url == NULL)
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url for hubspot");
	if (v == NULL || tsv == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED,
				   "missing " SIG_HEADER " or " TS_HEADER " header");
	if (too_long || base64_decode(v, len, want, sizeof(want)) != 32)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (scheme_timestamp_ms(tsv, tslen, &ms) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad timestamp header");
	if ((st = scheme_window(ep, req, ms / 1000)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	uri = signed_uri(ep->public_url, req->query);
	for (int pass = 0; pass < 2; pass++) {
		hmac_part parts[4] = {
			{"POST", 4}, {uri, strlen(uri)}, {req->body, req->body_len}, {tsv, tslen}};

		if (pass == 1 && !decode_listed(uri))
			break;
		rc = scheme_match_secrets(HMAC_SHA256, ep, parts, 4, want, 32, res);
		if (rc == 0)
			break;
	}
	free(uri);
	return rc;
}

/* hookinbox-send: in->url is the URL requested, which HubSpot signs as it is */
static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char ts[32], b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)];

	if (in->url == NULL) {
		snprintf(errbuf, errlen, "hubspot signing needs the URL");
		return -1;
	}
	snprintf(ts, sizeof(ts), "%lld", (long long)in->timestamp * 1000);
	hmac_part parts[4] = {{"POST", 4},
			      {in->url, strlen(in->url)},
			      {in->body, in->body_len},
			      {ts, strlen(ts)}};

	if (sign_mac_b64(HMAC_SHA256, in->secret, in->secret_len, parts, 4, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, SIG_HEADER, xstrdup(b64));
	sign_add(out, TS_HEADER, xstrdup(ts));
	sign_add(out, "X-HubSpot-Signature-Version", xstrdup("v3"));
	return 0;
}

/* "<subscriptionId>:<eventId>", both integers as their source text */
static int
extract(const jval *ev, envelope *env, const char **reason)
{
	envelope_field sub, id;
	char *key = NULL;
	const char *why = NULL;
	int rc = -1;

	if (env_need_id(env_take_json(&id, env_json_path(ev, "eventId"), true, &why), &why,
			reason) < 0)
		goto out;
	if (env_take_json(&sub, env_json_path(ev, "subscriptionId"), true, &why) != 0)
		ENV_REFUSE("no subscriptionId");
	key = xasprintf("%s:%s", sub, id);
	if (env_need_id(env_take(&env->event_id, key, strlen(key), &why), &why, reason) < 0)
		goto out;
	env_optional(
		env,
		env_take_json(&env->event_type, env_json_path(ev, "subscriptionType"), false, &why),
		"type", &why);
	env_optional(env, env_take_json(&env->object_id, env_json_path(ev, "objectId"), true, &why),
		     "object id", &why);
	env_optional(env, env_take_version(env, env_json_path(ev, "occurredAt")), "occurredAt",
		     &env_version_why);
	rc = 0;
out:
	free(key);
	return rc;
}

static const batch_rows rows = {.extract = extract};

static const char *const headers[] = {TS_HEADER, NULL};

const provider_ops provider_hubspot = {
	.name = "hubspot",
	.klass = "batch: HMAC of POST+URI+<body>+<ts>",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.sign = sign,
	.id_in_body = true,
	.batch = &rows,
};
