/* SPDX-License-Identifier: ISC */
/*
 * claim.c - take due actions under a lease
 */
#include "claim.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "db.h"
#include "failpoint.h"
#include "hex.h"
#include "log.h"
#include "pgvalue.h"
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
	const char *tok = PQgetvalue(r, i, COL_TOKEN);
	long long id, attempt, max;
	double age;
	job *j;

	if (pgvalue_int(r, i, COL_ID, 1, LLONG_MAX, &id, "claim") != 0 ||
	    pgvalue_int(r, i, COL_ATTEMPTS, 0, INT_MAX, &attempt, "claim") != 0 ||
	    pgvalue_int(r, i, COL_MAX, 0, INT_MAX, &max, "claim") != 0 ||
	    pgvalue_real(r, i, COL_AGE, &age, "claim") != 0)
		return NULL; /* its lease runs out and it is claimed again */
	j = xcalloc(1, sizeof(*j));
	j->action_id = id;
	snprintf(j->token, sizeof(j->token), "%s", tok);
	j->route_name = xstrdup(PQgetvalue(r, i, COL_ROUTE));
	j->route = conf_route(c, j->route_name);
	j->idem_key = xstrdup(PQgetvalue(r, i, COL_KEY));
	j->attempt = (int)attempt;
	j->max_attempts = (int)max;
	j->age_s = age;
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

void
claim_result_init(claim_result *res, size_t n_routes)
{
	*res = (claim_result){.n_routes = n_routes,
			      .route_got = xcalloc(n_routes + 1, sizeof(int)),
			      .route_stale = xcalloc(n_routes + 1, sizeof(int)),
			      .route_parked = xcalloc(n_routes + 1, sizeof(int))};
}

void
claim_result_release(claim_result *res)
{
	free(res->route_got);
	free(res->route_stale);
	free(res->route_parked);
	*res = (claim_result){.n_routes = 0};
}

/* which of c's routes a row is, or -1 */
static long
route_index(const conf *c, const char *name)
{
	const route_conf *r = conf_route(c, name);

	for (size_t k = 0; r != NULL && k < conf_route_count(c); k++)
		if (conf_route_at(c, k) == r)
			return (long)k;
	return -1;
}

/* one row of the claim: a job appended to out, or counted as stale, parked, held */
static void
take_row(const PGresult *r, int i, const conf *c, int64_t lease_until_ms, jobq *out,
	 claim_result *res)
{
	const char *what = PQgetvalue(r, i, COL_OUTCOME);
	long k = route_index(c, PQgetvalue(r, i, COL_ROUTE));
	bool counted = k >= 0 && (size_t)k < res->n_routes;

	if (counted)
		res->route_got[k]++;
	if (strcmp(what, "stale") == 0) {
		res->stale++;
		if (counted)
			res->route_stale[k]++;
	} else if (strcmp(what, "review") == 0) {
		res->review++;
		log_kv("review", "route", PQgetvalue(r, i, COL_ROUTE), LOG_NUM, "action_id",
		       PQgetvalue(r, i, COL_ID), "object", PQgetvalue(r, i, COL_OBJECT), "note",
		       "held for review: its order cannot be decided (sql/order-review.sql)",
		       LOG_END);
	} else if (strcmp(what, "claimed") != 0) {
		res->parked++;
		if (counted)
			res->route_parked[k]++;
	} else {
		job *j = job_from_row(r, i, c, lease_until_ms);

		if (j != NULL) {
			res->claimed++;
			jobq_push(out, j);
		}
	}
}

int
claim_run(PGconn *conn, const claim_request *req, jobq *out, claim_result *res)
{
	static const char sql[] =
		"select action_id, lease_token, route, idem_key, attempts,"
		" max_attempts, age_s, event_id, event_type, object_id,"
		" content_type, body, outcome, probe, unknown"
		" from hookinbox.claim_actions($1::integer, $2::integer, $3::integer,"
		" $4::text[], $5::integer[])";
	const conf *c = req->c;
	const worker_conf *w = conf_worker(c);
	char b0[16], b1[16], b2[16];
	const char *p[5] = {b0, b1, b2, NULL, NULL};
	size_t n_routes = conf_route_count(c);
	db_array routes, limits;
	PGresult *r;
	int rc = -1, got;
	/* the server starts the lease after this: a safe lower bound for its end */
	int64_t lease_until_ms = clock_mono_us() / 1000 + (int64_t)w->lease * 1000;

	res->claimed = res->stale = res->parked = res->review = 0;
	for (size_t i = 0; i < res->n_routes; i++)
		res->route_got[i] = res->route_stale[i] = res->route_parked[i] = 0;
	snprintf(b0, sizeof(b0), "%d", req->limit);
	snprintf(b1, sizeof(b1), "%d", w->lease);
	snprintf(b2, sizeof(b2), "%d", w->retry_window);
	/* only the routes configured here, those with room, in turn from first */
	db_array_init(&routes);
	db_array_init(&limits);
	for (size_t k = 0; k < n_routes; k++) {
		size_t i = (req->first + k) % n_routes;

		if (req->route_limits[i] <= 0)
			continue;
		db_array_add(&routes, conf_route_at(c, i)->name);
		db_array_addf_int(&limits, req->route_limits[i]);
	}
	p[3] = db_array_get(&routes);
	p[4] = db_array_get(&limits);
	r = db_exec(conn, sql, 5, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "claim") != 0 || PQnfields(r) != COL__COUNT)
		goto out;
	got = PQntuples(r);
	for (int i = 0; i < got; i++)
		take_row(r, i, c, lease_until_ms, out, res);
	rc = 0;
	if (res->claimed > 0)
		FAILPOINT("worker-after-claim");
out:
	PQclear(r);
	db_array_release(&routes);
	db_array_release(&limits);
	return rc;
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
	if (db_sorted_ids(r, "renew leases", &got, &n_got) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (db_ids_have(got, n_got, jobs[i]->action_id))
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
