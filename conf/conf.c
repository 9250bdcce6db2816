/* SPDX-License-Identifier: ISC */
/*
 * conf.c - the INI configuration the responder, the worker and
 * hookinbox-backfill read
 *
 * As PgBouncer describes its settings in bouncer_params[], every key is one
 * row of keys[] below: its section, name, type, range or lookup table,
 * where the value goes (an offset into struct conf, endpoint_conf or
 * route_conf) and its default.  One setter per type parses a value, checks
 * it and says what is wrong; defaults are applied from the same rows.
 * Adding a key is one row (its field in conf.h; a value of an enumeration
 * is one entry of its map), and a case in tests/unit/test_conf.c, which
 * fails for a row without one.  What involves more than one key (required
 * keys, an endpoint's defaults taken from [intake], order against the
 * provider, timeout against the lease) is checked after the whole file is
 * read, in the validation pass (conf_check).
 *
 * libinih does the tokenising; we feed it through ini_parse_stream with our
 * own line reader so that every message can name the line.  An unknown
 * section or key, a section defined twice, a key given twice, a bad value,
 * a conninfo libpq cannot parse or a missing secret file (of those the
 * reading program needs) stops the program at start.  Values are never
 * echoed in messages except for enumerations: conninfo may hold a password.
 */
#include "conf.h"

#include "dbcheck.h"
#include "decimal.h"
#include "dynbuf.h"
#include "template.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#define CONF_MAX_ITEMS 256

/* a section or key already seen, for "given twice" */
typedef struct seen {
	char *name;
	int line;
} seen;

/* the endpoints or the routes, in file order */
typedef struct conf_list {
	void *item[CONF_MAX_ITEMS];
	size_t n;
} conf_list;

struct conf {
	char *path;
	char *dir; /* directory of path, for relative secret files */
	conf_program prog;
	char *conninfo;	       /* [database]: the responder's */
	char *worker_conninfo; /* [worker]: the worker's, else [database] */
	int log_format;	       /* [log] format: an index into log_formats */
	size_t max_body;       /* [intake]: every endpoint's default */
	int64_t tolerance;     /* [intake]: every endpoint's default; 0: the provider's */
	int threads;
	int lock_timeout_ms;
	int statement_timeout_ms;
	conf_list endpoints; /* endpoint_conf */
	conf_list routes;    /* route_conf */
	worker_conf worker;
	/* parse state */
	FILE *fp;
	char *line; /* the physical line being read (getline's buffer) */
	size_t line_cap;
	char section[128]; /* the section that line is in */
	int lineno;
	seen *sections; /* every [section] so far */
	size_t n_sections, sections_alloc;
	seen *keys; /* the keys of the current section */
	size_t n_keys, keys_alloc;
	bool skip_section; /* the current section is in error: its keys are not read */
	const void **bad;  /* endpoints and routes with a key in error: not checked further */
	size_t n_bad, bad_alloc;
	bool conninfo_unsure; /* a conninfo line was in error: "not set" would follow from it */
	bool failed;
	char *err; /* every problem found, one "path:line: message" a line */
	size_t errlen;
};

/* ---- the sections ---- */

typedef enum conf_kind { K_DATABASE, K_INTAKE, K_LOG, K_WORKER, K_ENDPOINT, K_ROUTE } conf_kind;

/*
 * A section kind: [NAME], whose keys go into struct conf, or [NAME OBJECT]
 * (named), which adds one object of size bytes to the list at list_off.
 */
typedef struct conf_section {
	const char *name;
	bool named;
	size_t size;	 /* named: the object's struct */
	size_t name_off; /* named: its char *name */
	size_t line_off; /* named: its int line */
	size_t list_off; /* named: the conf_list in struct conf */
} conf_section;

static const conf_section sections[] = {
	[K_DATABASE] = {"database", false, 0, 0, 0, 0},
	[K_INTAKE] = {"intake", false, 0, 0, 0, 0},
	[K_LOG] = {"log", false, 0, 0, 0, 0},
	[K_WORKER] = {"worker", false, 0, 0, 0, 0},
	[K_ENDPOINT] = {"endpoint", true, sizeof(endpoint_conf), offsetof(endpoint_conf, name),
			offsetof(endpoint_conf, line), offsetof(struct conf, endpoints)},
	[K_ROUTE] = {"route", true, sizeof(route_conf), offsetof(route_conf, name),
		     offsetof(route_conf, line), offsetof(struct conf, routes)},
};

/* ---- the types of values ---- */

typedef enum conf_type {
	CT_STR,	     /* char *; with check, only values check accepts */
	CT_WORDS,    /* char ** and a size_t count: words split at blanks and commas */
	CT_INT,	     /* int in [min, max] */
	CT_SIZE,     /* size_t in [min, max] */
	CT_INT64,    /* int64_t in [min, max] */
	CT_DOUBLE,   /* double, written as an integer in [min, max] */
	CT_ENUM,     /* an enum (int-sized): one of the names in map */
	CT_PROVIDER, /* provider: a name of provider.c's table; unset: provider_unset() */
} conf_type;

/* a name an enumeration accepts; a map ends with a NULL name */
typedef struct conf_enum {
	const char *name;
	int value;
	bool alias; /* accepted, but not listed in the message (an older name) */
} conf_enum;

/* enumerations are stored through an int: they must have its size */
_Static_assert(sizeof(hmac_alg) == sizeof(int) && sizeof(hmac_encoding) == sizeof(int) &&
		       sizeof(hmac_time_unit) == sizeof(int) &&
		       sizeof(route_order) == sizeof(int) && sizeof(route_key) == sizeof(int),
	       "enumerations stored as int");

static const conf_enum algorithms[] = {{"sha256", HMAC_SHA256, false},
				       {"sha1", HMAC_SHA1, false},
				       {"sha512", HMAC_SHA512, false},
				       {NULL, 0, false}};
static const conf_enum encodings[] = {{"hex", HMAC_HEX, false},
				      {"base64", HMAC_BASE64, false},
				      {NULL, 0, false}};
