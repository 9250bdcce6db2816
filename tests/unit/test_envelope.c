/* SPDX-License-Identifier: ISC */
/*
 * test_envelope.c - envelope fields per provider, and hostile bodies
 */
#include "headers.h"
#include "tap.h"

#include "endpoint.h"
#include "envelope.h"
#include "verify.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* headers as "Name", "value", ..., NULL */
static int
extract(provider p, const hmac_conf *h, const char *body, size_t len, envelope *env,
	const char **reason, const char *const *hdrs)
{
	provider_endpoint ep;
	test_headers t = {{0}, {0}, 0};
	request_view rv;
	int rc;

	memset(&ep, 0, sizeof(ep));
	ep.provider = p;
	if (h != NULL)
		ep.hmac = *h;
	for (size_t i = 0; hdrs != NULL && hdrs[i] != NULL; i += 2)
		headers_set(&t, hdrs[i], hdrs[i + 1]);
	memset(&rv, 0, sizeof(rv));
	rv.header = headers_lookup;
	rv.ctx = &t;
	rv.body = (const unsigned char *)body;
	rv.body_len = len;
	rv.now = 1700000000;
	*reason = NULL;
	rc = envelope_extract(&ep, &rv, env, reason);
	headers_clear(&t); /* the envelope holds copies */
	return rc;
}

/* envelope_handshake on a body; *answer NULL unless it returns 1 */
static int
handshake(provider p, const char *body, char **answer)
{
	provider_endpoint ep;
	test_headers t = {{0}, {0}, 0};
	request_view rv;
	handshake_answer ans;
	const char *reason;
	int rc;

	memset(&ep, 0, sizeof(ep));
	ep.provider = p;
	memset(&rv, 0, sizeof(rv));
	rv.header = headers_lookup;
	rv.ctx = &t;
	rv.body = (const unsigned char *)body;
	rv.body_len = strlen(body);
	rc = envelope_handshake(&ep, &rv, 0, &ans, &reason);
	*answer = ans.body;
	ans.body = NULL;
	handshake_answer_release(&ans);
	return rc;
}

static bool
streq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* an envelope field as the test names it: NULL when absent */
static bool
field_is(const char *field, const char *want)
{
	return streq(envelope_or_null(field), want);
}

static const char *
shown(const char *field)
{
	return field[0] != '\0' ? field : "-";
}

static void
check(const char *what, provider p, const hmac_conf *h, const char *body, const char *const *hdrs,
      const char *id, const char *type, const char *object, bool has_version, int64_t version)
{
	envelope env;
	const char *reason;
	int rc = extract(p, h, body, strlen(body), &env, &reason, hdrs);

	ok(rc == 0 && field_is(env.event_id, id) && field_is(env.event_type, type) &&
		   field_is(env.object_id, object) && env.has_version == has_version &&
		   (!has_version || env.version == version),
	   "%s: id=%s type=%s object=%s version=%lld (%s)", what, shown(env.event_id),
	   shown(env.event_type), shown(env.object_id), (long long)env.version,
	   rc == 0 ? "ok" : reason);
	envelope_release(&env);
}

/* accepted, with the note saying what did not parse (and that field NULL) */
static void
noted(const char *what, provider p, const hmac_conf *h, const char *body, const char *const *hdrs,
      const char *want_note)
{
	envelope env;
	const char *reason;
	int rc = extract(p, h, body, strlen(body), &env, &reason, hdrs);

	ok(rc == 0 && env.event_id[0] != '\0' && streq(env.note, want_note),
	   "%s: stored, note \"%s\" (%s)", what, env.note ? env.note : "-",
	   rc == 0 ? "ok" : reason);
	envelope_release(&env);
}

static void
reject(const char *what, provider p, const hmac_conf *h, const char *body, size_t len,
       const char *const *hdrs, const char *want_reason)
{
	envelope env;
	const char *reason;
	int rc = extract(p, h, body, len, &env, &reason, hdrs);

	ok(rc == -1 && reason != NULL && (want_reason == NULL || strcmp(reason, want_reason) == 0),
	   "%s: rejected (%s)", what, reason != NULL ? reason : "no reason");
	envelope_release(&env);
}

