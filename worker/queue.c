/* SPDX-License-Identifier: ISC */
/*
 * queue.c - the queue's health in a few cheap queries
 *
 * Each query names its state as a constant so that the planner can use the
 * partial index for it (inbox_pending, action_due, action_parked).
 */
#include "queue.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "decimal.h"
#include "dynbuf.h"
#include "pgvalue.h"
#include "xalloc.h"

static const char endpoint_sql[] =
	"select endpoint, sum(pending)::bigint, sum(accepted)::bigint, max(oldest)"
	"  from (select endpoint, count(*) as pending, 0 as accepted,"
	"               extract(epoch from now() - min(received_at))::float8 as oldest"
	"          from hookinbox.inbox where state = 'pending' group by endpoint"
	"        union all"
	"        select endpoint, 0, count(*), null"
	"          from hookinbox.inbox where received_at > now() - interval '1 hour'"
	"         group by endpoint) s"
	" group by endpoint order by endpoint";

static const char route_sql[] =
	"select route, sum(pending)::bigint, sum(retrying)::bigint, sum(in_flight)::bigint,"
	"       sum(parked)::bigint, max(oldest_pending), max(oldest_parked), sum(review)::bigint"
	"  from (select route, count(*) as pending,"
	"               count(*) filter (where attempts > 0) as retrying,"
	"               count(*) filter (where lease_until > now()) as in_flight,"
	"               0 as parked,"
	"               extract(epoch from now() - min(created_at))::float8 as oldest_pending,"
	"               null::float8 as oldest_parked, 0 as review"
	"          from hookinbox.action where state = 'pending' group by route"
	"        union all"
	"        select route, 0, 0, 0, count(*), null,"
	"               extract(epoch from now() - min(updated_at))::float8, 0"
	"          from hookinbox.action where state = 'parked' group by route"
	"        union all"
	"        select route, 0, 0, 0, 0, null, null, count(*)"
	"          from hookinbox.action where state = 'review' group by route) s"
	" group by route order by route";

/* one row per (endpoint, reason) and hour: a small table */
static const char rejection_sql[] =
	"select endpoint, reason, sum(count)::bigint from hookinbox.rejection"
	" group by endpoint, reason order by endpoint, reason";

/* older than 0 s, an hour, a day, a week */
const char *const queue_age_labels[QUEUE_AGES] = {"0s", "1h", "1d", "7d"};

static const char held_sql[] =
	"select endpoint, count(*),"
	" count(*) filter (where received_at < now() - interval '1 hour'),"
	" count(*) filter (where received_at < now() - interval '1 day'),"
	" count(*) filter (where received_at < now() - interval '7 days'),"
	" extract(epoch from now() - min(received_at))::float8"
	"  from hookinbox.inbox where state = 'review' group by endpoint order by endpoint";

static const char parked_sql[] =
	"select route, count(*),"
	" count(*) filter (where updated_at < now() - interval '1 hour'),"
	" count(*) filter (where updated_at < now() - interval '1 day'),"
	" count(*) filter (where updated_at < now() - interval '7 days'),"
	" extract(epoch from now() - min(updated_at))::float8"
	"  from hookinbox.action where state = 'parked' group by route order by route";

static const char route_state_sql[] =
	"select route, paused,"
	" greatest(coalesce(extract(epoch from hold_until - now()), 0), 0)::float8,"
	" breaker <> 'closed'"
	"  from hookinbox.route_state order by route";

static const char bounds_sql[] = "select hookinbox.request_duration_bounds()::text";

static const char duration_sql[] =
	"select endpoint, provider, outcome, status, buckets::text, sum_seconds"
	"  from hookinbox.request_duration order by endpoint, provider, outcome, status";

static double
opt_double(const PGresult *r, int row, int col)
{
	double v;

	if (PQgetisnull(r, row, col))
		return -1;
	if (pgvalue_real(r, row, col, &v, "queue") != 0)
		return 0;
	return v < 0 ? 0 : v; /* clock skew between rows' writers */
}

static long
get_long(const PGresult *r, int row, int col)
{
	long long v;

	if (PQgetisnull(r, row, col) ||
	    pgvalue_int(r, row, col, LONG_MIN, LONG_MAX, &v, "queue") != 0)
		return 0;
	return (long)v;
}

