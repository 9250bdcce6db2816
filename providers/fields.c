/* SPDX-License-Identifier: ISC */
/*
 * fields.c - reading envelope fields, for the providers' extractors
 *
 * The body is checked with jscan (strict RFC 8259, well-formed UTF-8, a
 * depth limit: JSON nested 10,000 deep is a clean error, not a stack
 * overflow) and read as JSON.parse reads it: keys with all their bytes, the
 * last repeated key, integers as their source text, no lone surrogate
 * replaced.  Every extracted string must be 1..255 bytes of valid UTF-8
 * without control characters, so that what reaches the database and the
 * log is tame.
 *
 * Versions: integers are taken as they are (Stripe's "created", Slack's
 * "event_time": seconds); RFC 3339 times become unix microseconds
 * (seconds * 1000000 + microseconds).  Versions only order deliveries of
 * one endpoint, whose provider always uses the same form.
 */
#include "fields.h"

#include "decimal.h"
#include "form.h"
#include "hex.h"
#include "sha256.h"
#include "rfc3339.h"
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

/* *out = copy of s when tame; -1 and *why otherwise, *out untouched */
int
env_take(envelope_field *out, const char *s, size_t len, const char **why)
{
	if (len == 0)
		return *why = ENV_WHY_EMPTY, -1;
	if (len > FIELD_MAX)
		return *why = ENV_WHY_LONG, -1;
	if (!tame_string(s, len))
		return *why = ENV_WHY_UNTAME, -1;
	memcpy(*out, s, len);
	(*out)[len] = '\0';
	return 0;
}

void
env_set(envelope_field *out, const char *text)
{
	size_t len = strnlen(text, FIELD_MAX);

	memcpy(*out, text, len);
	(*out)[len] = '\0';
}

/* 1 when the header is absent, else as env_take() */
int
env_take_header(envelope_field *out, const request_view *req, const char *name, const char **why)
{
	const char *v = req->header(req->ctx, name);

	if (v == NULL)
		return 1;
	return env_take(out, v, strnlen(v, FIELD_MAX + 1), why);
}

/* add "field: why" to the envelope's env_note */
void
env_note(envelope *env, const char *field, const char *why)
{
	char *n = env->note == NULL ? xasprintf("%s: %s", field, why)
				    : xasprintf("%s; %s: %s", env->note, field, why);

	free(env->note);
	env->note = n;
}

/* an env_optional field: a failure (rc < 0) is noted, never fatal */
const char *const env_version_why = ENV_WHY_VERSION;

/* why is read after rc was computed (arguments are evaluated in any order) */
void
env_optional(envelope *env, int rc, const char *field, const char *const *why)
{
	if (rc < 0)
		env_note(env, field, *why);
}

/*
 * The event id: rc 1 (absent) or -1 (bad, why) refuse the event with a
 * reason that says so.  Returns 0 when the id was taken.
 */
int
env_need_id(int rc, const char *const *whyp, const char **reason)
{
	const char *why = *whyp;

	if (rc == 0)
		return 0;
	if (rc > 0)
		*reason = "no event id";
	else if (strcmp(why, ENV_WHY_LONG) == 0)
		*reason = "event id over 255 bytes";
	else if (strcmp(why, ENV_WHY_EMPTY) == 0)
		*reason = "event id is empty";
	else if (strcmp(why, ENV_WHY_TYPE) == 0)
		*reason = "event id is not a string";
	else
		*reason = "event id is not valid UTF-8 or has control characters";
	return -1;
}

/* ---- JSON ---- */

const jval env_no_value = {false, {JSCAN_NULL, NULL, 0}};

/* the whole body as one JSON value; !present when it is not JSON */
jval
env_parse_json(const unsigned char *body, size_t len)
{
	jval j = env_no_value;

	j.present = jscan_parse((const char *)body, len, JSON_DEPTH_MAX, &j.v) == 0;
	return j;
}

jval
env_parse_object(const unsigned char *body, size_t len)
{
	jval j = env_parse_json(body, len);

	if (j.present && j.v.type != JSCAN_OBJECT)
		return env_no_value;
	return j;
}

/* the value at a dotted path ("data.object.id") of nested objects */
jval
env_json_path(const jval *o, const char *path)
{
	jval j = env_no_value;

	if (o->present && jscan_path(&o->v, path, &j.v) == 0)
		j.present = true;
	return j;
}

/* a string value, unescaped; false when v is not one or holds a lone surrogate */
bool
env_json_text(jval v, char **out, size_t *len)
{
	return v.present && jscan_string(&v.v, out, len) == 0;
}

/*
 * Read on every request of some providers (Slack's "type"), so without
 * allocating; text is a short name.
 */
bool
env_json_is(jval v, const char *text)
{
	char s[FIELD_MAX + 1];
	size_t len = strlen(text);
	size_t n;

	return len < sizeof(s) && v.present && jscan_string_into(&v.v, s, len + 1, &n) == 0 &&
	       n == len && memcmp(s, text, len) == 0;
}

/*
 * *out = the string at v, or with numbers an integer's exact source text
 * (all its digits: JSON.parse keeps them apart, and so do we).  Returns 1
 * when v is absent or JSON null, 0 on success, -1 (and *why) for another
 * type or an untame string.
 */
