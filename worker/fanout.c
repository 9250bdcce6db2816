/* SPDX-License-Identifier: ISC */
/*
 * fanout.c - turn pending inbox rows into actions, one per matching route
 *
 * Routes live in the configuration, so routing happens here; the actions of
 * a whole batch then go to hookinbox.fan_out() as parallel arrays in one
 * statement, which derives each idempotency key and collapses duplicates.
 */
#include "fanout.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "failpoint.h"
#include "pgvalue.h"

bool
fanout_route_matches(const route_conf *r, const char *endpoint, const char *type)
{
	bool ep = false;

	for (size_t i = 0; i < r->n_endpoints && !ep; i++)
		ep = strcmp(r->endpoints[i], endpoint) == 0;
	if (!ep)
		return false;
	for (size_t i = 0; i < r->n_events; i++)
		if (fnmatch(r->events[i], type ? type : "", 0) == 0)
			return true;
	return false;
}

/*
 * Route the rows sel claims (id, endpoint, event type; $1 the batch, and
 * $2 the fingerprint when sel_fp) and pass the actions to ins, in one
 * transaction.
 */
static int
fan(PGconn *conn, const conf *c, const char *sel, bool sel_fp, const char *ins, int batch,
    const char *fp, const char *what, fanout_result *res)
{
	db_array ids, a_inbox, a_route, a_mode, a_ordered, a_seq, a_max;
	PGresult *r = NULL;
	char nbuf[16];
	const char *p[8];
	long long actions;
	int rc = -1, in_tx = 0;

	*res = (fanout_result){0, 0, 0};
	db_array_init(&ids);
	db_array_init(&a_inbox);
	db_array_init(&a_route);
	db_array_init(&a_mode);
	db_array_init(&a_ordered);
	db_array_init(&a_seq);
	db_array_init(&a_max);

	if (db_command(conn, "begin", what) != 0)
		goto out;
	in_tx = 1;
	snprintf(nbuf, sizeof(nbuf), "%d", batch);
	p[0] = nbuf;
	p[1] = fp;
	r = db_exec(conn, sel, sel_fp ? 2 : 1, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, what) != 0 || PQnfields(r) != 3)
		goto out;
	res->rows = PQntuples(r);
	if (res->rows == 0) {
		rc = 0;
		goto out;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		const char *id = PQgetvalue(r, i, 0);
		const char *ep = PQgetvalue(r, i, 1);
		const char *type = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2);
		bool routed = false;

		db_array_add(&ids, id);
		for (size_t k = 0; k < conf_route_count(c); k++) {
			const route_conf *rt = conf_route_at(c, k);

			if (!fanout_route_matches(rt, ep, type))
				continue;
			routed = true;
			db_array_add(&a_inbox, id);
			db_array_add(&a_route, rt->name);
			db_array_add(&a_mode,
				     rt->key == ROUTE_KEY_OBJECT_TYPE ? "object-type" : "event");
			db_array_add(&a_ordered, rt->order == ROUTE_ORDER_OBJECT ? "t" : "f");
			db_array_add(&a_seq, rt->order == ROUTE_ORDER_SEQUENCE ? "t" : "f");
			db_array_addf_int(&a_max, rt->max_attempts);
		}
		if (!routed)
			res->unrouted++;
	}
	PQclear(r);
	p[0] = db_array_get(&ids);
	p[1] = db_array_get(&a_inbox);
	p[2] = db_array_get(&a_route);
	p[3] = db_array_get(&a_mode);
	p[4] = db_array_get(&a_ordered);
	p[5] = db_array_get(&a_seq);
	p[6] = db_array_get(&a_max);
	p[7] = fp;
	r = db_exec(conn, ins, 8, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, what) != 0 || PQntuples(r) != 1)
		goto out;
	if (pgvalue_int(r, 0, 0, 0, LONG_MAX, &actions, what) != 0)
		goto out;
	res->actions = (long)actions;
	rc = 0;
out:
	PQclear(r);
	if (in_tx) {
		if (rc == 0 && db_command(conn, "commit", what) != 0)
			rc = -1;
		else if (rc != 0 && !db_lost(conn))
			(void)db_command(conn, "rollback", what);
	}
	db_array_release(&ids);
	db_array_release(&a_inbox);
	db_array_release(&a_route);
	db_array_release(&a_mode);
	db_array_release(&a_ordered);
	db_array_release(&a_seq);
	db_array_release(&a_max);
	return rc;
}

int
fanout_run(PGconn *conn, const conf *c, int batch, const char *fp, fanout_result *res)
{
	static const char sel[] =
		"select id, endpoint, event_type from hookinbox.inbox"
		" where state = 'pending' order by id limit $1::integer for update skip locked";
	static const char ins[] =
		"select hookinbox.fan_out($1::bigint[], $2::bigint[], $3::text[],"
		" $4::text[], $5::boolean[], $6::boolean[], $7::integer[], $8::text)";
	int rc = fan(conn, c, sel, false, ins, batch, fp, "fan-out", res);

	if (rc == 0 && res->rows > 0)
		FAILPOINT("worker-after-fanout");
	return rc;
}

int
fanout_topup(PGconn *conn, const conf *c, int batch, const char *fp, fanout_result *res)
{
	/* the inbox rows too: a reroute or a purge waits for this transaction */
	static const char sel[] =
		"select i.id, i.endpoint, i.event_type"
		" from hookinbox.route_topup t join hookinbox.inbox i on i.id = t.inbox_id"
		" where not $2::text = any(t.fingerprints)"
		" and i.state in ('dispatched', 'unrouted')"
		" order by t.inbox_id limit $1::integer for update skip locked";
	static const char ins[] =
		"select hookinbox.route_topup($1::bigint[], $2::bigint[],"
		" $3::text[], $4::text[], $5::boolean[], $6::boolean[], $7::integer[],"
		" $8::text)";

	if (fp == NULL) {
		*res = (fanout_result){0, 0, 0};
		return 0;
	}
	return fan(conn, c, sel, true, ins, batch, fp, "fan-out: top-up", res);
}