static const conf_enum time_units[] = {{"seconds", HMAC_SECONDS, false},
				       {"milliseconds", HMAC_MILLISECONDS, false},
				       {NULL, 0, false}};
/* "object": the name before "newest" */
static const conf_enum orders[] = {{"none", ROUTE_ORDER_NONE, false},
				   {"newest", ROUTE_ORDER_OBJECT, false},
				   {"object", ROUTE_ORDER_OBJECT, true},
				   {"sequence", ROUTE_ORDER_SEQUENCE, false},
				   {NULL, 0, false}};
static const conf_enum route_keys[] = {{"event", ROUTE_KEY_EVENT, false},
				       {"object-type", ROUTE_KEY_OBJECT_TYPE, false},
				       {NULL, 0, false}};
/* values are indexes: conf_log_format returns the name */
static const conf_enum log_formats[] = {{"text", 0, false}, {"json", 1, false}, {NULL, 0, false}};

/* ---- checks of string values: NULL when bad, else the part to keep ---- */

/* names appear in URLs and log lines: keep them to a safe alphabet */
static bool
valid_name(const char *s)
{
	if (*s == '\0' || strlen(s) > 64 || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/* schema.function, both plain lower-case identifiers */
static bool
valid_sql_function(const char *s)
{
	int dots = 0;
	bool start = true;

	for (; *s; s++) {
		if (*s == '.') {
			if (start || ++dots > 1)
				return false;
			start = true;
		} else if (*s == '_' || (*s >= 'a' && *s <= 'z') ||
			   (!start && isdigit((unsigned char)*s))) {
			start = false;
		} else {
			return false;
		}
	}
	return dots == 1 && !start;
}

static bool
is_http_url(const char *v)
{
	return strncmp(v, "http://", 7) == 0 || strncmp(v, "https://", 8) == 0;
}

static const char *
conninfo_ok(const char *v)
{
	return dbcheck_conninfo(v) == 0 ? v : NULL;
}

static const char *
url_ok(const char *v)
{
	return is_http_url(v) ? v : NULL;
}

static const char *
reconcile_url_ok(const char *v)
{
	return is_http_url(v) && strstr(v, "{key}") != NULL ? v : NULL;
}

/* sql:schema.function: keeps "schema.function" */
static const char *
handler_ok(const char *v)
{
	return strncmp(v, "sql:", 4) == 0 && valid_sql_function(v + 4) ? v + 4 : NULL;
}

/* signed_content: a template the hmac provider can sign (template.h) */
static int
template_ok(const char *v, char *msg, size_t len)
{
	template t;

	return template_parse(v, &t, msg, len);
}

static const char *
header_name_ok(const char *v)
{
	return valid_name(v) ? v : NULL;
}

/* a dotted path of JSON keys (jscan_path): no empty part */
static const char *
ref_field_ok(const char *v)
{
	bool start = true;

	if (strlen(v) > 128)
		return NULL;
	for (const char *s = v; *s; s++) {
		if (*s == '.' && !start) {
			start = true;
			continue;
		}
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return NULL;
		start = false;
	}
	return start ? NULL : v;
}

/* ---- the keys ---- */

/* the messages of bad values: "NAME must be WHAT between MIN and MAX" */
#define AN_INTEGER "an integer"
#define SECONDS "a number of seconds"
#define MILLISECONDS "a number of milliseconds"
#define CALLS_PER_SECOND "a number of calls per second"
#define BAD_CONNINFO(section)                                                                      \
	"[" section "] conninfo cannot be parsed by libpq (key=value pairs or a postgresql:// URI)"

/* ranges shared by [intake] and [endpoint NAME] */
#define MAX_BODY_MAX (64LL * 1024 * 1024)
#define TOLERANCE_MAX (7LL * 86400)

typedef struct conf_key {
	conf_kind kind;
	conf_type type;
	const char *name;
	size_t off;	      /* where the value goes: into struct conf, or the section's object */
	const char *def;      /* default, set as a value would be but without the range
			       * check (claim_ahead's -1 is "derive it"); NULL: unset */
	long long min, max;   /* numbers */
	const char *what;     /* numbers: "an integer", SECONDS ... */
	const conf_enum *map; /* CT_ENUM */
	const char *(*check)(const char *v); /* CT_STR: the part to keep, NULL when bad */
	const char *bad;		     /* CT_STR with check: the message */
	/* CT_STR: 0, or -1 with what is wrong with the value in msg (never a secret key) */
	int (*parse)(const char *v, char *msg, size_t len);
	size_t count_off;  /* CT_WORDS: the size_t count */
	const char *alias; /* another name for the key */
	const char *label; /* how messages name the key; NULL: name */
	bool sensitive;	   /* never shown (a password may be in it): only enumerations and the
			    * provider echo a bad value in their message, never a sensitive key */
} conf_key;

#define G(f) offsetof(struct conf, f)
#define W(f) offsetof(struct conf, worker.f)
#define E(f) offsetof(endpoint_conf, f)
#define R(f) offsetof(route_conf, f)

/* the shapes of rows: section kind, name, target, default, then the type's own */
#define STR(k, n, o, d)                                                                            \
	{                                                                                          \
		.kind = (k), .name = (n), .type = CT_STR, .off = (o), .def = (d)                   \
	}
#define CHECKED(k, n, o, fn, msg)                                                                  \
	{                                                                                          \
		.kind = (k), .name = (n), .type = CT_STR, .off = (o), .check = (fn), .bad = (msg)  \
	}
#define PARSED(k, n, o, fn)                                                                        \
	{                                                                                          \
		.kind = (k), .name = (n), .type = CT_STR, .off = (o), .parse = (fn)                \
	}
#define NUM(k, n, t, o, d, lo, hi, w)                                                              \
	{                                                                                          \
		.kind = (k), .name = (n), .type = (t), .off = (o), .def = (d), .min = (lo),        \
		.max = (hi), .what = (w)                                                           \
	}
#define ENUM(k, n, o, d, m, l)                                                                     \
	{                                                                                          \
		.kind = (k), .name = (n), .type = CT_ENUM, .off = (o), .def = (d), .map = (m),     \
		.label = (l)                                                                       \
	}
#define WORDS(k, n, o, cnt, d, a)                                                                  \
	{                                                                                          \
		.kind = (k), .name = (n), .type = CT_WORDS, .off = (o), .count_off = (cnt),        \
		.def = (d), .alias = (a)                                                           \
	}
#define CONNINFO(k, o, section)                                                                    \
	{                                                                                          \
		.kind = (k), .name = "conninfo", .type = CT_STR, .off = (o), .check = conninfo_ok, \
		.bad = BAD_CONNINFO(section), .sensitive = true                                    \
	}

static const conf_key keys[] = {
	/* [database] */
	CONNINFO(K_DATABASE, G(conninfo), "database"),

	/* [intake] */
	NUM(K_INTAKE, "max_body", CT_SIZE, G(max_body), "1048576", 1, MAX_BODY_MAX, AN_INTEGER),
	NUM(K_INTAKE, "threads", CT_INT, G(threads), "1", 1, 256, AN_INTEGER),
	NUM(K_INTAKE, "lock_timeout", CT_INT, G(lock_timeout_ms), "1000", 1, 600000, MILLISECONDS),
	NUM(K_INTAKE, "statement_timeout", CT_INT, G(statement_timeout_ms), "2000", 1, 600000,
	    MILLISECONDS),
	NUM(K_INTAKE, "tolerance", CT_INT64, G(tolerance), NULL, 1, TOLERANCE_MAX, SECONDS),

	/* [log] */
	ENUM(K_LOG, "format", G(log_format), "text", log_formats, "log format"),

	/* [worker] */
	CONNINFO(K_WORKER, G(worker_conninfo), "worker"),
	NUM(K_WORKER, "concurrency", CT_INT, W(concurrency), "16", 1, 1024, AN_INTEGER),
	NUM(K_WORKER, "batch", CT_INT, W(batch), "100", 1, 10000, AN_INTEGER),
	NUM(K_WORKER, "lease", CT_INT, W(lease), "60", 5, 86400, AN_INTEGER),
	NUM(K_WORKER, "claim_ahead", CT_INT, W(claim_ahead), "-1", 0, 2, AN_INTEGER),
	NUM(K_WORKER, "backoff_base", CT_INT, W(backoff_base), "5", 1, 86400, AN_INTEGER),
	NUM(K_WORKER, "backoff_cap", CT_INT, W(backoff_cap), "7200", 1, 86400, AN_INTEGER),
	NUM(K_WORKER, "retry_window", CT_INT, W(retry_window), "72000", 60, 30 * 86400, AN_INTEGER),
	STR(K_WORKER, "metrics_file", W(metrics_file), NULL),
	NUM(K_WORKER, "health_max_pending_age", CT_INT, W(health_max_pending_age), "900", 1,
	    365 * 86400, AN_INTEGER),
	NUM(K_WORKER, "health_max_parked_age", CT_INT, W(health_max_parked_age), "86400", 1,
	    365 * 86400, AN_INTEGER),

	/* [endpoint NAME]; unset account, max_body and tolerance: see check_endpoint */
	{.kind = K_ENDPOINT, .name = "provider", .type = CT_PROVIDER, .off = E(pe.provider)},
	STR(K_ENDPOINT, "secret_file", E(secret_file), NULL),
	STR(K_ENDPOINT, "account", E(account), NULL),
	STR(K_ENDPOINT, "environment", E(environment), "default"),
	STR(K_ENDPOINT, "public_url", E(pe.public_url), NULL),
	NUM(K_ENDPOINT, "max_body", CT_SIZE, E(max_body), NULL, 1, MAX_BODY_MAX, AN_INTEGER),
	NUM(K_ENDPOINT, "tolerance", CT_INT64, E(pe.tolerance), NULL, 1, TOLERANCE_MAX, SECONDS),
	/* provider = hmac */
	STR(K_ENDPOINT, "header", E(pe.hmac.header), NULL),
	ENUM(K_ENDPOINT, "algorithm", E(pe.hmac.alg), "sha256", algorithms, NULL),
	ENUM(K_ENDPOINT, "encoding", E(pe.hmac.enc), "hex", encodings, NULL),
	STR(K_ENDPOINT, "prefix", E(pe.hmac.prefix), NULL),
	STR(K_ENDPOINT, "id_header", E(pe.hmac.id_header), NULL),
	STR(K_ENDPOINT, "id_field", E(pe.hmac.id_field), NULL),
	STR(K_ENDPOINT, "type_header", E(pe.hmac.type_header), NULL),
	STR(K_ENDPOINT, "type_field", E(pe.hmac.type_field), NULL),
	STR(K_ENDPOINT, "object_field", E(pe.hmac.object_field), NULL),
	STR(K_ENDPOINT, "version_field", E(pe.hmac.version_field), NULL),
	PARSED(K_ENDPOINT, "signed_content", E(pe.hmac.signed_content), template_ok),
	CHECKED(K_ENDPOINT, "timestamp_header", E(pe.hmac.timestamp_header), header_name_ok,
		"timestamp_header must be a header name (letters, digits, '-', '_')"),
	ENUM(K_ENDPOINT, "timestamp_unit", E(pe.hmac.ts_unit), "seconds", time_units, NULL),
	/* the asymmetric providers (providers/pkey.h) */
	STR(K_ENDPOINT, "key_file", E(pe.key_file), NULL),
	STR(K_ENDPOINT, "ca_file", E(pe.ca_file), NULL),
	STR(K_ENDPOINT, "cert_cache", E(pe.cert_cache), NULL),
	STR(K_ENDPOINT, "audience", E(pe.audience), NULL),

	/* [route NAME]; an empty events list is "*" too (check_route) */
	WORDS(K_ROUTE, "endpoint", R(endpoints), R(n_endpoints), NULL, "endpoints"),
	WORDS(K_ROUTE, "events", R(events), R(n_events), "*", NULL),
	CHECKED(K_ROUTE, "url", R(url), url_ok, "url must start with http:// or https://"),
	CHECKED(K_ROUTE, "handler", R(handler), handler_ok,
		"handler must be sql:schema.function (lower-case identifiers)"),
	STR(K_ROUTE, "secret_file", R(secret_file), NULL),
	NUM(K_ROUTE, "timeout", CT_INT, R(timeout), "10", 1, 3600, SECONDS),
	NUM(K_ROUTE, "max_attempts", CT_INT, R(max_attempts), "12", 1, 100, AN_INTEGER),
	ENUM(K_ROUTE, "order", R(order), "none", orders, NULL),
	ENUM(K_ROUTE, "key", R(key), "event", route_keys, NULL),
	CHECKED(K_ROUTE, "response_ref_header", R(response_ref_header), header_name_ok,
		"response_ref_header must be a header name (letters, digits, '-', '_')"),
	CHECKED(K_ROUTE, "response_ref_field", R(response_ref_field), ref_field_ok,
		"response_ref_field must be a dotted path of JSON keys (letters, digits, '_', "
		"'-'), such as data.id"),
	CHECKED(K_ROUTE, "reconcile_url", R(reconcile_url), reconcile_url_ok,
		"reconcile_url must start with http:// or https:// and hold {key}"),
	NUM(K_ROUTE, "concurrency", CT_INT, R(concurrency), NULL, 1, 1000, AN_INTEGER),
	NUM(K_ROUTE, "rate", CT_DOUBLE, R(rate), NULL, 0, 100000, CALLS_PER_SECOND),
	NUM(K_ROUTE, "breaker_failures", CT_INT, R(breaker_failures), "5", 0, 1000, AN_INTEGER),
	NUM(K_ROUTE, "breaker_cooldown", CT_INT, R(breaker_cooldown), "30", 1, 86400, SECONDS),
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

/* ---- messages ---- */

static void conf_error(conf *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
conf_error(conf *c, const char *fmt, ...)
{
	va_list ap;
	char msg[2048], one[2560];
	size_t used = c->failed ? strlen(c->err) : 0;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->lineno > 0)
		n = snprintf(one, sizeof(one), "%s%s:%d: %s", used ? "\n" : "", c->path, c->lineno,
			     msg);
	else
		n = snprintf(one, sizeof(one), "%s%s: %s", used ? "\n" : "", c->path, msg);
	/* every problem is reported; what does not fit whole is left out */
	if (n > 0 && (size_t)n < sizeof(one) && c->errlen > used && (size_t)n < c->errlen - used)
		memcpy(c->err + used, one, (size_t)n + 1);
	c->failed = true;
}

/* ---- setting a value ---- */

static char **
split_words(const char *v, size_t *n)
{
	char **out = NULL;
	char *copy = xstrdup(v), *save = NULL;
	size_t alloc = 0;

	*n = 0;
	for (char *w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		out = xgrow(out, *n + 1, &alloc, sizeof(*out));
		out[(*n)++] = xstrdup(w);
	}
	free(copy);
	return out;
}

static void
free_words(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

static void *
field(void *base, size_t off)
{
	return (char *)base + off;
}

/* the name of obj, an object of the named section kind */
static const char *
name_of(conf_kind kind, const void *obj)
{
	return *(char *const *)((const char *)obj + sections[kind].name_off);
}

/* the object of the named section kind called name, or NULL */
static void *
find_named(const conf *c, conf_kind kind, const char *name)
{
	const conf_list *list = (const conf_list *)((const char *)c + sections[kind].list_off);

	for (size_t i = 0; i < list->n; i++)
		if (strcmp(name_of(kind, list->item[i]), name) == 0)
			return list->item[i];
	return NULL;
}

/* "a, b or c": the names of map, aliases left out */
static void
enum_names(const conf_enum *map, char *buf, size_t len)
{
	size_t left = 0, used = 0;

	for (const conf_enum *e = map; e->name != NULL; e++)
		left += !e->alias;
	buf[0] = '\0';
	for (const conf_enum *e = map; e->name != NULL && used < len; e++) {
		const char *after = "";

		if (e->alias)
			continue;
		if (--left > 1)
			after = ", ";
		else if (left == 1)
			after = " or ";
		used += (size_t)snprintf(buf + used, len - used, "%s%s", e->name, after);
	}
}

static int
enum_set(conf *c, const conf_key *k, int *dst, const char *v)
{
	char names[256];

	for (const conf_enum *e = k->map; e->name != NULL; e++) {
		if (strcmp(v, e->name) == 0) {
			*dst = e->value;
			return 0;
		}
	}
	enum_names(k->map, names, sizeof(names));
	conf_error(c, "%s must be %s, not \"%s\"", k->label ? k->label : k->name, names, v);
	return -1;
}

/*
 * Set key k of the section object base (struct conf for the unnamed
 * sections) to v: 0, or -1 with the message set.  A default (dflt) skips the
 * range check.
 */
static int
key_set(conf *c, const conf_key *k, void *base, const char *v, bool dflt)
{
	void *dst = field(base, k->off);
	long long n;

	switch (k->type) {
	case CT_STR: {
		char msg[512];

		if (k->check != NULL && !dflt && (v = k->check(v)) == NULL) {
			conf_error(c, "%s", k->bad);
			return -1;
		}
		if (k->parse != NULL && !dflt && k->parse(v, msg, sizeof(msg)) < 0) {
			conf_error(c, "%s: %s", k->name, msg);
			return -1;
		}
		free(*(char **)dst);
		*(char **)dst = xstrdup(v);
		return 0;
	}
	case CT_WORDS: {
		size_t *count = field(base, k->count_off);

		free_words(*(char ***)dst, *count);
		*(char ***)dst = split_words(v, count);
		return 0;
	}
	case CT_ENUM:
		return enum_set(c, k, dst, v);
	case CT_PROVIDER:
		if (provider_from_name(v, dst) != 0) {
			char names[2048];

			provider_names(names, sizeof(names));
			conf_error(c, "unknown provider \"%s\" (%s)", v, names);
			return -1;
		}
		return 0;
	case CT_INT:
	case CT_SIZE:
	case CT_INT64:
	case CT_DOUBLE:
		break;
	}
	if (decimal_parse(v, dflt ? LLONG_MIN : k->min, dflt ? LLONG_MAX : k->max, &n) != 0) {
		conf_error(c, "%s must be %s between %lld and %lld", k->name, k->what, k->min,
			   k->max);
		return -1;
	}
	if (k->type == CT_INT)
		*(int *)dst = (int)n;
	else if (k->type == CT_SIZE)
		*(size_t *)dst = (size_t)n;
	else if (k->type == CT_INT64)
		*(int64_t *)dst = n;
	else
		*(double *)dst = (double)n;
	return 0;
}

/* every default of a section kind, into base (unset keys stay zero or NULL) */
static void
defaults_set(conf *c, conf_kind kind, void *base)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		if (keys[i].kind != kind)
			continue;
		if (keys[i].def != NULL)
			(void)key_set(c, &keys[i], base, keys[i].def, true);
		else if (keys[i].type == CT_PROVIDER)
			*(provider *)field(base, keys[i].off) = provider_unset();
	}
}

/* the strings and lists of a section kind held in base */
static void
values_free(conf_kind kind, void *base)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		if (keys[i].kind != kind)
			continue;
		if (keys[i].type == CT_STR)
			free(*(char **)field(base, keys[i].off));
		else if (keys[i].type == CT_WORDS)
			free_words(*(char ***)field(base, keys[i].off),
				   *(size_t *)field(base, keys[i].count_off));
	}
}

