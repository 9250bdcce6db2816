/*
 * envelope.c - the envelope fields of a verified delivery
 *
 * The body is checked with jscan (strict RFC 8259, well-formed UTF-8, a
 * depth limit: JSON nested 10,000 deep is a clean error, not a stack
 * overflow) and read as JSON.parse reads it: keys with all their bytes, the
 * last repeated key, integers as their source text, no lone surrogate
 * replaced.  Every extracted string must be 1..255 bytes of valid UTF-8
 * without control characters, so that what reaches the database and the
 * log is tame.
 *
 * Only the event id (the delivery key) can refuse a signed event, with a
 * reason that says what is wrong with it.  A type, object id or version
 * that does not parse is stored NULL, and env->note says which and why.
 *
 * Versions: integers are taken as they are (Stripe's "created", Slack's
 * "event_time": seconds); RFC 3339 times become unix microseconds
 * (seconds * 1000000 + microseconds).  Versions only order deliveries of
 * one endpoint, whose provider always uses the same form.
 */
#include "envelope.h"

#include "form.h"
#include "jscan.h"
#include "utf8.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define JSON_DEPTH_MAX 64
#define FIELD_MAX ENVELOPE_FIELD_MAX

/* ---- strings ---- */

/* valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF) without control characters */
static bool
tame_string(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_next(p + i, len - i, &cp);

		if (n == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			return false;
		i += n;
	}
	return true;
}

/* why a field was not taken: static texts, used in notes and reasons */
#define WHY_EMPTY "empty"
#define WHY_LONG "over 255 bytes"
#define WHY_UNTAME "not valid UTF-8 or has control characters"
#define WHY_TYPE "not a string"
#define WHY_VERSION "not an integer or RFC 3339 time"

/* *out = copy of s when tame; -1 and *why otherwise */
static int
take(char **out, const char *s, size_t len, const char **why)
{
	if (len == 0)
		return *why = WHY_EMPTY, -1;
	if (len > FIELD_MAX)
		return *why = WHY_LONG, -1;
	if (!tame_string(s, len))
		return *why = WHY_UNTAME, -1;
	*out = xstrndup(s, len);
	return 0;
}

/* 1 when the header is absent, else as take() */
static int
take_header(char **out, const request_view *req, const char *name, const char **why)
{
	const char *v = req->header(req->ctx, name);

	if (v == NULL)
		return 1;
	return take(out, v, strnlen(v, FIELD_MAX + 1), why);
}

/* add "field: why" to the envelope's note */
static void
note(envelope *env, const char *field, const char *why)
{
	char *n = env->note == NULL ? xasprintf("%s: %s", field, why)
				    : xasprintf("%s; %s: %s", env->note, field, why);

	free(env->note);
	env->note = n;
}

/* an optional field: a failure (rc < 0) is noted, never fatal */
static const char *const version_why = WHY_VERSION;

/* why is read after rc was computed (arguments are evaluated in any order) */
static void
optional(envelope *env, int rc, const char *field, const char *const *why)
{
	if (rc < 0)
		note(env, field, *why);
}

/*
 * The event id: rc 1 (absent) or -1 (bad, why) refuse the event with a
 * reason that says so.  Returns 0 when the id was taken.
 */
static int
need_id(int rc, const char *const *whyp, const char **reason)
{
	const char *why = *whyp;

	if (rc == 0)
		return 0;
	if (rc > 0)
		*reason = "no event id";
	else if (strcmp(why, WHY_LONG) == 0)
		*reason = "event id over 255 bytes";
	else if (strcmp(why, WHY_EMPTY) == 0)
		*reason = "event id is empty";
	else if (strcmp(why, WHY_TYPE) == 0)
		*reason = "event id is not a string";
	else
		*reason = "event id is not valid UTF-8 or has control characters";
	return -1;
}

/* ---- JSON ---- */

/* a value read from the body, or none (absent, or no body to read) */
typedef struct jval {
	bool present;
	jscan_value v;
} jval;

