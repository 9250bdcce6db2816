/* SPDX-License-Identifier: ISC */
/*
 * conf.c - the INI configuration both programs read
 *
 * libinih does the tokenising; we feed it through ini_parse_stream with our
 * own line reader so that every message can name the line, and check every
 * key strictly: an unknown section or key, a section defined twice, a key
 * given twice, a bad number, a conninfo libpq cannot parse or a missing
 * secret file (of those the reading program needs) stops the program at
 * start.  Values are never echoed in
 * messages except for enumerations, since conninfo may hold a password.
 */
#include "conf.h"

#include "dbcheck.h"
#include "decimal.h"
#include "xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
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

struct conf {
	char *path;
	char *dir; /* directory of path, for relative secret files */
	conf_program prog;
	char *conninfo;	       /* [database]: the responder's */
	char *worker_conninfo; /* [worker]: the worker's, else [database] */
	char *log_format;
	size_t max_body;
	int64_t tolerance;
	int threads;
	int lock_timeout_ms;
	int statement_timeout_ms;
	endpoint_conf *endpoints[CONF_MAX_ITEMS];
	size_t n_endpoints;
	route_conf *routes[CONF_MAX_ITEMS];
	size_t n_routes;
	worker_conf worker;
	/* parse state */
	FILE *fp;
	char *line; /* the physical line being read (getline's buffer) */
	size_t line_cap;
	char section[128]; /* the section that line is in */
	int lineno;
	seen *sections; /* every [section] so far */
	size_t n_sections;
	seen *keys; /* the keys of the current section */
	size_t n_keys;
	bool failed;
	char *err;
	size_t errlen;
};

static void conf_error(conf *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
conf_error(conf *c, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	if (c->failed)
		return; /* keep the first error: later ones are often consequences */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->lineno > 0)
		snprintf(c->err, c->errlen, "%s:%d: %s", c->path, c->lineno, msg);
	else
		snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
	c->failed = true;
}

/* strict integer in [min, max] */
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