static const conf_key *
key_find(conf_kind kind, const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (keys[i].kind == kind && (strcmp(keys[i].name, name) == 0 ||
					     (keys[i].alias && strcmp(keys[i].alias, name) == 0)))
			return &keys[i];
	return NULL;
}

const char *
conf_key_at(size_t i, const char **section)
{
	if (i >= N_KEYS)
		return NULL;
	*section = sections[keys[i].kind].name;
	return keys[i].name;
}

/* ---- sections ---- */

static void
seen_free(seen *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

/* 0, or -1 when name is already in list (*first: its line); else added */
static int
seen_add(seen **list, size_t *n, size_t *alloc, const char *name, int line, int *first)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i].name, name) == 0) {
			*first = (*list)[i].line;
			return -1;
		}
	*list = xgrow(*list, *n + 1, alloc, sizeof(**list));
	(*list)[*n] = (seen){xstrdup(name), line};
	(*n)++;
	return 0;
}

/* a [section] header: defined once, and its keys counted afresh; -1 when not */
static int
section_start(conf *c, const char *name)
{
	int first;

	seen_free(c->keys, c->n_keys);
	c->keys = NULL;
	c->n_keys = c->keys_alloc = 0;
	if (seen_add(&c->sections, &c->n_sections, &c->sections_alloc, name, c->lineno, &first) ==
	    0)
		return 0;
	conf_error(c, "section [%s] is defined twice (first at line %d)", name, first);
	return -1;
}

