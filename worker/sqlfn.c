/* SPDX-License-Identifier: ISC */
/*
 * sqlfn.c - routes with handler = sql:schema.function
 *
 * The function name was checked at load time (lower-case identifiers,
 * conf.c) and is still quoted with PQescapeIdentifier here.
 *
 * A handler that fails is retried like a 5xx, except when it raises an
 * error of SQLSTATE class ZP (SQLFN_PERMANENT_CLASS, e.g. "raise exception
 * 'unknown customer' using errcode = 'ZP001'"): a business error no retry
 * fixes, parked at once.  The class is one no PostgreSQL error uses.  A
 * unique violation (23505) is parked at once too: the row it collides with
 * is committed, so every retry would fail the same way.
 */
#include "sqlfn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "failpoint.h"
#include "xalloc.h"

/*
 * "schema"."function" for handler "schema.function" into *fn and the
 * quoted schema into *schema (both freed by the caller); -1 on error
 */
static int
quoted_function(PGconn *conn, const char *handler, char **fn, char **schema)
{
	const char *dot = strchr(handler, '.');
	char *s, *sq = NULL, *fq = NULL;
	int rc = -1;

	*fn = *schema = NULL;
	if (dot == NULL)
		return -1;
	s = xstrndup(handler, (size_t)(dot - handler));
	sq = PQescapeIdentifier(conn, s, strlen(s));
	fq = PQescapeIdentifier(conn, dot + 1, strlen(dot + 1));
	if (sq != NULL && fq != NULL) {
		*fn = xasprintf("%s.%s", sq, fq);
		*schema = xstrdup(sq);
		rc = 0;
	}
	PQfreemem(sq);
	PQfreemem(fq);
	free(s);
	return rc;
}

static void
set_error(job *j, const PGresult *r, const char *what)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	snprintf(j->error, sizeof(j->error), "%s: SQLSTATE %s: %.160s", what,
		 state ? state : "none", msg ? msg : "no message");
}

/*
 * Run sql, a statement guarded by the lease (p: the action id and token)
 * that returns the action's one row: 0, or -1 with j->error set (tag, and
 * what is logged) or j->outcome JOB_LOST when the lease is no longer ours
 */
static int
leased(PGconn *conn, const char *sql, const char *const p[2], const char *what, const char *tag,
       job *j)
{
	PGresult *r = PQexecParams(conn, sql, 2, NULL, p, NULL, NULL, 0);
	int rc = -1;

	if (db_check(conn, r, PGRES_TUPLES_OK, what) != 0)
		set_error(j, r, tag);
	else if (PQntuples(r) != 1)
		j->outcome = JOB_LOST;
	else
		rc = 0;
	PQclear(r);
	return rc;
}

int
sqlfn_apply(PGconn *conn, job *j)
{
	static const char lock_sql[] = "update hookinbox.action set updated_at = now()"
				       " where id = $1::bigint and lease_token = $2::uuid"
				       " and state = 'pending' returning id";
	static const char done_sql[] =
		"select * from hookinbox.record_actions(array[$1::bigint],"
		" array[$2::uuid], '{done}', '{NULL}', '{NULL}', '{NULL}', '{0}')";
	char idbuf[24], tmo[48];
	const char *p[2] = {idbuf, j->token};
	char *fn = NULL, *schema = NULL, *call = NULL, *path = NULL;
	PGresult *r = NULL;
	int in_tx = 0;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)j->action_id);
	j->outcome = JOB_RETRY;
	if (quoted_function(conn, j->route->handler, &fn, &schema) != 0) {
		snprintf(j->error, sizeof(j->error), "handler: bad function name");
		goto out;
	}
	call = xasprintf("select %s(hookinbox.action_event($1::bigint))", fn);
	/* the handler's local effect is durable before it counts as done */
	if (db_command(conn, "begin; set local synchronous_commit = on", "handler: begin") != 0)
		goto out;
	in_tx = 1;
	snprintf(tmo, sizeof(tmo), "set local statement_timeout = %d", j->route->timeout * 1000);
	if (db_command(conn, tmo, "handler: statement timeout") != 0)
		goto out;
	/* the function's own schema first, as its author most likely expects */
	path = xasprintf("set local search_path = %s, pg_catalog", schema);
	if (db_command(conn, path, "handler: search_path") != 0)
		goto out;
	if (leased(conn, lock_sql, p, "handler: lease", "lease", j) != 0)
		goto out;
	r = PQexecParams(conn, call, 1, NULL, p, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		/* the function's own failure: retried like a 5xx, not logged as ours */
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

		j->permanent = state != NULL && strncmp(state, SQLFN_PERMANENT_CLASS, 2) == 0;
		set_error(j, r, "handler");
		/*
		 * A committed row the function's insert collides with is there on
		 * every retry: the effect most likely exists already (an action
		 * resent, or the function's own key is coarser than the event)
		 */
		if (state != NULL && strcmp(state, SQLFN_UNIQUE_VIOLATION) == 0) {
			const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);

			j->permanent = true;
			snprintf(
				j->error, sizeof(j->error),
				"handler: SQLSTATE 23505: %.100s (a unique violation: the row exists "
				"already, e.g. after resend.sql; parked, as no retry changes that)",
				msg ? msg : "no message");
		}
		goto out;
	}
	PQclear(r);
	r = NULL;
	FAILPOINT("worker-in-handler");
	if (leased(conn, done_sql, p, "handler: record", "record", j) != 0)
		goto out;
	in_tx = 0;
	if (db_command(conn, "commit", "handler: commit") != 0) {
		snprintf(j->error, sizeof(j->error), "handler: commit failed");
		goto out;
	}
	j->outcome = JOB_DONE;
out:
	PQclear(r);
	if (in_tx && !db_lost(conn))
		(void)db_command(conn, "rollback", "handler: rollback");
	free(path);
	free(call);
	free(schema);
	free(fn);
	return db_lost(conn) ? -1 : 0;
}
