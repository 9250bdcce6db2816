/* SPDX-License-Identifier: ISC */
/*
 * claim.c - take due actions under a lease
 */
#include "claim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "db.h"
#include "failpoint.h"
#include "hex.h"
#include "log.h"
#include "sha256.h"
#include "xalloc.h"

enum {
	COL_ID,
	COL_TOKEN,
	COL_ROUTE,
	COL_KEY,
	COL_ATTEMPTS,
	COL_MAX,
	COL_AGE,
	COL_EVENT_ID,
	COL_TYPE,
	COL_OBJECT,
	COL_CTYPE,
	COL_BODY,
	COL_OUTCOME,
	COL_PROBE,
	COL_UNKNOWN,
	COL__COUNT
};

static char *
opt_str(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : xstrdup(PQgetvalue(r, row, col));
}

static job *
job_from_row(const PGresult *r, int i, const conf *c, int64_t lease_until_ms)
{
	job *j = xcalloc(1, sizeof(*j));
	const char *tok = PQgetvalue(r, i, COL_TOKEN);

	j->action_id = strtoll(PQgetvalue(r, i, COL_ID), NULL, 10);
	snprintf(j->token, sizeof(j->token), "%s", tok);
	j->route_name = xstrdup(PQgetvalue(r, i, COL_ROUTE));
	j->route = conf_route(c, j->route_name);
	j->idem_key = xstrdup(PQgetvalue(r, i, COL_KEY));
	j->attempt = (int)strtol(PQgetvalue(r, i, COL_ATTEMPTS), NULL, 10);
	j->max_attempts = (int)strtol(PQgetvalue(r, i, COL_MAX), NULL, 10);
	j->age_s = strtod(PQgetvalue(r, i, COL_AGE), NULL);
	j->lease_until_ms = lease_until_ms;
	j->event_id = xstrdup(PQgetvalue(r, i, COL_EVENT_ID));
	j->event_type = opt_str(r, i, COL_TYPE);
	j->object_id = opt_str(r, i, COL_OBJECT);
	j->content_type = opt_str(r, i, COL_CTYPE);
	if (!PQgetisnull(r, i, COL_BODY)) {
		/* bytea in text form (hex): back to the exact stored bytes */
		size_t len = 0;
		unsigned char *raw =
			PQunescapeBytea((const unsigned char *)PQgetvalue(r, i, COL_BODY), &len);

		if (raw == NULL)
			abort(); /* only fails for lack of memory */
		j->body = xmalloc(len + 1);
		memcpy(j->body, raw, len);
		j->body[len] = '\0';
		j->body_len = len;
		PQfreemem(raw);
	}
	j->probe = strcmp(PQgetvalue(r, i, COL_PROBE), "t") == 0;
	j->unknown = strcmp(PQgetvalue(r, i, COL_UNKNOWN), "t") == 0;
	j->retry_after_s = -1;
	j->outcome = JOB_RETRY; /* until a result says otherwise */
	return j;
}

int
claim_run(PGconn *conn, const conf *c, int limit, const int *route_limits, int *route_got,
	  size_t first, jobq *out, claim_counts *counts, metrics *m)
{
	static const char sql[] =
		"select action_id, lease_token, route, idem_key, attempts,"
		" max_attempts, age_s, event_id, event_type, object_id,"
		" content_type, body, outcome, probe, unknown"
		" from hookinbox.claim_actions($1::integer, $2::integer, $3::integer,"
		" $4::text[], $5::integer[])";
	const worker_conf *w = conf_worker(c);
	char b0[16], b1[16], b2[16];
	const char *p[5] = {b0, b1, b2, NULL, NULL};
	size_t n_routes = conf_route_count(c);
	db_array routes, limits;
	PGresult *r;
	int rc = -1, got;
	/* the server starts the lease after this: a safe lower bound for its end */
	int64_t lease_until_ms = clock_mono_us() / 1000 + (int64_t)w->lease * 1000;

	*counts = (claim_counts){0, 0, 0, 0};
	for (size_t i = 0; i < n_routes; i++)
		route_got[i] = 0;
	snprintf(b0, sizeof(b0), "%d", limit);
	snprintf(b1, sizeof(b1), "%d", w->lease);
	snprintf(b2, sizeof(b2), "%d", w->retry_window);
	/* only the routes configured here, those with room, in turn from first */
	db_array_init(&routes);
	db_array_init(&limits);
	for (size_t k = 0; k < n_routes; k++) {
		size_t i = (first + k) % n_routes;

		if (route_limits[i] <= 0)
			continue;
		db_array_add(&routes, conf_route_at(c, i)->name);
		db_array_addf_int(&limits, route_limits[i]);
	}
	p[3] = db_array_get(&routes);
	p[4] = db_array_get(&limits);
	r = db_exec(conn, sql, 5, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "claim") != 0 || PQnfields(r) != COL__COUNT)
		goto out;
	got = PQntuples(r);
	for (int i = 0; i < got; i++) {
		const char *what = PQgetvalue(r, i, COL_OUTCOME);
		const route_conf *rc_row = conf_route(c, PQgetvalue(r, i, COL_ROUTE));

		for (size_t k = 0; k < n_routes; k++)
			route_got[k] += conf_route_at(c, k) == rc_row;
		if (strcmp(what, "stale") == 0) {
			counts->stale++;
			if (m != NULL)
				metrics_action(m, PQgetvalue(r, i, COL_ROUTE), ACT_STALE);
			continue;
		}
		if (strcmp(what, "review") == 0) {
			counts->review++;
			log_kv("review", "route", PQgetvalue(r, i, COL_ROUTE), LOG_NUM, "action_id",
			       PQgetvalue(r, i, COL_ID), "object", PQgetvalue(r, i, COL_OBJECT),
			       "note",
			       "held for review: its order cannot be decided (sql/order-review.sql)",
			       LOG_END);
			continue;
		}
		if (strcmp(what, "claimed") != 0) {
			counts->parked++;
			if (m != NULL)
				metrics_action(m, PQgetvalue(r, i, COL_ROUTE), ACT_PARKED);
			continue;
		}
		counts->claimed++;
		jobq_push(out, job_from_row(r, i, c, lease_until_ms));
	}
	rc = 0;
	if (counts->claimed > 0)
		FAILPOINT("worker-after-claim");