static const jval no_value = {false, {JSCAN_NULL, NULL, 0}};

/* the whole body as one JSON value; !present when it is not JSON */
static jval
parse_json(const unsigned char *body, size_t len)
{
	jval j = no_value;

	j.present = jscan_parse((const char *)body, len, JSON_DEPTH_MAX, &j.v) == 0;
	return j;
}

static jval
parse_object(const unsigned char *body, size_t len)
{
	jval j = parse_json(body, len);

	if (j.present && j.v.type != JSCAN_OBJECT)
		return no_value;
	return j;
}

/* the value at a dotted path ("data.object.id") of nested objects */
static jval
json_path(const jval *o, const char *path)
{
	jval cur = *o;

	while (cur.present && cur.v.type == JSCAN_OBJECT) {
		size_t n = strcspn(path, ".");
		jscan_value next;

		if (jscan_member(&cur.v, path, n, &next) < 0)
			return no_value;
		cur.v = next;
		if (path[n] == '\0')
			return cur;
		path += n + 1;
	}
	return no_value;
}

/* a string value, unescaped; false when v is not one or holds a lone surrogate */
static bool
json_text(jval v, char **out, size_t *len)
{
	return v.present && jscan_string(&v.v, out, len) == 0;
}

/*
 * *out = the string at v, or with numbers an integer's exact source text
 * (all its digits: JSON.parse keeps them apart, and so do we).  Returns 1
 * when v is absent or JSON null, 0 on success, -1 (and *why) for another
 * type or an untame string.
 */
static int
take_json(char **out, jval v, bool numbers, const char **why)
{
	char *text;
	size_t len;
	int rc;

	if (!v.present || v.v.type == JSCAN_NULL)
		return 1;
	if (v.v.type == JSCAN_STRING) {
		if (jscan_string(&v.v, &text, &len) < 0)
			return *why = WHY_UNTAME, -1; /* a lone surrogate */
		rc = take(out, text, len, why);
		free(text);
		return rc;
	}
	if (numbers && jscan_is_integer(&v.v))
		return take(out, v.v.p, v.v.len, why);
	*why = WHY_TYPE;
	return -1;
}

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm) */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
digits(const char *s, int n, int64_t *out)
{
	int64_t v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* RFC 3339 date-time to unix microseconds; -1 if malformed */
static int
rfc3339_us(const char *s, int64_t *out)
{
	int64_t y, mo, d, h, mi, sec, us = 0, off = 0;
	const char *p;

	if (strlen(s) < 20 || digits(s, 4, &y) < 0 || s[4] != '-' || digits(s + 5, 2, &mo) < 0 ||
	    s[7] != '-' || digits(s + 8, 2, &d) < 0 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) < 0 || s[13] != ':' || digits(s + 14, 2, &mi) < 0 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	p = s + 19;
	if (*p == '.') {
		int n = 0;

		for (p++; *p >= '0' && *p <= '9'; p++, n++) {
			if (n < 6)
				us = us * 10 + (*p - '0');
		}
		if (n == 0)
			return -1;
		for (; n < 6; n++)
			us *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int64_t oh, om;

		if (digits(p + 1, 2, &oh) < 0 || p[3] != ':' || digits(p + 4, 2, &om) < 0 || oh > 23 ||
		    om > 59)
			return -1;
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;
	*out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) - off) * 1000000 + us;
	return 0;
}