int
env_take_json(envelope_field *out, jval v, bool numbers, const char **why)
{
	/* unescaped here first: *out is left as it was when the text is refused */
	envelope_field text;
	size_t len;

	if (!v.present || v.v.type == JSCAN_NULL)
		return 1;
	if (v.v.type == JSCAN_STRING) {
		switch (jscan_string_into(&v.v, text, sizeof(text), &len)) {
		case 0:
			return env_take(out, text, len, why);
		case 1:
			return *why = ENV_WHY_LONG, -1;
		default:
			return *why = ENV_WHY_UNTAME, -1; /* a lone surrogate */
		}
	}
	if (numbers && jscan_is_integer(&v.v))
		return env_take(out, v.v.p, v.v.len, why);
	*why = ENV_WHY_TYPE;
	return -1;
}

/* an integer's source text as int64; -1 when out of range */
static int
integer_value(const jscan_value *v, int64_t *out)
{
	bool neg = v->p[0] == '-';
	uint64_t n;

	if (decimal_digits(v->p + neg, v->len - neg, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX,
			   &n) < 0)
		return -1;
	*out = neg ? (int64_t)(0 - n) : (int64_t)n;
	return 0;
}

/* version from an integer (as is) or an RFC 3339 string (microseconds); 1 if absent */
int
env_take_version(envelope *env, jval v)
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
	if (!env_json_text(v, &text, &len))
		return -1;
	rc = strlen(text) == len ? rfc3339_us(text, &env->version) : -1;
	free(text);
	if (rc < 0)
		return -1;
	env->has_version = true;
	return 0;
}

#define HASH_PREFIX "sha256:"
_Static_assert(sizeof(HASH_PREFIX) - 1 + 2 * SHA256_LEN <= FIELD_MAX, "a hash id is a field");

int
env_take_hash(envelope_field *out, const void *bytes, size_t len)
{
	unsigned char d[SHA256_LEN];

	if (sha256_digest(bytes, len, d) < 0)
		return -1;
	memcpy(*out, HASH_PREFIX, sizeof(HASH_PREFIX) - 1);
	hex_encode(d, sizeof(d), *out + sizeof(HASH_PREFIX) - 1);
	return 0;
}

int
env_take_body_hash(envelope_field *out, const request_view *req)
{
	return env_take_hash(out, req->body, req->body_len);
}

char *
env_json_quote(const char *s)
{
	size_t n = strlen(s);
	char *q = xmalloc(6 * n + 3), *p = q;

	*p++ = '"';
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20) {
			p += snprintf(p, 7, "\\u%04x", c);
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	*p = '\0';
	return q;
}

bool
env_is_form(const request_view *req)
{
	const char *ct = req->header(req->ctx, "Content-Type");

	return ct != NULL && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0;
}

jval
env_body(const request_view *req, envelope *env)
{
	jval b = env_parse_object(req->body, req->body_len);

	if (!b.present)
		env_note(env, "body", "not a JSON object");
	return b;
}

int
env_extract_fields(const request_view *req, const env_body_fields *f, envelope *env,
		   const char **reason)
{
	jval body = env_body(req, env);

	if (!body.present)
		return *reason = "body is not a JSON object", -1;
	return env_extract_object(&body, req->body, req->body_len, f, env, reason);
}

/* type, object id and version at f's paths of b, each optional */
static void
take_fields(const jval *b, const env_body_fields *f, envelope *env)
{
	const char *why = NULL;

	if (f->type != NULL)
		env_optional(
			env,
			env_take_json(&env->event_type, env_json_path(b, f->type), false, &why),
			"type", &why);
	if (f->object != NULL)
		env_optional(
			env,
			env_take_json(&env->object_id, env_json_path(b, f->object), false, &why),
			"object id", &why);
	if (f->version != NULL)
		env_optional(env, env_take_version(env, env_json_path(b, f->version)), f->version,
			     &env_version_why);
}

int
env_extract_object(const jval *b, const unsigned char *bytes, size_t len, const env_body_fields *f,
		   envelope *env, const char **reason)
{
	const char *why = NULL;

	if (f->id == NULL) {
		if (env_take_hash(&env->event_id, bytes, len) < 0)
			return *reason = "could not hash the body", -1;
	} else if (env_need_id(env_take_json(&env->event_id, env_json_path(b, f->id), false, &why),
			       &why, reason) < 0) {
		return -1;
	}
	take_fields(b, f, env);
	return 0;
}

int
env_extract_header_fields(const request_view *req, const char *id_header, const env_body_fields *f,
			  envelope *env, const char **reason)
{
	const char *why = NULL;
	jval body = env_body(req, env);

	if (env_need_id(env_take_header(&env->event_id, req, id_header, &why), &why, reason) < 0)
		return -1;
	take_fields(&body, f, env);
	return 0;
}

int
env_query_param(const request_view *req, const char *name, char **out)
{
	form q = {NULL, 0};
	const form_param *p;
	envelope_field value;
	const char *why = NULL;
	int rc = 1;

	*out = NULL;
	if (req->query == NULL)
		return 1;
	if (form_parse(req->query, strlen(req->query), &q) < 0) {
		rc = -1;
	} else if ((p = form_get(&q, name)) != NULL) {
		rc = env_take(&value, p->value, p->value_len, &why);
		if (rc == 0)
			*out = xstrdup(value);
	}
	form_release(&q);
	return rc;
}