/* a dotted path of JSON keys (jscan_path): no empty part */
static bool
valid_ref_field(const char *s)
{
	bool start = true;

	if (strlen(s) > 128)
		return false;
	for (; *s; s++) {
		if (*s == '.' && !start) {
			start = true;
			continue;
		}
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
		start = false;
	}
	return !start;
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

static char **
split_words(const char *v, size_t *n)
{
	char **out = NULL;
	char *copy = xstrdup(v), *save = NULL;

	*n = 0;
	for (char *w = strtok_r(copy, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		out = xrealloc(out, (*n + 1) * sizeof(*out));
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

static void
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

static void
seen_free(seen *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

/* 0, or -1 when name is already in list (*first: its line); else added */
static int
seen_add(seen **list, size_t *n, const char *name, int line, int *first)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i].name, name) == 0) {
			*first = (*list)[i].line;
			return -1;
		}
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[*n] = (seen){xstrdup(name), line};
	(*n)++;
	return 0;
}

/* a [section] header: defined once, and its keys counted afresh */
static void
section_start(conf *c, const char *name)
{
	int first;

	seen_free(c->keys, c->n_keys);
	c->keys = NULL;
	c->n_keys = 0;
	if (seen_add(&c->sections, &c->n_sections, name, c->lineno, &first) != 0)
		conf_error(c, "section [%s] is defined twice (first at line %d)", name, first);
}

/* a key of the current section: given once */
static int
key_once(conf *c, const char *section, const char *key)
{
	int first;

	if (seen_add(&c->keys, &c->n_keys, key, c->lineno, &first) == 0)
		return 0;
	conf_error(c, "key \"%s\" is given twice in [%s] (first at line %d)", key, section, first);
	return -1;
}

/* a conninfo libpq can parse; never echoed (it may hold a password) */
static int
conninfo_key(conf *c, char **dst, const char *section, const char *v)
{
	if (dbcheck_conninfo(v) != 0) {
		conf_error(c,
			   "[%s] conninfo cannot be parsed by libpq (key=value pairs or a "
			   "postgresql:// URI)",
			   section);
		return 0;
	}
	set_str(dst, v);
	return 1;
}

static endpoint_conf *
current_endpoint(conf *c, const char *name)
{
	if (c->n_endpoints > 0 && strcmp(c->endpoints[c->n_endpoints - 1]->name, name) == 0)
		return c->endpoints[c->n_endpoints - 1];
	return NULL;
}

static route_conf *
current_route(conf *c, const char *name)
{
	if (c->n_routes > 0 && strcmp(c->routes[c->n_routes - 1]->name, name) == 0)
		return c->routes[c->n_routes - 1];
	return NULL;
}

static int
endpoint_key(conf *c, endpoint_conf *ep, const char *k, const char *v)
{
	long long n;

	if (strcmp(k, "provider") == 0) {
		if (provider_from_name(v, &ep->provider) != 0) {
			char names[256];

			provider_names(names, sizeof(names));
			conf_error(c, "unknown provider \"%s\" (%s)", v, names);
			return 0;
		}
	} else if (strcmp(k, "secret_file") == 0)
		set_str(&ep->secret_file, v);
	else if (strcmp(k, "account") == 0)
		set_str(&ep->account, v);
	else if (strcmp(k, "environment") == 0)
		set_str(&ep->environment, v);
	else if (strcmp(k, "public_url") == 0)
		set_str(&ep->public_url, v);
	else if (strcmp(k, "max_body") == 0) {
		if (decimal_parse(v, 1, 64LL * 1024 * 1024, &n) != 0) {
			conf_error(c, "max_body must be an integer between 1 and 67108864");
			return 0;
		}
		ep->max_body = (size_t)n;
	} else if (strcmp(k, "tolerance") == 0) {
		if (decimal_parse(v, 1, 7 * 86400, &n) != 0) {
			conf_error(c, "tolerance must be a number of seconds between 1 and 604800");
			return 0;
		}
		ep->tolerance = n;
	} else if (strcmp(k, "header") == 0)
		set_str(&ep->hmac.header, v);
	else if (strcmp(k, "algorithm") == 0) {
		if (strcmp(v, "sha256") == 0)
			ep->hmac.alg = HMAC_SHA256;
		else if (strcmp(v, "sha1") == 0)
			ep->hmac.alg = HMAC_SHA1;
		else if (strcmp(v, "sha512") == 0)
			ep->hmac.alg = HMAC_SHA512;
		else {
			conf_error(c, "algorithm must be sha256, sha1 or sha512, not \"%s\"", v);
			return 0;
		}
	} else if (strcmp(k, "encoding") == 0) {
		if (strcmp(v, "hex") == 0)
			ep->hmac.enc = HMAC_HEX;
		else if (strcmp(v, "base64") == 0)
			ep->hmac.enc = HMAC_BASE64;
		else {
			conf_error(c, "encoding must be hex or base64, not \"%s\"", v);
			return 0;
		}
	} else if (strcmp(k, "prefix") == 0)
		set_str(&ep->hmac.prefix, v);
	else if (strcmp(k, "id_header") == 0)
		set_str(&ep->hmac.id_header, v);
	else if (strcmp(k, "id_field") == 0)
		set_str(&ep->hmac.id_field, v);
	else if (strcmp(k, "type_header") == 0)
		set_str(&ep->hmac.type_header, v);
	else if (strcmp(k, "type_field") == 0)
		set_str(&ep->hmac.type_field, v);
	else if (strcmp(k, "object_field") == 0)
		set_str(&ep->hmac.object_field, v);
	else if (strcmp(k, "version_field") == 0)
		set_str(&ep->hmac.version_field, v);
	else {
		conf_error(c, "unknown key \"%s\" in section [endpoint %s]", k, ep->name);
		return 0;
	}
	return 1;
}

static int
route_key_set(conf *c, route_conf *r, const char *k, const char *v)
{
	long long n;

	if (strcmp(k, "endpoint") == 0 || strcmp(k, "endpoints") == 0) {
		free_words(r->endpoints, r->n_endpoints);
		r->endpoints = split_words(v, &r->n_endpoints);
	} else if (strcmp(k, "events") == 0) {
		free_words(r->events, r->n_events);
		r->events = split_words(v, &r->n_events);
	} else if (strcmp(k, "url") == 0) {
		if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) {
			conf_error(c, "url must start with http:// or https://");
			return 0;
		}
		set_str(&r->url, v);
	} else if (strcmp(k, "handler") == 0) {
		if (strncmp(v, "sql:", 4) != 0 || !valid_sql_function(v + 4)) {
			conf_error(c,
				   "handler must be sql:schema.function (lower-case identifiers)");
			return 0;
		}
		set_str(&r->handler, v + 4);
	} else if (strcmp(k, "secret_file") == 0)
		set_str(&r->secret_file, v);
	else if (strcmp(k, "timeout") == 0) {
		if (decimal_parse(v, 1, 3600, &n) != 0) {
			conf_error(c, "timeout must be a number of seconds between 1 and 3600");
			return 0;
		}
		r->timeout = (int)n;
	} else if (strcmp(k, "max_attempts") == 0) {
		if (decimal_parse(v, 1, 100, &n) != 0) {
			conf_error(c, "max_attempts must be an integer between 1 and 100");
			return 0;
		}
		r->max_attempts = (int)n;
	} else if (strcmp(k, "order") == 0) {
		if (strcmp(v, "none") == 0)
			r->order = ROUTE_ORDER_NONE;
		else if (strcmp(v, "newest") == 0 || strcmp(v, "object") == 0)
			r->order = ROUTE_ORDER_OBJECT; /* "object": the name before "newest" */
		else if (strcmp(v, "sequence") == 0)
			r->order = ROUTE_ORDER_SEQUENCE;
		else {
			conf_error(c, "order must be none, newest or sequence, not \"%s\"", v);
			return 0;
		}
	} else if (strcmp(k, "response_ref_header") == 0) {
		if (!valid_name(v)) {
			conf_error(
				c,
				"response_ref_header must be a header name (letters, digits, '-', '_')");
			return 0;
		}
		set_str(&r->response_ref_header, v);
	} else if (strcmp(k, "response_ref_field") == 0) {
		if (!valid_ref_field(v)) {
			conf_error(c, "response_ref_field must be a dotted path of JSON keys "
				      "(letters, digits, '_', '-'), such as data.id");
			return 0;
		}
		set_str(&r->response_ref_field, v);
	} else if (strcmp(k, "reconcile_url") == 0) {
		if ((strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) ||
		    strstr(v, "{key}") == NULL) {
			conf_error(
				c,
				"reconcile_url must start with http:// or https:// and hold {key}");
			return 0;
		}
		set_str(&r->reconcile_url, v);
	} else if (strcmp(k, "concurrency") == 0) {
		if (decimal_parse(v, 1, 1000, &n) != 0) {
			conf_error(c, "concurrency must be an integer between 1 and 1000");
			return 0;
		}
		r->concurrency = (int)n;
	} else if (strcmp(k, "rate") == 0) {
		if (decimal_parse(v, 0, 100000, &n) != 0) {
			conf_error(
				c,
				"rate must be a number of calls per second between 0 and 100000");
			return 0;
		}
		r->rate = (double)n;
	} else if (strcmp(k, "breaker_failures") == 0) {
		if (decimal_parse(v, 0, 1000, &n) != 0) {
			conf_error(c, "breaker_failures must be an integer between 0 and 1000");
			return 0;
		}
		r->breaker_failures = (int)n;
	} else if (strcmp(k, "breaker_cooldown") == 0) {
		if (decimal_parse(v, 1, 86400, &n) != 0) {
			conf_error(
				c,
				"breaker_cooldown must be a number of seconds between 1 and 86400");
			return 0;
		}
		r->breaker_cooldown = (int)n;
	} else if (strcmp(k, "key") == 0) {
		if (strcmp(v, "event") == 0)
			r->key = ROUTE_KEY_EVENT;
		else if (strcmp(v, "object-type") == 0)
			r->key = ROUTE_KEY_OBJECT_TYPE;
		else {
			conf_error(c, "key must be event or object-type, not \"%s\"", v);
			return 0;
		}
	} else {
		conf_error(c, "unknown key \"%s\" in section [route %s]", k, r->name);
		return 0;
	}
	return 1;
}