/* a key of the current section: given once */
static int
key_once(conf *c, const char *section, const char *key)
{
	int first;

	if (seen_add(&c->keys, &c->n_keys, &c->keys_alloc, key, c->lineno, &first) == 0)
		return 0;
	conf_error(c, "key \"%s\" is given twice in [%s] (first at line %d)", key, section, first);
	return -1;
}

/* the kind of section; *object: the NAME of [kind NAME] */
static int
section_kind(const char *section, const char **object, conf_kind *kind)
{
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const conf_section *s = &sections[i];
		size_t len = strlen(s->name);

		if (strncmp(section, s->name, len) != 0)
			continue;
		if (s->named ? section[len] == ' ' : section[len] == '\0') {
			*object = section + len + (s->named ? 1 : 0);
			*kind = (conf_kind)i;
			return 0;
		}
	}
	return -1;
}

/*
 * The object the keys of [kind NAME] go into: the one this section made
 * (libinih calls us per key), else a new one with its defaults.  NULL with
 * the message set when NAME is bad or taken.
 */
static void *
named_object(conf *c, conf_kind kind, const char *name)
{
	const conf_section *s = &sections[kind];
	conf_list *list = field(c, s->list_off);
	void *obj;

	if (list->n > 0 && strcmp(name_of(kind, list->item[list->n - 1]), name) == 0)
		return list->item[list->n - 1];
	if (!valid_name(name)) {
		conf_error(c, "%s name \"%s\" may hold only letters, digits, '-', '_' and '.'",
			   s->name, name);
		return NULL;
	}
	if (find_named(c, kind, name) != NULL) {
		conf_error(c, "%s \"%s\" is defined twice", s->name, name);
		return NULL;
	}
	if (list->n == CONF_MAX_ITEMS) {
		conf_error(c, "too many %ss (at most %d)", s->name, CONF_MAX_ITEMS);
		return NULL;
	}
	obj = xcalloc(1, s->size);
	*(char **)field(obj, s->name_off) = xstrdup(name);
	*(int *)field(obj, s->line_off) = c->lineno;
	defaults_set(c, kind, obj);
	list->item[list->n++] = obj;
	return obj;
}

