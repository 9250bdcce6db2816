/* SPDX-License-Identifier: ISC */
/*
 * queue.c - the queue's health in a few cheap queries
 *
 * Each query names its state as a constant so that the planner can use the
 * partial index for it (inbox_pending, action_due, action_parked).
 */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"
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

static double
opt_double(const PGresult *r, int row, int col)
{
	if (PQgetisnull(r, row, col))
		return -1;
	double v = strtod(PQgetvalue(r, row, col), NULL);

	return v < 0 ? 0 : v; /* clock skew between rows' writers */
}

static long
get_long(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtol(PQgetvalue(r, row, col), NULL, 10);
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
		q->rej[i].count = strtoll(PQgetvalue(r, i, 2), NULL, 10);
	}
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
	free(q->ep);
	free(q->rt);
	free(q->rej);
	memset(q, 0, sizeof(*q));
}

double
queue_oldest_pending_event(const queue_snapshot *q, const char **which)
{
	double best = -1;

	*which = NULL;
	for (size_t i = 0; i < q->n_ep; i++)
		if (q->ep[i].oldest_pending_s > best) {
			best = q->ep[i].oldest_pending_s;
			*which = q->ep[i].name;
		}
	return best;
}

double
queue_oldest_pending_action(const queue_snapshot *q, const char **which)
{
	double best = -1;

	*which = NULL;
	for (size_t i = 0; i < q->n_rt; i++)
		if (q->rt[i].oldest_pending_s > best) {
			best = q->rt[i].oldest_pending_s;
			*which = q->rt[i].name;
		}
	return best;
}

double
queue_oldest_parked_action(const queue_snapshot *q, const char **which)
{
	double best = -1;

	*which = NULL;
	for (size_t i = 0; i < q->n_rt; i++)
		if (q->rt[i].oldest_parked_s > best) {
			best = q->rt[i].oldest_parked_s;
			*which = q->rt[i].name;
		}
	return best;
}