/* {"id":"<unit n times><tail>"} in buf (cap bytes) */
static const char *
id_body(char *buf, size_t cap, const char *unit, size_t n, const char *tail)
{
	size_t o = (size_t)snprintf(buf, cap, "{\"id\":\"");

	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s", unit);
	snprintf(buf + o, cap - o, "%s\"}", tail);
	return buf;
}

static void
test_stripe(void)
{
	const char *b =
		"{\"id\":\"evt_1NG8Du2eZvKYlo2CUI79vXWy\",\"object\":\"event\",\"created\":1686089970,"
		"\"type\":\"customer.updated\",\"data\":{\"object\":{\"id\":\"cus_9s6XKzkNRiz8i3\"}}}";
	char *s;

	check("stripe", PROVIDER_STRIPE, NULL, b, NULL, "evt_1NG8Du2eZvKYlo2CUI79vXWy",
	      "customer.updated", "cus_9s6XKzkNRiz8i3", true, 1686089970);
	check("stripe: odd key order and whitespace", PROVIDER_STRIPE, NULL,
	      "\r\n { \"data\" : { \"object\" : {\"id\" : \"o\"} } ,\n\t\"type\":\"a.b\", \"id\" : \"evt_2\" } \n",
	      NULL, "evt_2", "a.b", "o", false, 0);
	check("stripe: unicode escapes in type", PROVIDER_STRIPE, NULL,
	      "{\"id\":\"evt_3\",\"type\":\"caf\\u00e9.\xe6\x97\xa5\"}", NULL, "evt_3",
	      "caf\xc3\xa9.\xe6\x97\xa5", NULL, false, 0);
	reject("stripe: no id", PROVIDER_STRIPE, NULL, "{\"type\":\"x\"}", 12, NULL, "no event id");
	reject("stripe: numeric id", PROVIDER_STRIPE, NULL, "{\"id\":12}", 9, NULL,
	       "event id is not a string");
	reject("stripe: empty id", PROVIDER_STRIPE, NULL, "{\"id\":\"\"}", 9, NULL,
	       "event id is empty");
	reject("stripe: control character in id", PROVIDER_STRIPE, NULL, "{\"id\":\"a\\u0001b\"}",
	       17, NULL, "event id is not valid UTF-8 or has control characters");
	reject("stripe: NUL in id", PROVIDER_STRIPE, NULL, "{\"id\":\"a\\u0000b\"}", 17, NULL,
	       "event id is not valid UTF-8 or has control characters");
	noted("stripe: a version that is not a number", PROVIDER_STRIPE, NULL,
	      "{\"id\":\"evt_v\",\"type\":\"t\",\"created\":\"1700000000\"}", NULL,
	      "created: not an integer or RFC 3339 time");
	noted("stripe: type and object id of the wrong kind", PROVIDER_STRIPE, NULL,
	      "{\"id\":\"evt_w\",\"type\":[1],\"data\":{\"object\":{\"id\":\"a\\u0007\"}}}", NULL,
	      "type: not a string; object id: not valid UTF-8 or has control characters");
	reject("stripe: invalid UTF-8", PROVIDER_STRIPE, NULL, "{\"id\":\"a\xc3\x28\"}", 12, NULL,
	       NULL);
	reject("stripe: array body", PROVIDER_STRIPE, NULL, "[1,2]", 5, NULL,
	       "body is not a JSON object");
	reject("stripe: empty body", PROVIDER_STRIPE, NULL, "", 0, NULL,
	       "body is not a JSON object");
	reject("stripe: trailing garbage", PROVIDER_STRIPE, NULL, "{\"id\":\"e\"} x", 12, NULL,
	       NULL);
	reject("stripe: two values", PROVIDER_STRIPE, NULL, "{\"id\":\"e\"}{}", 12, NULL, NULL);
	reject("stripe: truncated", PROVIDER_STRIPE, NULL, "{\"id\":\"e\"", 9, NULL, NULL);
	reject("stripe: embedded NUL after value", PROVIDER_STRIPE, NULL, "{\"id\":\"e\"}\0", 11,
	       NULL, NULL);

	s = xmalloc(300);
	memset(s, 'a', 300);
	memcpy(s, "{\"id\":\"", 7);
	memcpy(s + 7 + 256, "\"}", 3);
	memcpy(s, "{\"id\":\"evt_t\",\"type\":\"", 22);
	memset(s + 22, 'a', 256);
	memcpy(s + 22 + 256, "\"}", 3);
	noted("stripe: 256-byte type", PROVIDER_STRIPE, NULL, s, NULL, "type: over 255 bytes");
	memset(s, 'a', 300);
	memcpy(s, "{\"id\":\"", 7);
	memcpy(s + 7 + 256, "\"}", 3);
	reject("stripe: 256-byte id", PROVIDER_STRIPE, NULL, s, strlen(s), NULL,
	       "event id over 255 bytes");
	free(s);

	/* the limit is on the unescaped bytes; a lone surrogate is refused wherever it is */
	{
		char body[2048], want[256];

		memset(want, 'a', 255);
		want[255] = '\0';
		check("stripe: 255-byte id", PROVIDER_STRIPE, NULL,
		      id_body(body, sizeof(body), "a", 255, ""), NULL, want, NULL, NULL, false, 0);
		check("stripe: 255-byte id written with escapes", PROVIDER_STRIPE, NULL,
		      id_body(body, sizeof(body), "\\u0061", 255, ""), NULL, want, NULL, NULL,
		      false, 0);
		id_body(body, sizeof(body), "a", 254, "\\u00e9");
		reject("stripe: 254 bytes and a 2-byte escape", PROVIDER_STRIPE, NULL, body,
		       strlen(body), NULL, "event id over 255 bytes");
		id_body(body, sizeof(body), "a", 300, "\\ud800");
		reject("stripe: a lone surrogate after 300 bytes", PROVIDER_STRIPE, NULL, body,
		       strlen(body), NULL, "event id is not valid UTF-8 or has control characters");
		id_body(body, sizeof(body), "a", 300, "\\u0001");
		reject("stripe: a control character after 300 bytes", PROVIDER_STRIPE, NULL, body,
		       strlen(body), NULL, "event id over 255 bytes");
	}

	/* 10,000 levels of nesting: a clean error, no deep recursion */
	{
		size_t depth = 10000, len = 2 * depth + 8, o = 0;
		char *deep = xmalloc(len);

		o += (size_t)snprintf(deep, len, "{\"a\":");
		for (size_t i = 0; i < depth; i++)
			deep[o++] = '[';
		for (size_t i = 0; i < depth - 4; i++)
			deep[o++] = ']';
		deep[o] = '\0';
		reject("stripe: 10,000-deep JSON", PROVIDER_STRIPE, NULL, deep, o, NULL,
		       "body is not a JSON object");
		free(deep);
	}
}

