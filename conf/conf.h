/* SPDX-License-Identifier: ISC */
/*
 * conf.h - the INI configuration the responder, the worker and
 * hookinbox-backfill read
 *
 * conf_load parses the file (libinih), loads every secret file it names
 * and checks everything a program needs, so that a bad file stops the
 * program at start with "file:line: what is wrong".  The returned handle
 * owns all strings and secret sets below; they stay valid until conf_free.
 */
#ifndef HOOKINBOX_CONF_H
#define HOOKINBOX_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint.h" /* provider_endpoint: what the providers read */
#include "secret.h"

/* the Makefile's SYSCONFDIR */
#ifndef HOOKINBOX_SYSCONFDIR
#define HOOKINBOX_SYSCONFDIR "/etc/hookinbox"
#endif
#define CONF_DEFAULT_PATH HOOKINBOX_SYSCONFDIR "/hookinbox.conf"

typedef struct endpoint_conf {
	char *name;	      /* [endpoint NAME]; served at <mount>/NAME */
	provider_endpoint pe; /* what the provider reads: providers/endpoint.h */
	char *account;	      /* delivery key part; default: the endpoint's name */
	char *environment;    /* delivery key part; default: "default" */
	char *secret_file;
	size_t max_body; /* bytes; default from [intake] */
	int line;	 /* where the section starts, for messages */
} endpoint_conf;

typedef enum route_order {
	ROUTE_ORDER_NONE,    /* every event, in no particular order */
	ROUTE_ORDER_OBJECT,  /* order = newest: only the newest version of an object */
	ROUTE_ORDER_SEQUENCE /* order = sequence: every version of an object, in order */
} route_order;

typedef enum route_key {
	ROUTE_KEY_EVENT,      /* one action per (route, delivery key) */
	ROUTE_KEY_OBJECT_TYPE /* one action per (route, object id, event type) */
} route_key;

typedef struct route_conf {
	char *name;	  /* [route NAME] */
	char **endpoints; /* endpoint = a b c (at least one, each defined) */
	size_t n_endpoints;
	char **events; /* events = glob list; default "*" */
	size_t n_events;
	char *url;	   /* url = http(s)://...  (or handler) */
	char *handler;	   /* handler = sql:schema.function -> "schema.function" */
	char *secret_file; /* optional: sign outgoing calls (Standard Webhooks) */
	secret_set *secrets;
	int timeout;	   /* seconds per call, default 10 */
	int max_attempts;  /* default 12 */
	route_order order; /* order = none (default) | newest | sequence */
	route_key key;	   /* key = event (default) | object-type */
	/* route limits, each per worker process (see README "Route limits") */
	int concurrency;	   /* calls in flight at once; 0 = unset: half the worker's
				    * concurrency (rounded up) when there are several
				    * routes, all of it when there is one (worker/gate.c) */
	double rate;		   /* calls started per second (token bucket); 0 = no limit */
	int breaker_failures;	   /* transient failures, with no answer for a window
				    * (worker/gate.h), that open the circuit breaker,
				    * default 5; 0 = no breaker */
	int breaker_cooldown;	   /* seconds open before one probe call, default 30 */
	char *response_ref_header; /* response_ref_header = NAME: the response header kept
				    * as the action's reference; default X-Request-Id */
	char *response_ref_field;  /* response_ref_field = dotted.path: the reference read
				    * from a 2xx JSON answer instead; NULL = none */
	char *reconcile_url;	   /* reconcile_url = http(s)://...{key}...: asked before re-sending
				    * an action whose last outcome is unknown; NULL = never */
	int line;
} route_conf;

typedef struct conf conf;

/*
 * Which program reads the file.  Each loads only the secret files it
 * needs: the responder the endpoints' (to verify), the worker the routes'
 * (to sign), so each secret file can be readable by one program's user.
 */
typedef enum conf_program {
	CONF_ALL,	/* every secret file (tests) */
	CONF_RESPONDER, /* [endpoint] secrets; connects with [database] conninfo */
	CONF_WORKER,	/* [route] secrets; [worker] conninfo, else [database] conninfo */
	CONF_BACKFILL	/* no secret file (it reads the API credential itself); [database] */
} conf_program;

/*
 * Load and check path for prog.  On error returns NULL with
 * "path:line: message" (or "path: message") in errbuf.  The caller frees
 * the result with conf_free.  A section defined twice, a key given twice in
 * a section and a conninfo libpq cannot parse are errors.
 */
conf *conf_load_for(const char *path, conf_program prog, char *errbuf, size_t errlen);
/* conf_load_for(path, CONF_ALL, ...) */
conf *conf_load(const char *path, char *errbuf, size_t errlen);
void conf_free(conf *c);

/* path from -c, else $HOOKINBOX_CONFIG, else CONF_DEFAULT_PATH */
const char *conf_default_path(const char *opt);

const char *conf_path(const conf *c);
/* the program's connection: [database] conninfo, or the worker's (see conf_program) */
const char *conf_conninfo(const conf *c);
/* [worker] conninfo is set */
bool conf_worker_conninfo_set(const conf *c);
const char *conf_log_format(const conf *c); /* [log] format = text | json */
/*
 * [intake] threads: request threads per responder process (default 1).
 * Above 1 the threads share one committing connection (group commit).
 */
int conf_threads(const conf *c);
/*
 * [intake] lock_timeout and statement_timeout, in milliseconds (defaults
 * 1000 and 2000): the responder's database session waits at most this
 * long for a lock or a statement, then answers 503 with Retry-After, well
 * before the providers give up (Slack after 3 s, Shopify after 5 s).
 */
int conf_lock_timeout_ms(const conf *c);
int conf_statement_timeout_ms(const conf *c);

size_t conf_endpoint_count(const conf *c);
const endpoint_conf *conf_endpoint_at(const conf *c, size_t i);
/* NULL when no endpoint has that name */
const endpoint_conf *conf_endpoint(const conf *c, const char *name);

size_t conf_route_count(const conf *c);
const route_conf *conf_route_at(const conf *c, size_t i);
const route_conf *conf_route(const conf *c, const char *name);

/* [worker] settings (defaults in brackets) */
typedef struct worker_conf {
	int concurrency;	    /* concurrency [16] */
	int batch;		    /* batch [100] rows per claim */
	int lease;		    /* lease [60] seconds; must exceed the longest route timeout */
	int claim_ahead;	    /* claim_ahead [derived] rounds of calls claimed before a
				     * slot is free, 0-2; (claim_ahead + 1) x the longest
				     * route timeout fits in the lease.  Unset: the most
				     * that fits, at most 2 */
	int backoff_base;	    /* backoff_base [5] seconds */
	int backoff_cap;	    /* backoff_cap [7200] seconds */
	int retry_window;	    /* retry_window [72000] seconds (20 h): park after this */
	char *metrics_file;	    /* metrics_file [unset] */
	int health_max_pending_age; /* health_max_pending_age [900] seconds (--health-check) */
	int health_max_parked_age;  /* health_max_parked_age [86400] seconds (--health-check) */
} worker_conf;

const worker_conf *conf_worker(const conf *c);

/*
 * The i-th row of the key table (for the unit test, which checks that
 * every key has a case): the key's name and, in *section, its section's
 * ("endpoint" for [endpoint NAME]).  NULL past the last row.
 */
const char *conf_key_at(size_t i, const char **section);

#endif
