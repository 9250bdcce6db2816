/*
 * health.c - hookinbox-worker --health-check
 */
#include "health.h"

#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "db.h"
#include "queue.h"

/* " over N s" part of a health line; appends to buf */
static void
health_append(char *buf, size_t cap, const char *what, double age, const char *label,
	      const char *name, long limit)
{
	size_t len = strlen(buf);

	snprintf(buf + len, cap - len, "%s%s is %.0f s old (%s \"%s\"), over %ld s", len ? "; " : "",
		 what, age, label, name ? name : "?", limit);
}

int
health_check(const conf *c, long max_pending, long max_parked)
{
	queue_snapshot q = {.n_ep = 0};
	const char *ev_name, *act_name, *park_name;
	double ev_age, act_age, park_age;
	char bad[768] = "";
	bool refused_us = false;
	PGconn *conn = db_connect(conf_conninfo(c), NULL, NULL, &refused_us);
	int rc;

	if (conn == NULL) {
		printf(refused_us ? "unavailable: the database refused the connection (check [database] conninfo)\n"
			  : "unavailable: could not connect to the database\n");
		return refused_us ? EX_CONFIG : EX_TEMPFAIL;
	}
	if (queue_snapshot_take(conn, &q) != 0) {
		printf("unavailable: could not query the queue%s%s\n", db_refusal(conn) ? ": " : "",
		       db_refusal(conn) ? db_refusal(conn) : "");
		rc = db_refusal(conn) ? EX_CONFIG : EX_TEMPFAIL;
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
		health_append(bad, sizeof(bad), "oldest parked action", park_age, "route", park_name,
			      max_parked);
	if (bad[0] != '\0') {
		printf("unhealthy: %s\n", bad);
		rc = EX_UNHEALTHY;
		goto out;
	}
	printf("ok: oldest pending event %.0f s, oldest pending action %.0f s (limit %ld s), "
	       "oldest parked action %.0f s (limit %ld s)\n",
	       ev_age < 0 ? 0 : ev_age, act_age < 0 ? 0 : act_age, max_pending,
	       park_age < 0 ? 0 : park_age, max_parked);
	rc = EX_OK;
out:
	queue_snapshot_release(&q);
	PQfinish(conn);
	return rc;
}