/* "{a,b,c}" (an array's text, no quoting: numbers) into its n elements */
static char **
split_array(const char *text, size_t *n)
{
	char *copy = xstrdup(text), *p = copy, *tok, *save = NULL;
	char **out = xmalloc(sizeof(*out)); /* never NULL, even for "{}" */
	size_t alloc = 1;

	*n = 0;
	if (*p == '{')
		p++;
	p[strcspn(p, "}")] = '\0';
	for (tok = strtok_r(p, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		out = xgrow(out, *n + 1, &alloc, sizeof(*out));
		out[(*n)++] = xstrdup(tok);
	}
	free(copy);
	return out;
}

static void
free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* rows of held_sql or parked_sql */
static int
take_aged(PGconn *conn, const char *sql, const char *what, queue_aged **out, size_t *n_out)
{
	PGresult *r = PQexec(conn, sql);
	int n;

	if (db_check(conn, r, PGRES_TUPLES_OK, what) != 0 || PQnfields(r) != 2 + QUEUE_AGES) {
		PQclear(r);
		return -1;
	}
	n = PQntuples(r);
	*out = xcalloc((size_t)n + 1, sizeof(**out));
	for (int i = 0; i < n; i++, (*n_out)++) {
		(*out)[i].name = xstrdup(PQgetvalue(r, i, 0));
		for (int a = 0; a < QUEUE_AGES; a++)
			(*out)[i].older_than[a] = get_long(r, i, 1 + a);
		(*out)[i].oldest_s = opt_double(r, i, 1 + QUEUE_AGES);
	}
	PQclear(r);
	return 0;
}

static int
take_durations(PGconn *conn, queue_snapshot *q)
{
	PGresult *r = PQexec(conn, bounds_sql);
	int n;

	if (db_check(conn, r, PGRES_TUPLES_OK, "queue: duration bounds") != 0 ||
	    PQntuples(r) != 1) {
		PQclear(r);
		return -1;
	}
	q->bounds = split_array(PQgetvalue(r, 0, 0), &q->n_bounds);
	PQclear(r);
	r = PQexec(conn, duration_sql);
	if (db_check(conn, r, PGRES_TUPLES_OK, "queue: durations") != 0 || PQnfields(r) != 6) {
		PQclear(r);
		return -1;
	}
	n = PQntuples(r);
	q->dur = xcalloc((size_t)n + 1, sizeof(*q->dur));
	for (int i = 0; i < n; i++) {
		size_t nb;
		char **b = split_array(PQgetvalue(r, i, 4), &nb);
		queue_duration *d = &q->dur[q->n_dur];

		/* count_requests() keeps every row at the bounds' length */
		if (nb != q->n_bounds + 1) {
			free_strings(b, nb);
			continue;
		}
		d->endpoint = xstrdup(PQgetvalue(r, i, 0));
		d->provider = xstrdup(PQgetvalue(r, i, 1));
		d->outcome = xstrdup(PQgetvalue(r, i, 2));
		d->status = (int)get_long(r, i, 3);
		d->buckets = xcalloc(nb, sizeof(*d->buckets));
		for (size_t k = 0; k < nb; k++)
			if (decimal_parse(b[k], 0, LLONG_MAX, &d->buckets[k]) != 0)
				d->buckets[k] = 0;
		if (pgvalue_real(r, i, 5, &d->sum, "queue: request durations") != 0)
			d->sum = 0;
		free_strings(b, nb);
		q->n_dur++;
	}
	PQclear(r);
	return 0;
}

int
queue_snapshot_take(PGconn *conn, queue_snapshot *q)
{
	PGresult *r;
	int rc = -1, n;

	memset(q, 0, sizeof(*q));
	r = PQexec(conn, endpoint_sql);
	if (db_check(conn, r, PGRES_TUPLES_OK, "queue: endpoints") != 0 || PQnfields(r) != 4)
		goto out;
	n = PQntuples(r);
	q->ep = xcalloc((size_t)n + 1, sizeof(*q->ep));
	for (int i = 0; i < n; i++, q->n_ep++) {
		q->ep[i].name = xstrdup(PQgetvalue(r, i, 0));
		q->ep[i].pending = get_long(r, i, 1);
		q->ep[i].accepted_hour = get_long(r, i, 2);
		q->ep[i].oldest_pending_s = opt_double(r, i, 3);
	}
	PQclear(r);

	r = PQexec(conn, route_sql);
	if (db_check(conn, r, PGRES_TUPLES_OK, "queue: routes") != 0 || PQnfields(r) != 8)
		goto out;
	n = PQntuples(r);
	q->rt = xcalloc((size_t)n + 1, sizeof(*q->rt));
	for (int i = 0; i < n; i++, q->n_rt++) {
		q->rt[i].name = xstrdup(PQgetvalue(r, i, 0));
		q->rt[i].pending = get_long(r, i, 1);
		q->rt[i].retrying = get_long(r, i, 2);
		q->rt[i].in_flight = get_long(r, i, 3);
		q->rt[i].parked = get_long(r, i, 4);
		q->rt[i].oldest_pending_s = opt_double(r, i, 5);
		q->rt[i].oldest_parked_s = opt_double(r, i, 6);
		q->rt[i].review = get_long(r, i, 7);
	}
	PQclear(r);

	r = PQexec(conn, rejection_sql);
	if (db_check(conn, r, PGRES_TUPLES_OK, "queue: rejections") != 0 || PQnfields(r) != 3)
		goto out;
	n = PQntuples(r);
	q->rej = xcalloc((size_t)n + 1, sizeof(*q->rej));
	for (int i = 0; i < n; i++, q->n_rej++) {
		q->rej[i].endpoint = xstrdup(PQgetvalue(r, i, 0));
		q->rej[i].reason = xstrdup(PQgetvalue(r, i, 1));
		q->rej[i].count = get_long(r, i, 2);
	}
	PQclear(r);

	r = PQexec(conn, route_state_sql);
	if (db_check(conn, r, PGRES_TUPLES_OK, "queue: route state") != 0 || PQnfields(r) != 4)
		goto out;
	n = PQntuples(r);
	q->blocked = xcalloc((size_t)n + 1, sizeof(*q->blocked));
	for (int i = 0; i < n; i++, q->n_blocked++) {
		q->blocked[i].name = xstrdup(PQgetvalue(r, i, 0));
		q->blocked[i].paused = PQgetvalue(r, i, 1)[0] == 't';
		q->blocked[i].hold_s = opt_double(r, i, 2);
		q->blocked[i].breaker_open = PQgetvalue(r, i, 3)[0] == 't';
	}
	PQclear(r);
	r = NULL;
	if (take_aged(conn, held_sql, "queue: held", &q->held, &q->n_held) != 0 ||
	    take_aged(conn, parked_sql, "queue: parked", &q->parked, &q->n_parked) != 0 ||
	    take_durations(conn, q) != 0)
		goto out;
	rc = 0;
out:
	PQclear(r);
	return rc;
}

void
queue_snapshot_release(queue_snapshot *q)
{
	for (size_t i = 0; i < q->n_ep; i++)
		free(q->ep[i].name);
	for (size_t i = 0; i < q->n_rt; i++)
		free(q->rt[i].name);
	for (size_t i = 0; i < q->n_rej; i++) {
		free(q->rej[i].endpoint);
		free(q->rej[i].reason);
	}
	for (size_t i = 0; i < q->n_held; i++)
		free(q->held[i].name);
	for (size_t i = 0; i < q->n_parked; i++)
		free(q->parked[i].name);
	for (size_t i = 0; i < q->n_blocked; i++)
		free(q->blocked[i].name);
	for (size_t i = 0; i < q->n_dur; i++) {
		free(q->dur[i].endpoint);
		free(q->dur[i].provider);
		free(q->dur[i].outcome);
		free(q->dur[i].buckets);
	}
	free_strings(q->bounds, q->n_bounds);
	free(q->ep);
	free(q->rt);
	free(q->rej);
	free(q->held);
	free(q->parked);
	free(q->blocked);
	free(q->dur);
	memset(q, 0, sizeof(*q));
}

/* the first of the oldest: *best and *which become age and name when age is larger */
static void
keep_older(double age, const char *name, double *best, const char **which)
{
	if (age > *best) {
		*best = age;
		*which = name;
	}
}

double
queue_oldest_pending_event(const queue_snapshot *q, const char **which)
{
	double best = -1;

	*which = NULL;
	for (size_t i = 0; i < q->n_ep; i++)
		keep_older(q->ep[i].oldest_pending_s, q->ep[i].name, &best, which);
	return best;
}

double
queue_oldest_pending_action(const queue_snapshot *q, const char **which)
{
	double best = -1;

	*which = NULL;
	for (size_t i = 0; i < q->n_rt; i++)
		keep_older(q->rt[i].oldest_pending_s, q->rt[i].name, &best, which);
	return best;
}

double
queue_oldest_parked_action(const queue_snapshot *q, const char **which)
{
	double best = -1;

	*which = NULL;
	for (size_t i = 0; i < q->n_rt; i++)
		keep_older(q->rt[i].oldest_parked_s, q->rt[i].name, &best, which);
	return best;
}