static int
worker_key(conf *c, const char *k, const char *v)
{
	static const struct {
		const char *key;
		size_t off;
		long long min, max;
	} ints[] = {
		{"concurrency", offsetof(worker_conf, concurrency), 1, 1024},
		{"batch", offsetof(worker_conf, batch), 1, 10000},
		{"lease", offsetof(worker_conf, lease), 5, 86400},
		{"claim_ahead", offsetof(worker_conf, claim_ahead), 0, 2},
		{"backoff_base", offsetof(worker_conf, backoff_base), 1, 86400},
		{"backoff_cap", offsetof(worker_conf, backoff_cap), 1, 86400},
		{"retry_window", offsetof(worker_conf, retry_window), 60, 30 * 86400},
		{"health_max_pending_age", offsetof(worker_conf, health_max_pending_age), 1,
		 365 * 86400},
		{"health_max_parked_age", offsetof(worker_conf, health_max_parked_age), 1,
		 365 * 86400},
	};
	long long n;

	if (strcmp(k, "conninfo") == 0)
		return conninfo_key(c, &c->worker_conninfo, "worker", v);
	if (strcmp(k, "metrics_file") == 0) {
		set_str(&c->worker.metrics_file, v);
		return 1;
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		if (strcmp(k, ints[i].key) != 0)
			continue;
		if (decimal_parse(v, ints[i].min, ints[i].max, &n) != 0) {
			conf_error(c, "%s must be an integer between %lld and %lld", k, ints[i].min,
				   ints[i].max);
			return 0;
		}
		*(int *)(void *)((char *)&c->worker + ints[i].off) = (int)n;
		return 1;
	}
	conf_error(c, "unknown key \"%s\" in section [worker]", k);
	return 0;
}