/* obj (an endpoint or route) or a key of a plain section was in error */
static void
mark_in_error(conf *c, const void *obj, const char *key)
{
	if (obj != NULL) {
		c->bad = xgrow(c->bad, c->n_bad + 1, &c->bad_alloc, sizeof(*c->bad));
		c->bad[c->n_bad++] = obj;
	} else if (key != NULL && strcmp(key, "conninfo") == 0) {
		c->conninfo_unsure = true;
	}
}

/*
 * One call per key, and one with name == NULL per section: 0 after
 * reporting a problem.  A key of a section in error is not read (its
 * problems would be consequences of the section's).
 */
static int
on_item(conf *c, const char *section, const char *name, const char *value)
{
	const char *object;
	const conf_key *k;
	conf_kind kind;
	void *base = c;

	if (name != NULL && c->skip_section)
		return 1;
	if (name != NULL && key_once(c, section, name) != 0)
		return 0;
	if (section_kind(section, &object, &kind) != 0) {
		conf_error(c, "unknown section [%s]", section);
		return 0;
	}
	if (sections[kind].named && (base = named_object(c, kind, object)) == NULL)
		return 0;
	if (name == NULL)
		return 1;
	if ((k = key_find(kind, name)) == NULL) {
		/* often a misspelt required key: what the object then lacks would follow */
		conf_error(c, "unknown key \"%s\" in section [%s]", name, section);
		mark_in_error(c, sections[kind].named ? base : NULL, NULL);
		return 0;
	}
	if (key_set(c, k, base, value, false) == 0)
		return 1;
	mark_in_error(c, sections[kind].named ? base : NULL, name);
	return 0;
}

