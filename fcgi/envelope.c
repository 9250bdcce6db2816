/*
 * envelope.c - the envelope fields of a verified delivery
 *
 * The body is parsed with json-c under a depth limit and UTF-8 validation
 * (JSON nested 10,000 deep is a clean 400, not a stack overflow); every
 * extracted string must be 1..255 bytes of valid UTF-8 without control
 * characters, so that what reaches the database and the log is tame.
 *
 * Versions: integers are taken as they are (Stripe's "created", Slack's
 * "event_time": seconds); RFC 3339 times become unix microseconds
 * (seconds * 1000000 + microseconds).  Versions only order deliveries of
 * one endpoint, whose provider always uses the same form.
 */
#include "envelope.h"

#include "form.h"
#include "xalloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json.h>

#define JSON_DEPTH_MAX 64
#define FIELD_MAX 255

/* ---- strings ---- */

/* valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF) without control characters */
static bool
tame_string(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	if (len == 0 || len > FIELD_MAX)
		return false;
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		size_t n;
		unsigned cp;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
			return false;
		i += n + 1;
	}
	return true;
}

/* *out = copy of s when tame; -1 otherwise */
static int
take(char **out, const char *s, size_t len)
{
	if (!tame_string(s, len))
		return -1;
	*out = xstrndup(s, len);
	return 0;
}

static int
take_header(char **out, const request_view *req, const char *name)
{
	const char *v = req->header(req->ctx, name);

	if (v == NULL)
		return 1;
	return take(out, v, strnlen(v, FIELD_MAX + 1));
}

/* ---- JSON ---- */

/*
 * Parse the whole body as one JSON value; trailing whitespace is allowed,
 * anything else after the value is not.  NULL when it is not JSON.
 */