/* libinih callback: one call per key, and one with name == NULL per section */
static int
on_item(void *user, const char *section, const char *name, const char *value)
{
	conf *c = user;
	long long n;

	if (c->failed)
		return 0;
	if (name != NULL && key_once(c, section, name) != 0)
		return 0;
	if (strncmp(section, "endpoint ", 9) == 0) {
		const char *ename = section + 9;
		endpoint_conf *ep = current_endpoint(c, ename);

		if (ep == NULL) {
			if (!valid_name(ename)) {
				conf_error(
					c,
					"endpoint name \"%s\" may hold only letters, digits, '-', '_' and '.'",
					ename);
				return 0;
			}
			for (size_t i = 0; i < c->n_endpoints; i++)
				if (strcmp(c->endpoints[i]->name, ename) == 0) {
					conf_error(c, "endpoint \"%s\" is defined twice", ename);
					return 0;
				}
			if (c->n_endpoints == CONF_MAX_ITEMS) {
				conf_error(c, "too many endpoints (at most %d)", CONF_MAX_ITEMS);
				return 0;
			}
			ep = xcalloc(1, sizeof(*ep));
			ep->name = xstrdup(ename);
			ep->provider = PROVIDER__COUNT;
			ep->hmac.alg = HMAC_SHA256;
			ep->hmac.enc = HMAC_HEX;
			ep->line = c->lineno;
			c->endpoints[c->n_endpoints++] = ep;
		}
		return name == NULL ? 1 : endpoint_key(c, ep, name, value);
	}
	if (strncmp(section, "route ", 6) == 0) {
		const char *rname = section + 6;
		route_conf *r = current_route(c, rname);

		if (r == NULL) {
			if (!valid_name(rname)) {
				conf_error(
					c,
					"route name \"%s\" may hold only letters, digits, '-', '_' and '.'",
					rname);
				return 0;
			}
			for (size_t i = 0; i < c->n_routes; i++)
				if (strcmp(c->routes[i]->name, rname) == 0) {
					conf_error(c, "route \"%s\" is defined twice", rname);
					return 0;
				}
			if (c->n_routes == CONF_MAX_ITEMS) {
				conf_error(c, "too many routes (at most %d)", CONF_MAX_ITEMS);
				return 0;
			}
			r = xcalloc(1, sizeof(*r));
			r->name = xstrdup(rname);
			r->timeout = 10;
			r->max_attempts = 12;
			r->breaker_failures = 5;
			r->breaker_cooldown = 30;
			r->line = c->lineno;
			c->routes[c->n_routes++] = r;
		}
		return name == NULL ? 1 : route_key_set(c, r, name, value);
	}
	if (strcmp(section, "database") == 0) {
		if (name == NULL)
			return 1;
		if (strcmp(name, "conninfo") == 0)
			return conninfo_key(c, &c->conninfo, "database", value);
	} else if (strcmp(section, "intake") == 0) {
		if (name == NULL)
			return 1;
		if (strcmp(name, "max_body") == 0) {
			if (decimal_parse(value, 1, 64LL * 1024 * 1024, &n) != 0) {
				conf_error(c, "max_body must be an integer between 1 and 67108864");
				return 0;
			}
			c->max_body = (size_t)n;
			return 1;
		}
		if (strcmp(name, "threads") == 0) {
			if (decimal_parse(value, 1, 256, &n) != 0) {
				conf_error(c, "threads must be an integer between 1 and 256");
				return 0;
			}
			c->threads = (int)n;
			return 1;
		}
		if (strcmp(name, "lock_timeout") == 0 || strcmp(name, "statement_timeout") == 0) {
			if (decimal_parse(value, 1, 600000, &n) != 0) {
				conf_error(
					c,
					"%s must be a number of milliseconds between 1 and 600000",
					name);
				return 0;
			}
			if (name[0] == 'l')
				c->lock_timeout_ms = (int)n;
			else
				c->statement_timeout_ms = (int)n;
			return 1;
		}
		if (strcmp(name, "tolerance") == 0) {
			if (decimal_parse(value, 1, 7 * 86400, &n) != 0) {
				conf_error(
					c,
					"tolerance must be a number of seconds between 1 and 604800");
				return 0;
			}
			c->tolerance = n;
			return 1;
		}
	} else if (strcmp(section, "log") == 0) {
		if (name == NULL)
			return 1;
		if (strcmp(name, "format") == 0) {
			if (strcmp(value, "text") != 0 && strcmp(value, "json") != 0) {
				conf_error(c, "log format must be text or json, not \"%s\"", value);
				return 0;
			}
			set_str(&c->log_format, value);
			return 1;
		}
	} else if (strcmp(section, "worker") == 0) {
		return name == NULL ? 1 : worker_key(c, name, value);
	} else {
		conf_error(c, "unknown section [%s]", section);
		return 0;
	}
	conf_error(c, "unknown key \"%s\" in section [%s]", name, section);
	return 0;
}

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
	if (!on_item(c, c->section, trim(p), trim(v)) && !c->failed)
		conf_error(c, "syntax error (expected [section] or key = value)");
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

		if (len >= sizeof(c->section)) {
			/* no valid name is this long; keys after it must not land elsewhere */
			conf_error(c, "section name too long");
		} else {
			memcpy(c->section, p + 1, len);
			c->section[len] = '\0';
			section_start(c, c->section);
			on_item(c, c->section, NULL, NULL);
		}
	}
	if ((size_t)n < (size_t)num && strlen(c->line) == (size_t)n) {
		memcpy(str, c->line, (size_t)n + 1);
		return str;
	}
	/* longer than libinih's buffer (or holding a NUL byte) */
	if (strlen(c->line) != (size_t)n)
		conf_error(c, "NUL byte in the configuration file");
	else
		long_item(c, c->line);
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

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