/* an integer's source text as int64; -1 when out of range */
static int
integer_value(const jscan_value *v, int64_t *out)
{
	const char *p = v->p, *end = v->p + v->len;
	bool neg = *p == '-';
	uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, n = 0;

	for (p += neg; p < end; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (limit - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*out = neg ? (int64_t)(0 - n) : (int64_t)n;
	return 0;
}

/* version from an integer (as is) or an RFC 3339 string (microseconds); 1 if absent */
static int
take_version(envelope *env, jval v)
{
	char *text;
	size_t len;
	int rc;

	if (!v.present || v.v.type == JSCAN_NULL)
		return 1;
	if (jscan_is_integer(&v.v)) {
		if (integer_value(&v.v, &env->version) < 0)
			return -1;
		env->has_version = true;
		return 0;
	}
	if (!json_text(v, &text, &len))
		return -1;
	rc = strlen(text) == len ? rfc3339_us(text, &env->version) : -1;
	free(text);
	if (rc < 0)
		return -1;
	env->has_version = true;
	return 0;
}

static bool
is_form(const request_view *req)
{
	const char *ct = req->header(req->ctx, "Content-Type");

	return ct != NULL && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0;
}

#define BAD(r)                 \
	do {                   \
		*reason = (r); \
		goto out;      \
	} while (0)

/* ---- providers ---- */

/* where a provider's JSON body keeps the envelope (dotted paths) */
typedef struct body_fields {
	const char *id, *type, *object, *version;
} body_fields;

/* Stripe: {"id", "type", "created", "data": {"object": {"id"}}} */
static const body_fields stripe_fields = {"id", "type", "data.object.id", "created"};
/* Paddle Billing: {"event_id", "event_type", "occurred_at", "data": {"id"}} */
static const body_fields paddle_fields = {"event_id", "event_type", "data.id", "occurred_at"};

static int
extract_fields(const jval *b, const body_fields *f, envelope *env, const char **reason)
{
	const char *why = NULL;

	if (!b->present)
		return *reason = "body is not a JSON object", -1;
	if (need_id(take_json(&env->event_id, json_path(b, f->id), false, &why), &why, reason) < 0)
		return -1;
	optional(env, take_json(&env->event_type, json_path(b, f->type), false, &why), "type", &why);
	optional(env, take_json(&env->object_id, json_path(b, f->object), false, &why), "object id", &why);
	optional(env, take_version(env, json_path(b, f->version)), f->version, &version_why);
	return 0;
}

/*
 * GitHub: id and event from the headers; type is "<event>.<action>" when
 * the body has an action.  The object is body[<event>].id ("pull_request",
 * "release", ...) or body[<event> less a final 's'].id ("issues" ->
 * "issue"); events without such an object ("push") have none.
 */
static int
extract_github(const request_view *req, const jval *b, envelope *env, const char **reason)
{
	const char *ev = req->header(req->ctx, "X-GitHub-Event");
	jval obj, id;
	const char *why = NULL;
	char key[FIELD_MAX + 1], *action;
	size_t n, alen;

	if (need_id(take_header(&env->event_id, req, "X-GitHub-Delivery", &why), &why, reason) < 0)
		return -1;
	if (ev == NULL)
		return 0;
	n = strnlen(ev, FIELD_MAX + 1);
	if (take(&env->event_type, ev, n, &why) < 0) {
		note(env, "type", why);
		return 0;
	}
	if (json_text(json_path(b, "action"), &action, &alen)) {
		char *t = xasprintf("%s.%s", ev, action);
		char *with_action = NULL;

		if (strlen(action) == alen && take(&with_action, t, strlen(t), &why) == 0) {
			free(env->event_type);
			env->event_type = with_action;
		} else {
			note(env, "type action", strlen(action) == alen ? why : WHY_UNTAME);
		}
		free(t);
		free(action);
	}
	memcpy(key, ev, n + 1);
	obj = json_path(b, key);
	if ((!obj.present || obj.v.type != JSCAN_OBJECT) && n > 1 && key[n - 1] == 's') {
		key[n - 1] = '\0';
		obj = json_path(b, key);
	}
	if (obj.present && obj.v.type == JSCAN_OBJECT) {
		id = json_path(&obj, "id");
		optional(env, take_json(&env->object_id, id, true, &why), "object id", &why);
	}
	return 0;
}

static int
extract_standard(const endpoint_conf *ep, const request_view *req, const jval *b, envelope *env,
		 const char **reason)
{
	const char *first = ep->provider == PROVIDER_SVIX ? "svix-id" : "webhook-id";
	const char *second = ep->provider == PROVIDER_SVIX ? "webhook-id" : "svix-id";
	const char *why = NULL;
	int rc = take_header(&env->event_id, req, first, &why);

	if (rc > 0)
		rc = take_header(&env->event_id, req, second, &why);
	if (need_id(rc, &why, reason) < 0)
		return -1;
	optional(env, take_json(&env->event_type, json_path(b, "type"), false, &why), "type", &why);
	/* data.id is free-form in the spec: other types are ignored */
	if (take_json(&env->object_id, json_path(b, "data.id"), false, &why) < 0)
		env->object_id = NULL;
	optional(env, take_version(env, json_path(b, "timestamp")), "timestamp", &version_why);
	return 0;
}

static int
extract_shopify(const request_view *req, const jval *b, envelope *env, const char **reason)
{
	const char *at = req->header(req->ctx, "X-Shopify-Triggered-At");
	const char *why = NULL;
	int rc = take_header(&env->event_id, req, "X-Shopify-Event-Id", &why);

	if (rc > 0)
		rc = take_header(&env->event_id, req, "X-Shopify-Webhook-Id", &why);
	if (need_id(rc, &why, reason) < 0)
		return -1;
	optional(env, take_header(&env->event_type, req, "X-Shopify-Topic", &why), "type", &why);
	rc = take_json(&env->object_id, json_path(b, "admin_graphql_api_id"), false, &why);
	if (rc > 0)
		rc = take_json(&env->object_id, json_path(b, "id"), true, &why);
	optional(env, rc, "object id", &why);
	if (at != NULL) {
		if (rfc3339_us(at, &env->version) == 0)
			env->has_version = true;
		else
			note(env, "X-Shopify-Triggered-At", "not an RFC 3339 time");
	} else {
		optional(env, take_version(env, json_path(b, "updated_at")), "updated_at", &version_why);
	}
	return 0;
}

/*
 * Slack.  JSON bodies (Events API): url_verification carries the
 * challenge to echo; event_callback has event_id and event.type.  Form
 * bodies: slash commands (trigger_id, command) and interactivity
 * (payload=<JSON> with trigger_id and type).
 */
static int
extract_slack(const request_view *req, envelope *env, const char **reason)
{
	form f = {NULL, 0};
	jval body;
	const jval *b = &body;
	const form_param *p;
	const char *why = NULL;
	int rc = -1;

	if (is_form(req)) {
		if (form_parse((const char *)req->body, req->body_len, &f) < 0)
			BAD("too many form parameters");
		if ((p = form_get(&f, "payload")) != NULL) {
			body = parse_object((const unsigned char *)p->value, p->value_len);
			if (!body.present)
				BAD("payload is not a JSON object");
			if (need_id(take_json(&env->event_id, json_path(b, "trigger_id"), false, &why), &why,
				    reason) < 0)
				goto out;
			optional(env, take_json(&env->event_type, json_path(b, "type"), false, &why), "type",
				 &why);
		} else {
			if ((p = form_get(&f, "trigger_id")) == NULL)
				BAD("no event id");
			if (need_id(take(&env->event_id, p->value, p->value_len, &why), &why, reason) < 0)
				goto out;
			if ((p = form_get(&f, "command")) != NULL)
				optional(env, take(&env->event_type, p->value, p->value_len, &why), "type", &why);
		}
		rc = 0;
		goto out;
	}
	body = parse_object(req->body, req->body_len);
	if (!body.present)
		BAD("body is not a JSON object");
	{
		char *type = NULL;
		size_t tlen = 0;
		bool verification = json_text(json_path(b, "type"), &type, &tlen) &&
				    tlen == strlen("url_verification") &&
				    memcmp(type, "url_verification", tlen) == 0;

		free(type);
		if (verification) {
			if (take_json(&env->challenge, json_path(b, "challenge"), false, &why) != 0)
				BAD("bad challenge");
			env->event_id = xstrdup("url_verification");
			env->event_type = xstrdup("url_verification");
			rc = 0;
			goto out;
		}
	}
	if (need_id(take_json(&env->event_id, json_path(b, "event_id"), false, &why), &why, reason) < 0)
		goto out;
	optional(env, take_json(&env->event_type, json_path(b, "event.type"), false, &why), "type", &why);
	optional(env, take_version(env, json_path(b, "event_time")), "event_time", &version_why);
	rc = 0;
out:
	form_release(&f);
	return rc;
}

/*
 * Twilio: the I-Twilio-Idempotency-Token header (the same on retries);
 * without it a form callback's MessageSid/SmsSid/CallSid plus its status
 * ("SM123:delivered"), so each status change is its own event.  Type is
 * "twilio.<status>", else "twilio.message" / "twilio.call".
 */
static int
extract_twilio(const request_view *req, envelope *env, const char **reason)
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

	hrc = take_header(&env->event_id, req, "I-Twilio-Idempotency-Token", &why);
	if (hrc < 0 && need_id(hrc, &why, reason) < 0)
		goto out;
	if (req->body_len > 0 && (req->body[0] == '{' || req->body[0] == '[')) {
		body = parse_json(req->body, req->body_len);
		if (!body.present && hrc > 0)
			BAD("body is not JSON");
		if (!body.present)
			note(env, "body", "not JSON");
		if (hrc > 0 && need_id(take_json(&env->event_id, json_path(b, "id"), false, &why), &why,
				       reason) < 0)
			goto out;
		optional(env, take_json(&env->event_type, json_path(b, "type"), false, &why), "type", &why);
		if (env->event_type == NULL)
			env->event_type = xstrdup("twilio.event");
		rc = 0;
		goto out;
	}
	if (form_parse((const char *)req->body, req->body_len, &f) < 0)
		BAD("too many form parameters");
	for (size_t i = 0; i < 3 && sid == NULL; i++) {
		sid = form_get(&f, sids[i]);
		which = i;
	}
	for (size_t i = 0; i < 3 && status == NULL; i++)
		status = form_get(&f, statuses[i]);
	if (sid != NULL && take(&env->object_id, sid->value, sid->value_len, &why) < 0) {
		note(env, "object id", why);
		sid = NULL;
	}
	if (status != NULL) {
		char *t = xasprintf("twilio.%.*s", (int)status->value_len, status->value);

		if (take(&env->event_type, t, strlen(t), &why) < 0) {
			note(env, "type", why);
			status = NULL;
		}
		free(t);
	}
	if (env->event_type == NULL)
		env->event_type = xstrdup(sid == NULL ? "twilio.event" : which == 2 ? "twilio.call" : "twilio.message");
	if (hrc > 0) {
		char *id;
		int trc;

		if (sid == NULL)
			BAD("no event id");
		id = status != NULL ? xasprintf("%s:%.*s", env->object_id, (int)status->value_len,
						status->value)
				    : xstrdup(env->object_id);
		trc = take(&env->event_id, id, strlen(id), &why);
		free(id);
		if (need_id(trc, &why, reason) < 0)
			goto out;
	}
	rc = 0;
out:
	form_release(&f);
	return rc;
}

static int
extract_gitlab(const request_view *req, const jval *b, envelope *env, const char **reason)
{
	const char *why = NULL;

	if (need_id(take_header(&env->event_id, req, "X-Gitlab-Event-UUID", &why), &why, reason) < 0)
		return -1;
	optional(env, take_header(&env->event_type, req, "X-Gitlab-Event", &why), "type", &why);
	optional(env, take_json(&env->object_id, json_path(b, "object_attributes.id"), true, &why),
		 "object id", &why);
	return 0;
}

/* generic HMAC endpoints: each field from a header or a dotted JSON path */
static int
extract_hmac(const hmac_conf *h, const request_view *req, const jval *b, envelope *env,
	     const char **reason)
{
	const char *why = NULL;
	int rc = 1;

	if (h->id_header != NULL)
		rc = take_header(&env->event_id, req, h->id_header, &why);
	if (rc > 0 && h->id_field != NULL) {
		if (!b->present)
			return *reason = "body is not a JSON object", -1;
		rc = take_json(&env->event_id, json_path(b, h->id_field), true, &why);
	}
	if (need_id(rc, &why, reason) < 0)
		return -1;
	rc = 1;
	if (h->type_header != NULL)
		rc = take_header(&env->event_type, req, h->type_header, &why);
	if (rc > 0 && h->type_field != NULL)
		rc = take_json(&env->event_type, json_path(b, h->type_field), false, &why);
	optional(env, rc, "type", &why);
	if (h->object_field != NULL)
		optional(env, take_json(&env->object_id, json_path(b, h->object_field), true, &why),
			 "object id", &why);
	if (h->version_field != NULL)
		optional(env, take_version(env, json_path(b, h->version_field)), "version", &version_why);
	return 0;
}

int
envelope_extract(const endpoint_conf *ep, const request_view *req, envelope *env,
		 const char **reason)
{
	jval body = no_value;
	const jval *b = &body;
	form f = {NULL, 0};
	int rc = -1;
	bool need_json = true;

	memset(env, 0, sizeof(*env));
	*reason = "bad envelope";
	switch (ep->provider) {
	case PROVIDER_SLACK:
		return extract_slack(req, env, reason);
	case PROVIDER_TWILIO:
		return extract_twilio(req, env, reason);
	case PROVIDER_HMAC:
		need_json = ep->hmac.id_field != NULL || ep->hmac.type_field != NULL ||
			    ep->hmac.object_field != NULL || ep->hmac.version_field != NULL;
		break;
	default:
		break;
	}
	if (need_json) {
		if (ep->provider == PROVIDER_GITHUB && is_form(req)) {
			/* GitHub's form content type: payload=<JSON> (body points into f) */
			const form_param *p;

			if (form_parse((const char *)req->body, req->body_len, &f) == 0 &&
			    (p = form_get(&f, "payload")) != NULL)
				body = parse_object((const unsigned char *)p->value, p->value_len);
		} else {
			body = parse_object(req->body, req->body_len);
		}
		/*
		 * Where the event id is a header, a body that is not JSON only
		 * loses the fields read from it; where the id is in the body, the
		 * extractor refuses it.
		 */
		if (!body.present)
			note(env, "body", "not a JSON object");
	}
	switch (ep->provider) {
	case PROVIDER_STRIPE:
		rc = extract_fields(b, &stripe_fields, env, reason);
		break;
	case PROVIDER_GITHUB:
		rc = extract_github(req, b, env, reason);
		break;
	case PROVIDER_STANDARD:
	case PROVIDER_SVIX:
		rc = extract_standard(ep, req, b, env, reason);
		break;
	case PROVIDER_SHOPIFY:
		rc = extract_shopify(req, b, env, reason);
		break;
	case PROVIDER_PADDLE:
		rc = extract_fields(b, &paddle_fields, env, reason);
		break;
	case PROVIDER_GITLAB:
		rc = extract_gitlab(req, b, env, reason);
		break;
	case PROVIDER_HMAC:
		rc = extract_hmac(&ep->hmac, req, b, env, reason);
		break;
	case PROVIDER_SLACK:
	case PROVIDER_TWILIO:
	case PROVIDER__COUNT:
		*reason = "unknown provider";
		break;
	}
	form_release(&f);
	return rc;
}

void
envelope_release(envelope *env)
{
	free(env->event_id);
	free(env->event_type);
	free(env->object_id);
	free(env->challenge);
	free(env->note);
	memset(env, 0, sizeof(*env));
}