out:
	PQclear(r);
	db_array_release(&routes);
	db_array_release(&limits);
	return rc;
}

int
claim_route_report(PGconn *conn, const gate_report *rep)
{
	static const char sql[] = "select hookinbox.route_report($1, $2, $3::double precision, $4)";
	char secs[32];
	const char *p[4] = {rep->route, gate_report_name(rep->what), secs, rep->reason};
	PGresult *r;
	int rc;

	snprintf(secs, sizeof(secs), "%.3f", rep->seconds);
	r = db_exec(conn, sql, 4, p);
	rc = db_check(conn, r, PGRES_TUPLES_OK, "route report");
	PQclear(r);
	if (rc == 0)
		log_kv("route", "route", rep->route, "state", gate_report_name(rep->what),
		       "seconds", secs, "reason", rep->reason, LOG_END);
	return rc;
}

static int
cmp_id(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int
claim_renew(PGconn *conn, job **jobs, size_t n, int lease_s)
{
	static const char sql[] = "select * from hookinbox.renew_leases($1::bigint[], $2::uuid[],"
				  " $3::integer)";
	int64_t lease_until_ms = clock_mono_us() / 1000 + (int64_t)lease_s * 1000;
	db_array ids, tokens;
	long long *got = NULL;
	char lbuf[16];
	const char *p[3];
	PGresult *r = NULL;
	size_t n_got;
	int rc = -1;

	db_array_init(&ids);
	db_array_init(&tokens);
	for (size_t i = 0; i < n; i++) {
		db_array_addf_int(&ids, jobs[i]->action_id);
		db_array_add(&tokens, jobs[i]->token);
	}
	snprintf(lbuf, sizeof(lbuf), "%d", lease_s);
	p[0] = db_array_get(&ids);
	p[1] = db_array_get(&tokens);
	p[2] = lbuf;
	r = db_exec(conn, sql, 3, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "renew leases") != 0 || PQnfields(r) != 1)
		goto out;
	n_got = (size_t)PQntuples(r);
	got = xcalloc(n_got + 1, sizeof(*got));
	for (size_t i = 0; i < n_got; i++)
		got[i] = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10);
	qsort(got, n_got, sizeof(*got), cmp_id);
	for (size_t i = 0; i < n; i++) {
		long long id = jobs[i]->action_id;

		if (bsearch(&id, got, n_got, sizeof(*got), cmp_id) != NULL)
			jobs[i]->lease_until_ms = lease_until_ms;
		else
			jobs[i]->outcome = JOB_LOST;
	}
	rc = 0;
out:
	PQclear(r);
	free(got);
	db_array_release(&ids);
	db_array_release(&tokens);
	return rc;
}

int
claim_release(PGconn *conn, job **jobs, size_t n)
{
	static const char sql[] = "select hookinbox.release_actions($1::bigint[], $2::uuid[])";
	db_array ids, tokens;
	const char *p[2];
	PGresult *r;
	int rc;

	db_array_init(&ids);
	db_array_init(&tokens);
	for (size_t i = 0; i < n; i++) {
		db_array_addf_int(&ids, jobs[i]->action_id);
		db_array_add(&tokens, jobs[i]->token);
	}
	p[0] = db_array_get(&ids);
	p[1] = db_array_get(&tokens);
	r = db_exec(conn, sql, 2, p);
	rc = db_check(conn, r, PGRES_TUPLES_OK, "release claims");
	PQclear(r);
	db_array_release(&ids);
	db_array_release(&tokens);
	return rc;
}

int
claim_unserved(PGconn *conn, const conf *c)
{
	static const char sql[] = "select route, due from hookinbox.unserved_routes($1::text[])";
	db_array routes;
	const char *p[1];
	PGresult *r;
	int rc = -1;

	db_array_init(&routes);
	for (size_t i = 0; i < conf_route_count(c); i++)
		db_array_add(&routes, conf_route_at(c, i)->name);
	p[0] = db_array_get(&routes);
	r = db_exec(conn, sql, 1, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "routes not configured") != 0 || PQnfields(r) != 2)
		goto out;
	for (int i = 0; i < PQntuples(r); i++)
		log_kv_warn("route-not-configured", "route", PQgetvalue(r, i, 0), LOG_NUM, "due",
			    PQgetvalue(r, i, 1), "note",
			    "left alone: this worker's configuration has no such route", LOG_END);
	rc = 0;