/*
 * A line of the current section could not be read (bad syntax, a NUL
 * byte): what it may have set is unknown, so its object is not checked.
 */
static void
line_in_error(conf *c)
{
	const char *object;
	conf_kind kind;
	conf_list *list;

	if (c->skip_section || section_kind(c->section, &object, &kind) != 0)
		return;
	if (!sections[kind].named) {
		mark_in_error(c, NULL, "conninfo");
		return;
	}
	list = field(c, sections[kind].list_off);
	if (list->n > 0 && strcmp(name_of(kind, list->item[list->n - 1]), object) == 0)
		mark_in_error(c, list->item[list->n - 1], NULL);
}

/* an endpoint or route whose keys were in error (its other problems follow from them) */
static bool
in_error(const conf *c, const void *obj)
{
	for (size_t i = 0; i < c->n_bad; i++)
		if (c->bad[i] == obj)
			return true;
	return false;
}

/* libinih callback: every problem is reported, the file is read to its end */
static int
ini_item(void *user, const char *section, const char *name, const char *value)
{
	(void)on_item(user, section, name, value);
	return 1;
}

/* ---- the line reader ---- */

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	*e = '\0';
	return s;
}

/*
 * A "key = value" line longer than libinih's line buffer (200 bytes in
 * Debian's build: a long conninfo, events list or public_url would be cut
 * in two and fail with a nonsense error), split as libinih splits lines:
 * the first '=' or ':', an inline comment after " ;", blanks trimmed.
 */
static void
long_item(conf *c, char *line)
{
	char *p = trim(line), *sep, *v;

	if (*p == '\0' || *p == ';' || *p == '#')
		return;
	if (*p == '[') {
		conf_error(c, "section name too long");
		return;
	}
	sep = p + strcspn(p, "=:");
	if (*sep == '\0') {
		conf_error(c, "syntax error (expected [section] or key = value)");
		line_in_error(c);
		return;
	}
	*sep = '\0';
	v = sep + 1;
	for (char *q = v; *q != '\0'; q++) {
		if (*q == ';' && (q == v || q[-1] == ' ' || q[-1] == '\t')) {
			*q = '\0';
			break;
		}
	}
	(void)on_item(c, c->section, trim(p), trim(v));
}

/*
 * A line libinih would refuse (no '=' or ':', a '[' without ']'), found
 * here so that every one is reported at its line and the file is read on.
 * An indented line is libinih's continuation of the previous value.
 */
static bool
bad_syntax(const char *line)
{
	const char *p = line;

	if (*p == ' ' || *p == '\t')
		return false;
	p += strspn(p, " \t\r\n");
	if (*p == '\0' || *p == ';' || *p == '#')
		return false;
	if (*p == '[')
		return strchr(p, ']') == NULL;
	return p[strcspn(p, "=:")] == '\0';
}

/*
 * fgets-like reader for libinih that counts lines for messages and takes
 * lines of any length: one that does not fit libinih's buffer is parsed
 * here (long_item) and libinih is handed an empty line instead.
 */
static char *
read_line(char *str, int num, void *stream)
{
	conf *c = stream;
	ssize_t n = getline(&c->line, &c->line_cap, c->fp);
	const char *p, *e;

	if (n < 0 || num < 2)
		return NULL;
	c->lineno++;
	/*
	 * libinih reports a section only with its first key; see headers here
	 * so that a bad or empty section is reported at its own line.
	 */
	p = c->line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '[' && (e = strchr(p, ']')) != NULL) {
		size_t len = (size_t)(e - p - 1);

		c->skip_section = false;
		if (len >= sizeof(c->section)) {
			/* no valid name is this long; keys after it must not land elsewhere */
			conf_error(c, "section name too long");
			c->skip_section = true;
		} else {
			memcpy(c->section, p + 1, len);
			c->section[len] = '\0';
			if (section_start(c, c->section) != 0 ||
			    !on_item(c, c->section, NULL, NULL))
				c->skip_section = true;
		}
	}
	if (strlen(c->line) == (size_t)n && bad_syntax(c->line)) {
		conf_error(c, "syntax error (expected [section] or key = value)");
		line_in_error(c);
		str[0] = '\n';
		str[1] = '\0';
		return str;
	}
	if ((size_t)n < (size_t)num && strlen(c->line) == (size_t)n) {
		memcpy(str, c->line, (size_t)n + 1);
		return str;
	}
	/* longer than libinih's buffer (or holding a NUL byte) */
	if (strlen(c->line) != (size_t)n) {
		conf_error(c, "NUL byte in the configuration file");
		line_in_error(c);
	} else
		long_item(c, c->line);
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

/* ---- the validation pass: what involves more than one key ---- */

static secret_set *
load_secrets(conf *c, const char *file, int line)
{
	char msg[512];
	char *full = (file[0] == '/') ? xstrdup(file) : xasprintf("%s/%s", c->dir, file);
	secret_set *s = secret_set_load(full, msg, sizeof(msg));

	free(full);
	if (s == NULL) {
		c->lineno = line;
		conf_error(c, "%s", msg);
	}
	return s;
}