static void
test_github(void)
{
	const char *h[] = {"X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			   "X-GitHub-Event", "issues", NULL};
	const char *hp[] = {"X-GitHub-Delivery",
			    "d1",
			    "X-GitHub-Event",
			    "pull_request",
			    "Content-Type",
			    "application/x-www-form-urlencoded",
			    NULL};
	const char *hpush[] = {"X-GitHub-Delivery", "d2", "X-GitHub-Event", "push", NULL};
	const char *hnone[] = {"X-GitHub-Event", "push", NULL};

	check("github: issues", PROVIDER_GITHUB, NULL,
	      "{\"action\":\"opened\",\"issue\":{\"id\":1347}}", h,
	      "72d3162e-cc78-11e3-81ab-4c9367dc0958", "issues.opened", "1347", false, 0);
	check("github: form payload", PROVIDER_GITHUB, NULL,
	      "payload=%7B%22action%22%3A%22closed%22%2C%22pull_request%22%3A%7B%22id%22%3A9%7D%7D",
	      hp, "d1", "pull_request.closed", "9", false, 0);
	check("github: push", PROVIDER_GITHUB, NULL, "{\"ref\":\"refs/heads/main\"}", hpush, "d2",
	      "push", NULL, false, 0);
	reject("github: no delivery header", PROVIDER_GITHUB, NULL, "{}", 2, hnone, "no event id");
}

static void
test_standard(void)
{
	const char *h[] = {"webhook-id", "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", NULL};
	const char *hs[] = {"svix-id", "msg_svix", NULL};
	const char *b = "{\"type\":\"invoice.paid\",\"timestamp\":\"2022-11-03T20:26:10.344522Z\","
			"\"data\":{\"id\":\"inv_1\",\"amount\":3}}";

	check("standard", PROVIDER_STANDARD, NULL, b, h, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
	      "invoice.paid", "inv_1", true, INT64_C(1667507170344522));
	check("standard: svix names", PROVIDER_STANDARD, NULL, b, hs, "msg_svix", "invoice.paid",
	      "inv_1", true, INT64_C(1667507170344522));
	check("svix", PROVIDER_SVIX, NULL, "{\"type\":\"t\",\"data\":{\"id\":5}}", hs, "msg_svix",
	      "t", NULL, false, 0);
	reject("standard: no id header", PROVIDER_STANDARD, NULL, b, strlen(b), NULL,
	       "no event id");
	noted("standard: bad timestamp", PROVIDER_STANDARD, NULL, "{\"timestamp\":\"yesterday\"}",
	      h, "timestamp: not an integer or RFC 3339 time");
	noted("standard: timestamp without an offset", PROVIDER_STANDARD, NULL,
	      "{\"type\":\"t\",\"timestamp\":\"2024-01-01T00:00:00\"}", h,
	      "timestamp: not an integer or RFC 3339 time");
}

static void
test_shopify(void)
{
	const char *h[] = {"X-Shopify-Webhook-Id",
			   "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
			   "X-Shopify-Event-Id",
			   "98880550-7158-44d4-b7cd-2c97c8a091b5",
			   "X-Shopify-Topic",
			   "orders/create",
			   "X-Shopify-Triggered-At",
			   "2023-03-29T18:00:27.877041743Z",
			   NULL};
	const char *h2[] = {"X-Shopify-Webhook-Id", "wh-1", "X-Shopify-Topic", "products/update",
			    NULL};

	check("shopify", PROVIDER_SHOPIFY, NULL,
	      "{\"id\":820982911946154508,\"admin_graphql_api_id\":\"gid://shopify/Order/820982911946154508\"}",
	      h, "98880550-7158-44d4-b7cd-2c97c8a091b5", "orders/create",
	      "gid://shopify/Order/820982911946154508", true, INT64_C(1680112827877041));
	check("shopify: webhook id, numeric id, updated_at", PROVIDER_SHOPIFY, NULL,
	      "{\"id\":632910392,\"updated_at\":\"2023-11-01T01:00:00+01:00\"}", h2, "wh-1",
	      "products/update", "632910392", true, INT64_C(1698796800000000));
}

static void
test_slack(void)
{
	const char *form[] = {"Content-Type", "application/x-www-form-urlencoded", NULL};
	const char *json[] = {"Content-Type", "application/json", NULL};
	envelope env;
	const char *reason;
	char *answer;
	const char *uv =
		"{\"token\":\"Jhj5dZrVaK7ZwHHjRyZWjbDl\",\"challenge\":"
		"\"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P\",\"type\":\"url_verification\"}";

	ok(handshake(PROVIDER_SLACK, uv, &answer) == 1 &&
		   streq(answer, "{\"challenge\":"
				 "\"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P\"}\n"),
	   "slack: url_verification answered with its challenge");
	free(answer);
	ok(handshake(PROVIDER_SLACK, "{\"type\":\"url_verification\",\"challenge\":\"a\\\"b\"}",
		     &answer) == 1 &&
		   streq(answer, "{\"challenge\":\"a\\\"b\"}\n"),
	   "slack: a challenge with a quote is quoted in the answer");
	free(answer);
	ok(handshake(PROVIDER_SLACK, "{\"type\":\"url_verification\",\"challenge\":7}", &answer) ==
			   -1 &&
		   answer == NULL,
	   "slack: url_verification without a string challenge is refused");
	ok(handshake(PROVIDER_SLACK, "{\"type\":\"event_callback\"}", &answer) == 0,
	   "slack: an event is no handshake");
	(void)env;
	(void)reason;
	check("slack: event_callback", PROVIDER_SLACK, NULL,
	      "{\"type\":\"event_callback\",\"event_id\":\"Ev08MFMKH6\",\"event_time\":1234567890,"
	      "\"event\":{\"type\":\"app_mention\",\"text\":\"hi\"}}",
	      json, "Ev08MFMKH6", "app_mention", NULL, true, 1234567890);
	check("slack: slash command", PROVIDER_SLACK, NULL,
	      "token=x&command=%2Fwebhook-collect&text=&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
	      form, "398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c", "/webhook-collect",
	      NULL, false, 0);
	check("slack: interactive payload", PROVIDER_SLACK, NULL,
	      "payload=%7B%22type%22%3A%22block_actions%22%2C%22trigger_id%22%3A%2212.34.ab%22%7D",
	      form, "12.34.ab", "block_actions", NULL, false, 0);
	/* signed but without an id of its own: keyed by the signed body's hash */
	check("slack: no event_id", PROVIDER_SLACK, NULL, "{\"type\":\"app_rate_limited\"}", json,
	      "sha256:fd537bf82a32dd204cb7788eccb6a028326f9e5e208f889eea642eda0a480c7e",
	      "app_rate_limited", NULL, false, 0);
	reject("slack: form without trigger_id", PROVIDER_SLACK, NULL, "token=x&command=%2Fa", 20,
	       form, "no event id");
}

static void
test_paddle_twilio_gitlab(void)
{
	const char *tw_hdr[] = {"I-Twilio-Idempotency-Token", "tok-123", "Content-Type",
				"application/x-www-form-urlencoded", NULL};
	const char *tw_form[] = {"Content-Type", "application/x-www-form-urlencoded", NULL};
	const char *gl[] = {"X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e",
			    "X-Gitlab-Event", "Merge Request Hook", NULL};

	check("paddle", PROVIDER_PADDLE, NULL,
	      "{\"event_id\":\"evt_01h8bzakzx3hm2fmen703n5q45\",\"event_type\":\"subscription.updated\","
	      "\"occurred_at\":\"2023-08-18T09:33:15.443758Z\",\"data\":{\"id\":\"sub_01h8bx\"}}",
	      NULL, "evt_01h8bzakzx3hm2fmen703n5q45", "subscription.updated", "sub_01h8bx", true,
	      INT64_C(1692351195443758));
	check("twilio: idempotency header", PROVIDER_TWILIO, NULL,
	      "MessageSid=SM1&MessageStatus=delivered", tw_hdr, "tok-123", "twilio.delivered",
	      "SM1", false, 0);
	check("twilio: sid and status", PROVIDER_TWILIO, NULL,
	      "AccountSid=AC1&MessageSid=SM1&MessageStatus=sent", tw_form, "SM1:sent",
	      "twilio.sent", "SM1", false, 0);
	check("twilio: call without status", PROVIDER_TWILIO, NULL, "CallSid=CA9&From=%2B1555",
	      tw_form, "CA9", "twilio.call", "CA9", false, 0);
	reject("twilio: nothing to identify", PROVIDER_TWILIO, NULL, "From=%2B1555", 12, tw_form,
	       "no event id");
	check("gitlab", PROVIDER_GITLAB, NULL,
	      "{\"object_kind\":\"merge_request\",\"object_attributes\":{\"id\":99,\"iid\":1}}", gl,
	      "13792a34-cac6-4fda-95a8-c58e00a3954e", "Merge Request Hook", "99", false, 0);
	reject("gitlab: no uuid", PROVIDER_GITLAB, NULL, "{}", 2, NULL, "no event id");
	/* Square's published test notification (nanoseconds are cut to microseconds) */
	check("square", PROVIDER_SQUARE, NULL,
	      "{\"merchant_id\":\"MLEFBHHSJGVHD\",\"type\":\"webhooks.test_notification\","
	      "\"event_id\":\"ac3ac95b-f97d-458c-a6e6-18981597e05f\","
	      "\"created_at\":\"2022-07-13T20:30:59.037339943Z\","
	      "\"data\":{\"type\":\"webhooks\",\"id\":\"bc368e64-01aa-407e-b46e-3231809b1129\"}}",
	      NULL, "ac3ac95b-f97d-458c-a6e6-18981597e05f", "webhooks.test_notification",
	      "bc368e64-01aa-407e-b46e-3231809b1129", true, INT64_C(1657744259037339));
	reject("square: no event_id", PROVIDER_SQUARE, NULL,
	       "{\"data\":{\"type\":\"webhooks\",\"id\":\"x\"}}", 37, NULL, "no event id");
}

static void
test_hmac(void)
{
	char idf[] = "event.id", typef[] = "event.type", objf[] = "data.object.id",
	     verf[] = "data.version";
	char idh[] = "X-Event-Id", typeh[] = "X-Event-Type";
	hmac_conf h;
	const char *hdrs[] = {"X-Event-Id", "hdr-id", "X-Event-Type", "hdr.type", NULL};

	memset(&h, 0, sizeof(h));
	h.id_field = idf;
	h.type_field = typef;
	h.object_field = objf;
	h.version_field = verf;
	check("hmac: fields", PROVIDER_HMAC, &h,
	      "{\"event\":{\"id\":42,\"type\":\"a.b\"},\"data\":{\"object\":{\"id\":\"o1\"},\"version\":7}}",
	      NULL, "42", "a.b", "o1", true, 7);
	check("hmac: RFC 3339 version", PROVIDER_HMAC, &h,
	      "{\"event\":{\"id\":\"e\"},\"data\":{\"version\":\"1970-01-01T00:00:01.5Z\"}}", NULL,
	      "e", NULL, NULL, true, 1500000);
	h.id_header = idh;
	h.type_header = typeh;
	check("hmac: headers first", PROVIDER_HMAC, &h, "{\"event\":{\"id\":\"e\"}}", hdrs,
	      "hdr-id", "hdr.type", NULL, false, 0);
	noted("hmac: bad version", PROVIDER_HMAC, &h, "{\"data\":{\"version\":true}}", hdrs,
	      "version: not an integer or RFC 3339 time");
	memset(&h, 0, sizeof(h));
	h.id_header = idh;
	check("hmac: header only, any body", PROVIDER_HMAC, &h, "\x01\x02 not json", hdrs, "hdr-id",
	      NULL, NULL, false, 0);
	reject("hmac: header only, header missing", PROVIDER_HMAC, &h, "x", 1, NULL, "no event id");
}

static void
test_more_providers(void)
{
	const char *json[] = {"Content-Type", "application/json", NULL};
	const char *rzp[] = {"X-Razorpay-Event-Id", "Lrn8yZ0aUKh2X9", NULL};
	const char *box[] = {"box-delivery-id", "bd-1", NULL};
	const char *zd[] = {"x-zendesk-webhook-invocation-id", "zi-1", NULL};
	const char *bb[] = {"X-Request-UUID", "a1b2", "X-Event-Key", "repo:push", NULL};
	const char *lin[] = {"Linear-Delivery", "234d1a4e-b617-4388-90fe-adc3633d6b72",
			     "Linear-Event", "Issue", NULL};
	char *answer;

	check("razorpay: id header, event, created_at", PROVIDER_RAZORPAY, NULL,
	      "{\"entity\":\"event\",\"event\":\"payment.captured\",\"created_at\":1700000000}",
	      rzp, "Lrn8yZ0aUKh2X9", "payment.captured", NULL, true, 1700000000);
	check("bitbucket: headers", PROVIDER_BITBUCKET, NULL, "{}", bb, "a1b2", "repo:push", NULL,
	      false, 0);
	check("linear: delivery header, event header, data.id, webhookTimestamp", PROVIDER_LINEAR,
	      NULL,
	      "{\"action\":\"create\",\"data\":{\"id\":\"iss-1\"},\"webhookTimestamp\":1700000000123}",
	      lin, "234d1a4e-b617-4388-90fe-adc3633d6b72", "Issue", "iss-1", true,
	      INT64_C(1700000000123));
	check("mux: id, type, object.id, created_at", PROVIDER_MUX, NULL,
	      "{\"type\":\"video.asset.ready\",\"object\":{\"type\":\"asset\",\"id\":\"a1\"},"
	      "\"id\":\"3a56ac3d\",\"created_at\":\"2023-11-14T22:13:20Z\"}",
	      json, "3a56ac3d", "video.asset.ready", "a1", true, INT64_C(1700000000000000));
	check("workos: id, event, data.id", PROVIDER_WORKOS, NULL,
	      "{\"id\":\"event_01\",\"event\":\"user.created\",\"data\":{\"id\":\"user_1\"}}", json,
	      "event_01", "user.created", "user_1", false, 0);
	check("pagerduty: event.*", PROVIDER_PAGERDUTY, NULL,
	      "{\"event\":{\"id\":\"5ac64822\",\"event_type\":\"incident.triggered\","
	      "\"occurred_at\":\"2023-11-14T22:13:20Z\",\"data\":{\"id\":\"PGR0VU2\"}}}",
	      json, "5ac64822", "incident.triggered", "PGR0VU2", true, INT64_C(1700000000000000));
	check("telnyx: data.*", PROVIDER_TELNYX, NULL,
	      "{\"data\":{\"event_type\":\"message.sent\",\"id\":\"0ccc7b54\","
	      "\"occurred_at\":\"2023-11-14T22:13:20Z\",\"payload\":{\"id\":\"msg1\"}}}",
	      json, "0ccc7b54", "message.sent", "msg1", true, INT64_C(1700000000000000));
	/* sha256 of {"event":"meeting.started","event_ts":1} */
	check("zoom: no event id: the body's hash", PROVIDER_ZOOM, NULL,
	      "{\"event\":\"meeting.started\",\"event_ts\":1}", json,
	      "sha256:32001b2892ba52d477b306d70e04675d7f6e9599b91191120961b415f27f4038",
	      "meeting.started", NULL, true, 1);
	check("box: delivery id header, trigger, source.id, created_at", PROVIDER_BOX, NULL,
	      "{\"trigger\":\"FILE.UPLOADED\",\"source\":{\"id\":\"f1\"},"
	      "\"created_at\":\"2023-11-14T22:13:20Z\"}",
	      box, "bd-1", "FILE.UPLOADED", "f1", true, INT64_C(1700000000000000));
	check("chargebee: id, event_type, occurred_at", PROVIDER_CHARGEBEE, NULL,
	      "{\"id\":\"ev_1\",\"event_type\":\"customer_created\",\"occurred_at\":1700000000}",
	      json, "ev_1", "customer_created", NULL, true, 1700000000);
	check("postmark: the body's hash, RecordType, MessageID", PROVIDER_POSTMARK, NULL,
	      "{\"RecordType\":\"Delivery\",\"MessageID\":\"m1\"}", json,
	      "sha256:05a811d06cb8f64ddc866665de0e41b29ee4cbfb966952f1cce0a184f6988fd5", "Delivery",
	      "m1", false, 0);
	check("okta: eventId, eventType, eventTime", PROVIDER_OKTA, NULL,
	      "{\"eventType\":\"com.okta.event_hook\",\"eventId\":\"b5a1\","
	      "\"eventTime\":\"2023-11-14T22:13:20Z\"}",
	      json, "b5a1", "com.okta.event_hook", NULL, true, INT64_C(1700000000000000));
	reject("okta: no eventId", PROVIDER_OKTA, NULL, "{}", 2, json, "no event id");
	check("zendesk: invocation id header, type, detail.id, time", PROVIDER_ZENDESK, NULL,
	      "{\"type\":\"zen:event-type:ticket.created\",\"detail\":{\"id\":\"7\"},"
	      "\"time\":\"2023-11-14T22:13:20Z\"}",
	      zd, "zi-1", "zen:event-type:ticket.created", "7", true, INT64_C(1700000000000000));
	reject("zendesk: no invocation id", PROVIDER_ZENDESK, NULL, "{}", 2, json, "no event id");
	reject("box: no delivery id", PROVIDER_BOX, NULL, "{}", 2, json, "no event id");
	reject("razorpay: no id header", PROVIDER_RAZORPAY, NULL, "{}", 2, json, "no event id");
	reject("intercom: no id", PROVIDER_INTERCOM, NULL, "{\"topic\":\"ping\"}", 16, json,
	       "no event id");
	ok(handshake(PROVIDER_DISCORD, "{\"id\":\"1\",\"type\":1,\"application_id\":\"2\"}",
		     &answer) == 1 &&
		   streq(answer, "{\"type\":1}\n"),
	   "discord: PING answered {\"type\":1}");
	free(answer);
	ok(handshake(PROVIDER_DISCORD, "{\"id\":\"1\",\"type\":2}", &answer) == 0,
	   "discord: a command is no handshake");
	ok(handshake(PROVIDER_DISCORD, "{\"id\":\"1\",\"type\":\"1\"}", &answer) == 0,
	   "discord: type \"1\" (a string) is no PING");
	ok(handshake(PROVIDER_RAZORPAY, "{\"type\":1}", &answer) == 0 && answer == NULL,
	   "razorpay: no handshake");
}

int main(void);

int
main(void)
{
	test_stripe();
	test_github();
	test_standard();
	test_shopify();
	test_slack();
	test_more_providers();
	test_paddle_twilio_gitlab();
	test_hmac();
	return done_testing();
}