out:
	PQclear(r);
	db_array_release(&routes);
	return rc;
}

/* append to buf[*len..], truncating at cap - 1 */
static void
append(char *buf, size_t cap, size_t *len, const char *a, const char *b)
{
	int n = snprintf(buf + *len, cap - *len, "%s%s", a, b);

	if (n < 0 || (size_t)n >= cap - *len)
		*len = cap - 1; /* truncated: the fingerprint still differs from others' */
	else
		*len += (size_t)n;
}

/*
 * A url as hookinbox.worker_routes may keep it: credentials (user:password@,
 * the query string, which often carries an api_key or a token) and the path
 * of hook URLs that are themselves the secret (Slack, Discord) replaced by
 * "***", with the first 16 hex digits of the url's SHA-256, so that two
 * configurations that differ only there still have different fingerprints.
 */
static void
redact_url(const char *url, char *out, size_t cap)
{
	const char *scheme_end = strstr(url, "://");
	const char *host = scheme_end != NULL ? scheme_end + 3 : url;
	const char *path = host + strcspn(host, "/?#");
	const char *at = memchr(host, '@', (size_t)(path - host));
	const char *query = strchr(path, '?');
	bool secret_path = strstr(host, "hooks.slack.com") != NULL ||
			   strstr(host, "discord.com") != NULL ||
			   strstr(host, "discordapp.com") != NULL;
	unsigned char md[SHA256_LEN];
	char hex[2 * 8 + 1];
	int keep_path;

	if (at == NULL && query == NULL && !secret_path) {
		snprintf(out, cap, "%s", url);
		return;
	}
	if (sha256_digest(url, strlen(url), md) != 0)
		memset(md, 0, sizeof(md));
	hex_encode(md, 8, hex);
	keep_path = secret_path ? 0 : (int)(query != NULL ? query - path : (long)strlen(path));
	/* truncation only shortens the redacted form: nothing secret is left in it */
	(void)snprintf(out, cap, "%.*s%s%.*s%.*s%s#sha256:%s", (int)(host - url), url,
		       at != NULL ? "***@" : "", (int)(path - (at != NULL ? at + 1 : host)),
		       at != NULL ? at + 1 : host, keep_path, path,
		       secret_path     ? "/***"
		       : query != NULL ? "?***"
				       : "",
		       hex);
}

/* one route as the fingerprint sees it: what decides where its events go */
static void
describe_route(const route_conf *r, db_array *out)
{
	char buf[4096], kind[32], url[2048];
	size_t len = 0;

	snprintf(kind, sizeof(kind), "|order=%d|key=%d|", (int)r->order, (int)r->key);
	append(buf, sizeof(buf), &len, r->name, kind);
	if (r->url != NULL)
		redact_url(r->url, url, sizeof(url));
	append(buf, sizeof(buf), &len, r->url != NULL ? url : r->handler, "|endpoints=");
	for (size_t i = 0; i < r->n_endpoints; i++)
		append(buf, sizeof(buf), &len, i ? "," : "", r->endpoints[i]);
	append(buf, sizeof(buf), &len, "|events=", "");
	for (size_t i = 0; i < r->n_events; i++)
		append(buf, sizeof(buf), &len, i ? "," : "", r->events[i]);
	db_array_add(out, buf);
}

int
claim_routes_check(PGconn *conn, const conf *c, char *fp, size_t fp_cap)
{
	static const char sql[] = "select fingerprint, other, last_host, last_seen"
				  " from hookinbox.routes_check($1::text[], $2, 24)";
	char host[256];
	db_array routes;
	const char *p[2] = {NULL, host};
	const char *mine = NULL;
	PGresult *r;
	int rc = -1;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	db_array_init(&routes);
	for (size_t i = 0; i < conf_route_count(c); i++)
		describe_route(conf_route_at(c, i), &routes);
	p[0] = db_array_get(&routes);
	r = db_exec(conn, sql, 2, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "routes check") != 0 || PQnfields(r) != 4)
		goto out;
	for (int i = 0; i < PQntuples(r); i++) {
		if (strcmp(PQgetvalue(r, i, 1), "t") != 0) {
			mine = PQgetvalue(r, i, 0);
			snprintf(fp, fp_cap, "%s", mine);
			continue;
		}
		log_kv_warn(
			"routes-differ", "routes", mine, "other", PQgetvalue(r, i, 0), "other_host",
			PQgetvalue(r, i, 2), "other_seen", PQgetvalue(r, i, 3), "note",
			"another worker has other routes: each adds its routes' actions to the events "
			"the other fans out meanwhile, and works only its own routes' actions",
			LOG_END);
	}
	rc = 0;
out:
	PQclear(r);
	db_array_release(&routes);
	return rc;
}
