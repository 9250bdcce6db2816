/* SPDX-License-Identifier: ISC */
/*
 * health.c - hookinbox-worker --health-check
 */
#include "health.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "db.h"
#include "pgvalue.h"
#include "queue.h"

/* " over N s" part of a health line; appends to buf */
static void
health_append(char *buf, size_t cap, const char *what, double age, const char *label,
	      const char *name, long limit)
{
	size_t len = strlen(buf);

	snprintf(buf + len, cap - len, "%s%s is %.0f s old (%s \"%s\"), over %ld s",
		 len ? "; " : "", what, age, label, name ? name : "?", limit);
}

/*
 * One line on stdout and the exit status: as is, or with --nagios in the
 * plugin convention (status word, performance data, 0 OK or 2 CRITICAL; a
 * database that does not answer is critical for the service too).
 */
static int
health_report(bool nagios, int rc, const char *line, const char *perf)
{
	if (!nagios) {
		printf("%s\n", line);
		return rc;
	}
	printf("HOOKINBOX %s - %s%s%s\n", rc == EX_OK ? "OK" : "CRITICAL", line,
	       perf[0] ? " | " : "", perf);
	return rc == EX_OK ? 0 : 2;
}

/*
 * Deliveries held for an operator (inbox state review: sql/review.sql):
 * how many, and the age in seconds of the oldest (-1: none).  They wait in
 * silence otherwise.  Returns 0 or -1 (logged, or kept as db_check does).
 */
static int
held_deliveries(PGconn *conn, long *n, double *oldest)
{
	static const char sql[] =
		"select count(*), coalesce(extract(epoch from now() - "
		"min(received_at)), -1) from hookinbox.inbox where state = 'review'";
	PGresult *r = db_exec(conn, sql, 0, NULL);
	long long count;
	int rc = -1;

	if (r == NULL || db_check(conn, r, PGRES_TUPLES_OK, "held deliveries") != 0 ||
	    PQntuples(r) != 1)
		goto out;
	if (pgvalue_int(r, 0, 0, 0, LONG_MAX, &count, "held deliveries") != 0 ||
	    pgvalue_real(r, 0, 1, oldest, "held deliveries") != 0)
		goto out;
	*n = (long)count;
	rc = 0;
out:
	PQclear(r);
	return rc;
}

int
health_check(const conf *c, long max_pending, long max_parked, bool nagios)
{
	queue_snapshot q = {.n_ep = 0};
	const char *ev_name, *act_name, *park_name;
	double ev_age, act_age, park_age, held_age = -1;
	long held = 0;
	char bad[768] = "", line[1024], perf[256] = "";
	bool refused_us = false;
	const char *name =
		conf_worker_conninfo_set(c) ? "[worker] conninfo" : "[database] conninfo";
	PGconn *conn = db_connect(conf_conninfo(c), name, NULL, NULL, 0, &refused_us);
	int rc;

	if (conn == NULL) {
		if (refused_us) {
			snprintf(line, sizeof(line),
				 "unavailable: the database refused the connection (check %s)",
				 name);
			return health_report(nagios, EX_CONFIG, line, "");
		}
		return health_report(nagios, EX_TEMPFAIL,
				     "unavailable: could not connect to the database", "");
	}
	if (queue_snapshot_take(conn, &q) != 0) {
		snprintf(line, sizeof(line), "unavailable: could not query the queue%s%s",
			 db_refusal(conn) ? ": " : "", db_refusal(conn) ? db_refusal(conn) : "");
		rc = health_report(nagios, db_refusal(conn) ? EX_CONFIG : EX_TEMPFAIL, line, "");
		goto out;
	}
	if (held_deliveries(conn, &held, &held_age) != 0) {
		snprintf(line, sizeof(line), "unavailable: could not query the held deliveries%s%s",
			 db_refusal(conn) ? ": " : "", db_refusal(conn) ? db_refusal(conn) : "");
		rc = health_report(nagios, db_refusal(conn) ? EX_CONFIG : EX_TEMPFAIL, line, "");
		goto out;
	}
	ev_age = queue_oldest_pending_event(&q, &ev_name);
	act_age = queue_oldest_pending_action(&q, &act_name);
	park_age = queue_oldest_parked_action(&q, &park_name);
	if (ev_age > (double)max_pending)
		health_append(bad, sizeof(bad), "oldest pending event", ev_age, "endpoint", ev_name,
			      max_pending);
	if (act_age > (double)max_pending)
		health_append(bad, sizeof(bad), "oldest pending action", act_age, "route", act_name,
			      max_pending);
	if (park_age > (double)max_parked)
		health_append(bad, sizeof(bad), "oldest parked action", park_age, "route",
			      park_name, max_parked);
	if (held_age > (double)max_parked) {
		size_t len = strlen(bad);

		/* held for review like a parked action waits for an operator: same limit */
		snprintf(
			bad + len, sizeof(bad) - len,
			"%soldest of %ld held deliveries is %.0f s old (sql/review.sql), over %ld s",
			len ? "; " : "", held, held_age, max_parked);
	}
	snprintf(
		perf, sizeof(perf),
		"pending_event_age=%.0fs;;%ld pending_action_age=%.0fs;;%ld parked_action_age=%.0fs;;%ld "
		"held_delivery_age=%.0fs;;%ld",
		ev_age < 0 ? 0 : ev_age, max_pending, act_age < 0 ? 0 : act_age, max_pending,
		park_age < 0 ? 0 : park_age, max_parked, held_age < 0 ? 0 : held_age, max_parked);
	if (bad[0] != '\0') {
		snprintf(line, sizeof(line), "unhealthy: %s", bad);
		rc = health_report(nagios, EX_UNHEALTHY, line, perf);
		goto out;
	}
	snprintf(line, sizeof(line),
		 "ok: oldest pending event %.0f s, oldest pending action %.0f s (limit %ld s), "
		 "%ld held deliveries, oldest parked action %.0f s (limit %ld s)",
		 ev_age < 0 ? 0 : ev_age, act_age < 0 ? 0 : act_age, max_pending, held,
		 park_age < 0 ? 0 : park_age, max_parked);
	rc = health_report(nagios, EX_OK, line, perf);
out:
	queue_snapshot_release(&q);
	PQfinish(conn);
	return rc;
}