/* a path relative to the configuration file's directory made absolute */
static void
absolute(conf *c, char **path)
{
	char *full;

	if (*path == NULL || (*path)[0] == '/')
		return;
	full = xasprintf("%s/%s", c->dir, *path);
	free(*path);
	*path = full;
}

/* the keys and roots of the asymmetric providers (key_file, ca_file) */
static void
load_keys(conf *c, endpoint_conf *ep)
{
	char msg[512];

	absolute(c, &ep->pe.key_file);
	absolute(c, &ep->pe.ca_file);
	absolute(c, &ep->pe.cert_cache);
	if (ep->pe.secrets != NULL && provider_endpoint_load(&ep->pe, msg, sizeof(msg)) != 0) {
		c->lineno = ep->line;
		conf_error(c, "endpoint \"%s\": %s", ep->name, msg);
	}
}

/* the program's connection string is set */
static void
check_conninfo(conf *c)
{
	c->lineno = 0;
	if (c->prog == CONF_WORKER && c->conninfo == NULL && c->worker_conninfo == NULL)
		conf_error(c, "[worker] conninfo is not set");
	else if (c->prog != CONF_WORKER && c->conninfo == NULL)
		conf_error(c, "[database] conninfo is not set");
}

/* required keys, the provider's own check, defaults from [intake], secrets */
static void
check_endpoint(conf *c, endpoint_conf *ep)
{
	const char *why;

	c->lineno = ep->line;
	if (!provider_is_set(ep->pe.provider)) {
		conf_error(c, "endpoint \"%s\" has no provider", ep->name);
		return;
	}
	if (ep->secret_file == NULL) {
		conf_error(c, "endpoint \"%s\" has no secret_file", ep->name);
		return;
	}
	if ((why = provider_endpoint_check(&ep->pe)) != NULL) {
		conf_error(c, "endpoint \"%s\": %s", ep->name, why);
		return;
	}
	if (ep->account == NULL)
		ep->account = xstrdup(ep->name);
	if (ep->max_body == 0)
		ep->max_body = c->max_body;
	if (ep->pe.tolerance == 0)
		ep->pe.tolerance = c->tolerance;
	/* the worker never verifies a signature, the backfill neither */
	if (c->prog != CONF_WORKER && c->prog != CONF_BACKFILL) {
		ep->pe.secrets = load_secrets(c, ep->secret_file, ep->line);
		load_keys(c, ep);
	}
}

/*
 * Endpoints named and defined; an ordered route's endpoints send event
 * versions (the provider's row says); url or handler; the timeout within
 * the lease; secrets
 */
static void
check_route(conf *c, route_conf *r)
{
	c->lineno = r->line;
	if (r->n_endpoints == 0) {
		conf_error(c, "route \"%s\" has no endpoint", r->name);
		return;
	}
	for (size_t i = 0; i < r->n_endpoints; i++) {
		if (conf_endpoint(c, r->endpoints[i]) == NULL) {
			conf_error(c, "route \"%s\" names unknown endpoint \"%s\"", r->name,
				   r->endpoints[i]);
			return;
		}
	}
	for (size_t i = 0; i < r->n_endpoints && r->order != ROUTE_ORDER_NONE; i++) {
		const endpoint_conf *ep = conf_endpoint(c, r->endpoints[i]); /* found above */

		/* an endpoint without a provider has its own error already */
		if (ep != NULL && provider_is_set(ep->pe.provider) &&
		    !provider_endpoint_sends_version(&ep->pe)) {
			conf_error(
				c,
				"route \"%s\": order needs event versions, and endpoint \"%s\" (%s) "
				"has none (provider = hmac: set version_field)",
				r->name, r->endpoints[i], provider_name(ep->pe.provider));
			return;
		}
	}
	if (r->order != ROUTE_ORDER_NONE && r->key == ROUTE_KEY_OBJECT_TYPE) {
		/* one action per (object, type) keeps only the first version: a later one
		 * would collapse into it and never be sent */
		conf_error(c,
			   "route \"%s\": order = %s and key = object-type cannot be combined (the "
			   "later versions of an object would never be sent); use key = event",
			   r->name, r->order == ROUTE_ORDER_SEQUENCE ? "sequence" : "newest");
		return;
	}
	if ((r->url == NULL) == (r->handler == NULL)) {
		conf_error(c, "route \"%s\" needs exactly one of url and handler", r->name);
		return;
	}
	if (r->reconcile_url != NULL && r->url == NULL) {
		conf_error(
			c,
			"route \"%s\": reconcile_url needs url (a handler's outcome is never unknown)",
			r->name);
		return;
	}
	/* what only an HTTP call has: a handler runs in the database */
	if (r->handler != NULL && (r->secret_file != NULL || r->response_ref_field != NULL)) {
		conf_error(c,
			   "route \"%s\": %s needs url (a handler is called in the database: "
			   "there is no request to sign and no answer to read)",
			   r->name, r->secret_file != NULL ? "secret_file" : "response_ref_field");
		return;
	}
	if (r->handler != NULL && (r->rate > 0 || r->concurrency > 0)) {
		conf_error(c,
			   "route \"%s\": %s needs url (handlers run one at a time on the worker's "
			   "database connection: no calls to limit)",
			   r->name, r->rate > 0 ? "rate" : "concurrency");
		return;
	}
	if (r->n_events == 0) { /* events = (empty) */
		r->events = xmalloc(sizeof(*r->events));
		r->events[0] = xstrdup("*");
		r->n_events = 1;
	}
	if (r->timeout >= c->worker.lease) {
		conf_error(
			c,
			"route \"%s\": timeout (%d s) must be shorter than the worker lease (%d s)",
			r->name, r->timeout, c->worker.lease);
		return;
	}
	/* the responder and the backfill sign nothing */
	if (r->secret_file != NULL && c->prog != CONF_RESPONDER && c->prog != CONF_BACKFILL)
		r->secrets = load_secrets(c, r->secret_file, r->line);
}