static void
check_endpoint(conf *c, endpoint_conf *ep)
{
	const char *why;

	c->lineno = ep->line;
	if (ep->provider == PROVIDER__COUNT) {
		conf_error(c, "endpoint \"%s\" has no provider", ep->name);
		return;
	}
	if (ep->secret_file == NULL) {
		conf_error(c, "endpoint \"%s\" has no secret_file", ep->name);
		return;
	}
	if (provider_get(ep->provider)->check != NULL &&
	    (why = provider_get(ep->provider)->check(ep)) != NULL) {
		conf_error(c, "endpoint \"%s\": %s", ep->name, why);
		return;
	}
	if (ep->account == NULL)
		ep->account = xstrdup(ep->name);
	if (ep->environment == NULL)
		ep->environment = xstrdup("default");
	if (ep->max_body == 0)
		ep->max_body = c->max_body;
	if (ep->tolerance == 0)
		ep->tolerance = c->tolerance;
	if (c->prog != CONF_WORKER) /* the worker never verifies a signature */
		ep->secrets = load_secrets(c, ep->secret_file, ep->line);
}

/* whether the intake reads an event version for ep's events (the provider's row says) */
static bool
sends_version(const endpoint_conf *ep)
{
	return provider_get(ep->provider)->sends_version(ep);
}

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

		if (ep != NULL && !sends_version(ep)) {
			conf_error(
				c,
				"route \"%s\": order needs event versions, and endpoint \"%s\" (%s) "
				"has none (provider = hmac: set version_field)",
				r->name, r->endpoints[i], provider_name(ep->provider));
			return;
		}
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
	if (r->n_events == 0) {
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
	if (r->secret_file != NULL && c->prog != CONF_RESPONDER) /* the responder signs nothing */
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

	for (size_t i = 0; i < c->n_routes; i++)
		if (c->routes[i]->timeout > longest)
			longest = c->routes[i]->timeout;
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
	c->max_body = 1048576;
	c->threads = 1;
	c->lock_timeout_ms = 1000;
	c->statement_timeout_ms = 2000;
	c->worker = (worker_conf){.concurrency = 16,
				  .batch = 100,
				  .lease = 60,
				  .claim_ahead = -1,
				  .backoff_base = 5,
				  .backoff_cap = 7200,
				  .retry_window = 72000,
				  .health_max_pending_age = 900,
				  .health_max_parked_age = 86400};

	c->fp = fopen(path, "r");
	if (c->fp == NULL) {
		snprintf(errbuf, errlen, "%s: could not open configuration file: %s", path,
			 strerror(errno));
		goto fail;
	}
	rc = ini_parse_stream(read_line, c, on_item, c);
	fclose(c->fp);
	c->fp = NULL;
	free(c->line);
	c->line = NULL;
	if (c->failed)
		goto fail;
	if (rc != 0) {
		/* a syntax error libinih found itself (no '=' or ']') */
		c->lineno = rc;
		conf_error(c, "syntax error (expected [section] or key = value)");
		goto fail;
	}
	c->lineno = 0;
	if (prog == CONF_WORKER && c->conninfo == NULL && c->worker_conninfo == NULL) {
		conf_error(c, "[worker] conninfo is not set");
		goto fail;
	}
	if (prog != CONF_WORKER && c->conninfo == NULL) {
		conf_error(c, "[database] conninfo is not set");
		goto fail;
	}
	for (size_t i = 0; i < c->n_endpoints && !c->failed; i++)
		check_endpoint(c, c->endpoints[i]);
	for (size_t i = 0; i < c->n_routes && !c->failed; i++)
		check_route(c, c->routes[i]);
	if (!c->failed)
		check_claim_ahead(c);
	if (c->failed)
		goto fail;
	c->lineno = 0;
	return c;
fail:
	conf_free(c);
	return NULL;
}