static json_object *
parse_json(const unsigned char *body, size_t len)
{
	json_tokener *tok;
	json_object *obj;
	size_t end;

	if (len == 0 || len > INT_MAX)
		return NULL;
	tok = json_tokener_new_ex(JSON_DEPTH_MAX);
	if (tok == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, (const char *)body, (int)len);
	if (obj != NULL && json_tokener_get_error(tok) == json_tokener_success) {
		end = json_tokener_get_parse_end(tok);
		for (; end < len; end++) {
			if (body[end] != ' ' && body[end] != '\t' && body[end] != '\n' && body[end] != '\r')
				break;
		}
		if (end < len) {
			json_object_put(obj);
			obj = NULL;
		}
	} else if (obj != NULL) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

static json_object *
parse_object(const unsigned char *body, size_t len)
{
	json_object *o = parse_json(body, len);

	if (o != NULL && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* the value at a dotted path ("data.object.id") of nested objects, or NULL */
static json_object *
json_path(json_object *o, const char *path)
{
	while (o != NULL && json_object_is_type(o, json_type_object)) {
		size_t n = strcspn(path, ".");
		char key[FIELD_MAX + 1];
		json_object *next;

		if (n > FIELD_MAX)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (!json_object_object_get_ex(o, key, &next))
			return NULL;
		if (path[n] == '\0')
			return next;
		o = next;
		path += n + 1;
	}
	return NULL;
}

/*
 * *out = the string (or, with numbers, the integer as decimal text) at
 * v.  Returns 1 when v is NULL or JSON null, 0 on success, -1 for another
 * type or an untame string.
 */
static int
take_json(char **out, json_object *v, bool numbers)
{
	char buf[32];

	if (v == NULL || json_object_is_type(v, json_type_null))
		return 1;
	if (json_object_is_type(v, json_type_string))
		return take(out, json_object_get_string(v), (size_t)json_object_get_string_len(v));
	if (numbers && json_object_is_type(v, json_type_int)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_object_get_int64(v));
		return take(out, buf, strlen(buf));
	}
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

/* version from an integer (as is) or an RFC 3339 string (microseconds); 1 if absent */
static int
take_version(envelope *env, json_object *v)
{
	if (v == NULL || json_object_is_type(v, json_type_null))
		return 1;
	if (json_object_is_type(v, json_type_int)) {
		env->version = json_object_get_int64(v);
		env->has_version = true;
		return 0;
	}
	if (json_object_is_type(v, json_type_string) &&
	    rfc3339_us(json_object_get_string(v), &env->version) == 0) {
		env->has_version = true;
		return 0;
	}
	return -1;
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
	const char *bad_version; /* reason for a version that does not parse */
} body_fields;

/* Stripe: {"id", "type", "created", "data": {"object": {"id"}}} */
static const body_fields stripe_fields = {"id", "type", "data.object.id", "created", "bad created time"};
/* Paddle Billing: {"event_id", "event_type", "occurred_at", "data": {"id"}} */
static const body_fields paddle_fields = {"event_id", "event_type", "data.id", "occurred_at", "bad occurred_at"};

static int
extract_fields(json_object *b, const body_fields *f, envelope *env, const char **reason)
{
	if (take_json(&env->event_id, json_path(b, f->id), false) != 0)
		return *reason = "no event id", -1;
	if (take_json(&env->event_type, json_path(b, f->type), false) < 0)
		return *reason = "bad event type", -1;
	if (take_json(&env->object_id, json_path(b, f->object), false) < 0)
		return *reason = "bad object id", -1;
	if (take_version(env, json_path(b, f->version)) < 0)
		return *reason = f->bad_version, -1;
	return 0;
}

/*
 * GitHub: id and event from the headers; type is "<event>.<action>" when
 * the body has an action.  The object is body[<event>].id ("pull_request",
 * "release", ...) or body[<event> less a final 's'].id ("issues" ->
 * "issue"); events without such an object ("push") have none.
 */
static int
extract_github(const request_view *req, json_object *b, envelope *env, const char **reason)
{
	const char *ev = req->header(req->ctx, "X-GitHub-Event");
	json_object *action = json_path(b, "action"), *obj;
	char key[FIELD_MAX + 1];
	size_t n;

	if (take_header(&env->event_id, req, "X-GitHub-Delivery") != 0)
		return *reason = "no event id", -1;
	if (ev == NULL)
		return 0;
	n = strnlen(ev, FIELD_MAX + 1);
	if (!tame_string(ev, n))
		return *reason = "bad event type", -1;
	if (action != NULL && json_object_is_type(action, json_type_string)) {
		char *t = xasprintf("%s.%s", ev, json_object_get_string(action));
		int rc = take(&env->event_type, t, strlen(t));

		free(t);
		if (rc < 0)
			return *reason = "bad event type", -1;
	} else {
		env->event_type = xstrdup(ev);
	}
	memcpy(key, ev, n + 1);
	obj = json_path(b, key);
	if ((obj == NULL || !json_object_is_type(obj, json_type_object)) && n > 1 && key[n - 1] == 's') {
		key[n - 1] = '\0';
		obj = json_path(b, key);
	}
	if (obj != NULL && json_object_is_type(obj, json_type_object) &&
	    take_json(&env->object_id, json_path(obj, "id"), true) < 0)
		return *reason = "bad object id", -1;
	return 0;
}

static int
extract_standard(const endpoint_conf *ep, const request_view *req, json_object *b, envelope *env,
		 const char **reason)
{
	const char *first = ep->provider == PROVIDER_SVIX ? "svix-id" : "webhook-id";
	const char *second = ep->provider == PROVIDER_SVIX ? "webhook-id" : "svix-id";
	int rc = take_header(&env->event_id, req, first);

	if (rc > 0)
		rc = take_header(&env->event_id, req, second);
	if (rc != 0)
		return *reason = "no event id", -1;
	if (take_json(&env->event_type, json_path(b, "type"), false) < 0)
		return *reason = "bad event type", -1;
	if (take_json(&env->object_id, json_path(b, "data.id"), false) < 0)
		env->object_id = NULL; /* data.id is free-form in the spec: ignore other types */
	if (take_version(env, json_path(b, "timestamp")) < 0)
		return *reason = "bad timestamp", -1;
	return 0;
}

static int
extract_shopify(const request_view *req, json_object *b, envelope *env, const char **reason)
{
	const char *at = req->header(req->ctx, "X-Shopify-Triggered-At");
	int rc = take_header(&env->event_id, req, "X-Shopify-Event-Id");

	if (rc > 0)
		rc = take_header(&env->event_id, req, "X-Shopify-Webhook-Id");
	if (rc != 0)
		return *reason = "no event id", -1;
	if (take_header(&env->event_type, req, "X-Shopify-Topic") < 0)
		return *reason = "bad event type", -1;
	rc = take_json(&env->object_id, json_path(b, "admin_graphql_api_id"), false);
	if (rc > 0)
		rc = take_json(&env->object_id, json_path(b, "id"), true);
	if (rc < 0)
		return *reason = "bad object id", -1;
	if (at != NULL) {
		if (rfc3339_us(at, &env->version) < 0)
			return *reason = "bad X-Shopify-Triggered-At header", -1;
		env->has_version = true;
	} else if (take_version(env, json_path(b, "updated_at")) < 0) {
		return *reason = "bad updated_at", -1;
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
	json_object *b = NULL;
	const form_param *p;
	int rc = -1;

	if (is_form(req)) {
		if (form_parse((const char *)req->body, req->body_len, &f) < 0)
			BAD("too many form parameters");
		if ((p = form_get(&f, "payload")) != NULL) {
			b = parse_object((const unsigned char *)p->value, p->value_len);
			if (b == NULL)
				BAD("payload is not a JSON object");
			if (take_json(&env->event_id, json_path(b, "trigger_id"), false) != 0)
				BAD("no event id");
			if (take_json(&env->event_type, json_path(b, "type"), false) < 0)
				BAD("bad event type");
		} else {
			if ((p = form_get(&f, "trigger_id")) == NULL ||
			    take(&env->event_id, p->value, p->value_len) < 0)
				BAD("no event id");
			if ((p = form_get(&f, "command")) != NULL &&
			    take(&env->event_type, p->value, p->value_len) < 0)
				BAD("bad event type");
		}
		rc = 0;
		goto out;
	}
	b = parse_object(req->body, req->body_len);
	if (b == NULL)
		BAD("body is not a JSON object");
	{
		json_object *type = json_path(b, "type");

		if (type != NULL && json_object_is_type(type, json_type_string) &&
		    strcmp(json_object_get_string(type), "url_verification") == 0) {
			if (take_json(&env->challenge, json_path(b, "challenge"), false) != 0)
				BAD("bad challenge");
			env->event_id = xstrdup("url_verification");
			env->event_type = xstrdup("url_verification");
			rc = 0;
			goto out;
		}
	}
	if (take_json(&env->event_id, json_path(b, "event_id"), false) != 0)
		BAD("no event id");
	if (take_json(&env->event_type, json_path(b, "event.type"), false) < 0)
		BAD("bad event type");
	if (take_version(env, json_path(b, "event_time")) < 0)
		BAD("bad event_time");
	rc = 0;
out:
	form_release(&f);
	json_object_put(b);
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
	json_object *b = NULL;
	const form_param *sid = NULL, *status = NULL;
	int rc = -1, hrc;
	size_t which = 0;

	hrc = take_header(&env->event_id, req, "I-Twilio-Idempotency-Token");
	if (hrc < 0)
		BAD("bad I-Twilio-Idempotency-Token header");
	if (req->body_len > 0 && (req->body[0] == '{' || req->body[0] == '[')) {
		b = parse_json(req->body, req->body_len);
		if (b == NULL)
			BAD("body is not JSON");
		if (hrc > 0 && take_json(&env->event_id, json_path(b, "id"), false) != 0)
			BAD("no event id");
		if (take_json(&env->event_type, json_path(b, "type"), false) < 0)
			BAD("bad event type");
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
	if (sid != NULL && take(&env->object_id, sid->value, sid->value_len) < 0)
		BAD("bad sid");
	if (status != NULL) {
		char *t = xasprintf("twilio.%.*s", (int)status->value_len, status->value);

		if (take(&env->event_type, t, strlen(t)) < 0) {
			free(t);
			BAD("bad status");
		}
		free(t);
	} else {
		env->event_type = xstrdup(sid == NULL ? "twilio.event" : which == 2 ? "twilio.call" : "twilio.message");
	}
	if (hrc > 0) {
		char *id;
		int trc;

		if (sid == NULL)
			BAD("no event id");
		id = status != NULL ? xasprintf("%s:%.*s", env->object_id, (int)status->value_len,
						status->value)
				    : xstrdup(env->object_id);
		trc = take(&env->event_id, id, strlen(id));
		free(id);
		if (trc < 0)
			BAD("no event id");
	}
	rc = 0;
out:
	form_release(&f);
	json_object_put(b);
	return rc;
}

static int
extract_gitlab(const request_view *req, json_object *b, envelope *env, const char **reason)
{
	if (take_header(&env->event_id, req, "X-Gitlab-Event-UUID") != 0)
		return *reason = "no event id", -1;
	if (take_header(&env->event_type, req, "X-Gitlab-Event") < 0)
		return *reason = "bad event type", -1;
	if (take_json(&env->object_id, json_path(b, "object_attributes.id"), true) < 0)
		return *reason = "bad object id", -1;
	return 0;
}

/* generic HMAC endpoints: each field from a header or a dotted JSON path */
static int
extract_hmac(const hmac_conf *h, const request_view *req, json_object *b, envelope *env,
	     const char **reason)
{
	int rc = 1;

	if (h->id_header != NULL)
		rc = take_header(&env->event_id, req, h->id_header);
	if (rc > 0 && h->id_field != NULL)
		rc = take_json(&env->event_id, json_path(b, h->id_field), true);
	if (rc != 0)
		return *reason = "no event id", -1;
	rc = 1;
	if (h->type_header != NULL)
		rc = take_header(&env->event_type, req, h->type_header);
	if (rc > 0 && h->type_field != NULL)
		rc = take_json(&env->event_type, json_path(b, h->type_field), false);
	if (rc < 0)
		return *reason = "bad event type", -1;
	if (h->object_field != NULL &&
	    take_json(&env->object_id, json_path(b, h->object_field), true) < 0)
		return *reason = "bad object id", -1;
	if (h->version_field != NULL && take_version(env, json_path(b, h->version_field)) < 0)
		return *reason = "bad version", -1;
	return 0;
}

int
envelope_extract(const endpoint_conf *ep, const request_view *req, envelope *env,
		 const char **reason)
{
	json_object *b = NULL;
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
			/* GitHub's form content type: payload=<JSON> */
			form f = {NULL, 0};
			const form_param *p;

			if (form_parse((const char *)req->body, req->body_len, &f) == 0 &&
			    (p = form_get(&f, "payload")) != NULL)
				b = parse_object((const unsigned char *)p->value, p->value_len);
			form_release(&f);
		} else {
			b = parse_object(req->body, req->body_len);
		}
		if (b == NULL)
			BAD("body is not a JSON object");
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
		BAD("unknown provider");
	}
out:
	json_object_put(b);
	return rc;
}

void
envelope_release(envelope *env)
{
	free(env->event_id);
	free(env->event_type);
	free(env->object_id);
	free(env->challenge);
	memset(env, 0, sizeof(*env));
}