/*
 * A claimed job may wait behind claim_ahead rounds of calls before its own
 * starts, each at most the longest route timeout: all of that must fit in
 * the lease, or a call would start on a lease about to run out.  Unset, it
 * is the most that fits (at most 2 rounds, the measured optimum).  The
 * worker still renews a lease that is too short when a call starts.
 */
static void
check_claim_ahead(conf *c)
{
	worker_conf *w = &c->worker;
	int longest = 1;

	for (size_t i = 0; i < c->routes.n; i++) {
		const route_conf *r = c->routes.item[i];

		if (r->timeout > longest)
			longest = r->timeout;
	}
	if (w->claim_ahead < 0) {
		w->claim_ahead = w->lease / longest - 1;
		if (w->claim_ahead > 2)
			w->claim_ahead = 2;
		if (w->claim_ahead < 0)
			w->claim_ahead = 0;
		return;
	}
	if ((w->claim_ahead + 1) * longest > w->lease)
		conf_error(
			c,
			"claim_ahead = %d with a route timeout of %d s needs a lease of at least %d s, "
			"not %d s",
			w->claim_ahead, longest, (w->claim_ahead + 1) * longest, w->lease);
}

/* after the whole file is read: 0, or -1 with every problem's message (one per object) */
static int
conf_check(conf *c)
{
	if (!c->conninfo_unsure)
		check_conninfo(c);
	for (size_t i = 0; i < c->endpoints.n; i++)
		if (!in_error(c, c->endpoints.item[i]))
			check_endpoint(c, c->endpoints.item[i]);
	for (size_t i = 0; i < c->routes.n; i++)
		if (!in_error(c, c->routes.item[i]))
			check_route(c, c->routes.item[i]);
	check_claim_ahead(c);
	c->lineno = 0;
	return c->failed ? -1 : 0;
}

/* ---- loading ---- */

const char *
conf_default_path(const char *opt)
{
	const char *env = getenv("HOOKINBOX_CONFIG");

	if (opt != NULL)
		return opt;
	if (env != NULL && *env != '\0')
		return env;
	return CONF_DEFAULT_PATH;
}

conf *
conf_load(const char *path, char *errbuf, size_t errlen)
{
	return conf_load_for(path, CONF_ALL, errbuf, errlen);
}

conf *
conf_load_for(const char *path, conf_program prog, char *errbuf, size_t errlen)
{
	conf *c = xcalloc(1, sizeof(*c));
	const char *slash;
	int rc;

	c->prog = prog;
	c->path = xstrdup(path);
	slash = strrchr(path, '/');
	c->dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	if (c->dir[0] == '\0') {
		free(c->dir);
		c->dir = xstrdup("/");
	}
	c->err = errbuf;
	c->errlen = errlen;
	if (errlen > 0)
		errbuf[0] = '\0';
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!sections[i].named)
			defaults_set(c, (conf_kind)i, c);

	c->fp = fopen(path, "r");
	if (c->fp == NULL) {
		snprintf(errbuf, errlen, "%s: could not open configuration file: %s", path,
			 strerror(errno));
		goto fail;
	}
	rc = ini_parse_stream(read_line, c, ini_item, c);
	fclose(c->fp);
	c->fp = NULL;
	free(c->line);
	c->line = NULL;
	if (rc != 0 && !c->failed) {
		/* a syntax error libinih found itself, that bad_syntax() did not */
		c->lineno = rc;
		conf_error(c, "syntax error (expected [section] or key = value)");
	}
	/* the checks between keys too: every problem in one run */
	if (conf_check(c) != 0)
		goto fail;
	return c;
fail:
	conf_free(c);
	return NULL;
}

void
conf_free(conf *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->endpoints.n; i++) {
		endpoint_conf *ep = c->endpoints.item[i];

		values_free(K_ENDPOINT, ep);
		secret_set_free(ep->pe.secrets);
		provider_endpoint_release(&ep->pe);
		free(ep->name);
		free(ep);
	}
	for (size_t i = 0; i < c->routes.n; i++) {
		route_conf *r = c->routes.item[i];

		values_free(K_ROUTE, r);
		secret_set_free(r->secrets);
		free(r->name);
		free(r);
	}
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!sections[i].named)
			values_free((conf_kind)i, c);
	seen_free(c->sections, c->n_sections);
	seen_free(c->keys, c->n_keys);
	free(c->bad);
	free(c->path);
	free(c->dir);
	free(c);
}

/* ---- reading ---- */

const char *
conf_path(const conf *c)
{
	return c->path;
}

const char *
conf_conninfo(const conf *c)
{
	if (c->prog == CONF_WORKER && c->worker_conninfo != NULL)
		return c->worker_conninfo;
	return c->conninfo;
}

bool
conf_worker_conninfo_set(const conf *c)
{
	return c->worker_conninfo != NULL;
}

const char *
conf_log_format(const conf *c)
{
	return log_formats[c->log_format].name;
}

int
conf_threads(const conf *c)
{
	return c->threads;
}

int
conf_lock_timeout_ms(const conf *c)
{
	return c->lock_timeout_ms;
}

int
conf_statement_timeout_ms(const conf *c)
{
	return c->statement_timeout_ms;
}

size_t
conf_endpoint_count(const conf *c)
{
	return c->endpoints.n;
}

const endpoint_conf *
conf_endpoint_at(const conf *c, size_t i)
{
	return c->endpoints.item[i];
}

const endpoint_conf *
conf_endpoint(const conf *c, const char *name)
{
	return find_named(c, K_ENDPOINT, name);
}

size_t
conf_route_count(const conf *c)
{
	return c->routes.n;
}

const route_conf *
conf_route_at(const conf *c, size_t i)
{
	return c->routes.item[i];
}

const route_conf *
conf_route(const conf *c, const char *name)
{
	return find_named(c, K_ROUTE, name);
}

const worker_conf *
conf_worker(const conf *c)
{
	return &c->worker;
}