static void
hmac_conf_release(hmac_conf *h)
{
	free(h->header);
	free(h->prefix);
	free(h->id_header);
	free(h->id_field);
	free(h->type_header);
	free(h->type_field);
	free(h->object_field);
	free(h->version_field);
}

void
conf_free(conf *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n_endpoints; i++) {
		endpoint_conf *ep = c->endpoints[i];

		free(ep->name);
		free(ep->account);
		free(ep->environment);
		free(ep->secret_file);
		secret_set_free(ep->secrets);
		free(ep->public_url);
		hmac_conf_release(&ep->hmac);
		free(ep);
	}
	for (size_t i = 0; i < c->n_routes; i++) {
		route_conf *r = c->routes[i];

		free(r->name);
		free_words(r->endpoints, r->n_endpoints);
		free_words(r->events, r->n_events);
		free(r->url);
		free(r->handler);
		free(r->reconcile_url);
		free(r->response_ref_header);
		free(r->response_ref_field);
		free(r->secret_file);
		secret_set_free(r->secrets);
		free(r);
	}
	free(c->worker.metrics_file);
	seen_free(c->sections, c->n_sections);
	seen_free(c->keys, c->n_keys);
	free(c->worker_conninfo);
	free(c->conninfo);
	free(c->log_format);
	free(c->path);
	free(c->dir);
	free(c);
}

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
	return c->log_format ? c->log_format : "text";
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
	return c->n_endpoints;
}
const endpoint_conf *
conf_endpoint_at(const conf *c, size_t i)
{
	return c->endpoints[i];
}
size_t
conf_route_count(const conf *c)
{
	return c->n_routes;
}
const route_conf *
conf_route_at(const conf *c, size_t i)
{
	return c->routes[i];
}
const worker_conf *
conf_worker(const conf *c)
{
	return &c->worker;
}

const endpoint_conf *
conf_endpoint(const conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_endpoints; i++)
		if (strcmp(c->endpoints[i]->name, name) == 0)
			return c->endpoints[i];
	return NULL;
}

const route_conf *
conf_route(const conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_routes; i++)
		if (strcmp(c->routes[i]->name, name) == 0)
			return c->routes[i];
	return NULL;
}
