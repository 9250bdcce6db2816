/* SPDX-License-Identifier: ISC */
/*
 * route_report.c - what workers tell each other about their routes
 */
#include "route_report.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "hex.h"
#include "log.h"
#include "sha256.h"

/* one report to hookinbox.route_report(), logged once written */
static int
write_one(PGconn *conn, const gate_report *rep)
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

int
route_report_flush(PGconn *conn, gate *g)
{
	gate_report reps[16];
	size_t n;

	while ((n = gate_take_reports(g, reps, 16)) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (write_one(conn, &reps[i]) != 0 && db_lost(conn))
				return -1;
		}
	}
	return 0;
}

int
route_report_unserved(PGconn *conn, const conf *c)
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
route_report_check(PGconn *conn, const conf *c, char *fp, size_t fp_cap)
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
