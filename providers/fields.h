/* SPDX-License-Identifier: ISC */
/*
 * fields.h - reading envelope fields, for the providers' extractors
 *
 * For providers/<name>.c only.  Each env_take* copies a field that is
 * 1..255 bytes of valid UTF-8 without control characters into an
 * envelope_field (one of the envelope's, or a local one), allocating
 * nothing; a field that is not is described by a static "why" text, and
 * the envelope_field is left as it was.  Only the event id (env_need_id)
 * can refuse a signed event; any other field that does not parse is left
 * absent ("") and noted (env_optional) in env->note.
 */
#ifndef HOOKINBOX_FIELDS_H
#define HOOKINBOX_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envelope.h"
#include "jscan.h"
#include "verify.h"

/* why a field was not taken: static texts, used in notes and reasons */
#define ENV_WHY_EMPTY "empty"
#define ENV_WHY_LONG "over 255 bytes"
#define ENV_WHY_UNTAME "not valid UTF-8 or has control characters"
#define ENV_WHY_TYPE "not a string"
#define ENV_WHY_VERSION "not an integer or RFC 3339 time"

/* *out = copy of s[0..len) when tame: 0; -1 and *why otherwise */
int env_take(envelope_field *out, const char *s, size_t len, const char **why);
/* 1 when the header is absent, else as env_take() */
int env_take_header(envelope_field *out, const request_view *req, const char *name,
		    const char **why);
/*
 * *out = text, which the caller knows to be a field: a static type name
 * ("revocation") or another envelope_field's text
 */
void env_set(envelope_field *out, const char *text);

/* add "field: why" to the envelope's note */
void env_note(envelope *env, const char *field, const char *why);
/* an optional field: a failure (rc < 0) is noted with *why, never fatal */
void env_optional(envelope *env, int rc, const char *field, const char *const *why);
/* &env_version_why: the why of a version env_take_version refused */
extern const char *const env_version_why;
/*
 * The event id: rc 1 (absent) or -1 (bad, *whyp) set *reason to a text
 * that says so and return -1.  Returns 0 when the id was taken.
 */
int env_need_id(int rc, const char *const *whyp, const char **reason);

/* a value read from the body, or none (absent, or no body to read) */
typedef struct jval {
	bool present;
	jscan_value v;
} jval;

extern const jval env_no_value;

/* the whole text as one JSON value; !present when it is not JSON */
jval env_parse_json(const unsigned char *body, size_t len);
/* likewise, and !present unless it is an object */
jval env_parse_object(const unsigned char *body, size_t len);
/* the request body as a JSON object; when it is not one, noted as "body: not a JSON object" */
jval env_body(const request_view *req, envelope *env);
/* the value at a dotted path ("data.object.id") of nested objects */
jval env_json_path(const jval *o, const char *path);
/* a string value, unescaped (caller frees); false when v is not one or holds a lone surrogate */
bool env_json_text(jval v, char **out, size_t *len);
/* whether v is a string whose text is text (a handshake's "type") */
bool env_json_is(jval v, const char *text);
/*
 * *out = the string at v, or with numbers an integer's exact source text.
 * Returns 1 when v is absent or JSON null, 0 on success, -1 (and *why) for
 * another type or an untame string.
 */
int env_take_json(envelope_field *out, jval v, bool numbers, const char **why);
/* env->version from an integer (as is) or an RFC 3339 string (microseconds); 1 if absent */
int env_take_version(envelope *env, jval v);

/*
 * *out = "sha256:<hex of the body>": the event id of a provider that sends
 * none, which a redelivery of the same signed bytes repeats.  0, or -1.
 */
int env_take_body_hash(envelope_field *out, const request_view *req);
/* the same of bytes[0..len): the part of the body that holds the event (Braintree's bt_payload) */
int env_take_hash(envelope_field *out, const void *bytes, size_t len);

/* s as a JSON string with its quotes (caller frees), for handshake answers */
char *env_json_quote(const char *s);

/*
 * The query parameter name of the request, decoded, as env_take takes it
 * (1..255 bytes of tame UTF-8): 0 and *out (the caller frees), 1 when
 * absent, -1 when it is not tame; for handshakes that echo one.
 */
int env_query_param(const request_view *req, const char *name, char **out);

/* Content-Type application/x-www-form-urlencoded? */
bool env_is_form(const request_view *req);

/*
 * In an extractor with "const char **reason" and an "out:" label that
 * releases what it holds: refuse the event with the static text r.
 */
#define ENV_REFUSE(r)                                                                              \
	do {                                                                                       \
		*reason = (r);                                                                     \
		goto out;                                                                          \
	} while (0)

/*
 * where a provider's JSON body keeps the envelope (dotted paths); id NULL:
 * the provider sends none and the id is the body's hash (env_take_body_hash);
 * another path NULL: the provider sends no such field
 */
typedef struct env_body_fields {
	const char *id, *type, *object, *version;
} env_body_fields;

/* id (required), type, object id and version at f's paths of the JSON body */
int env_extract_fields(const request_view *req, const env_body_fields *f, envelope *env,
		       const char **reason);
/*
 * The same from object b (an event of a batch); bytes[0..len) are its
 * text, hashed for the id when f->id is NULL
 */
int env_extract_object(const jval *b, const unsigned char *bytes, size_t len,
		       const env_body_fields *f, envelope *env, const char **reason);
/*
 * The event id from request header id_header (f->id is not read), the
 * other fields at f's paths of the JSON body; a body that is not a JSON
 * object only loses those, and is noted.
 */
int env_extract_header_fields(const request_view *req, const char *id_header,
			      const env_body_fields *f, envelope *env, const char **reason);

#endif
