/* SPDX-License-Identifier: ISC */
/*
 * db.c - the worker's database connection and small libpq helpers
 */
#include "db.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-events.h>

#include "clock.h"
#include "log.h"
#include "pgvalue.h"
#include "xalloc.h"

/* a backstop: PostgreSQL takes no parameter over 1 GB */
#define DB_ARRAY_MAX ((size_t)1 << 30)

/*
 * The worker's commits need not wait for the WAL flush: every state change
 * it makes (fan-out, claim, outcome) is keyed and replayable, so losing the
 * last few after a database crash only repeats work, and a repeated call
 * carries the same idempotency key.  SQL handlers, whose effects others may
 * read at once, commit synchronously (sqlfn.c).  The intake never does this.
 */
/* what db_check keeps on each connection (libpq instance data) */
typedef struct conn_state {
	db_idle_fn idle;
	void *idle_arg;
	char refusal[600];
	/*
	 * The server answered that this session is of no further use: it is
	 * read-only (25006: a standby, or a primary being demoted) or shutting
	 * down (57P01-57P03).  A new connection (with a multi-host conninfo
	 * and target_session_attrs=read-write, to the new primary) is needed.
	 */
	bool gone;
	int answer_ms; /* a statement's result bound (0: none), see db_connect */
} conn_state;

static int
conn_event(PGEventId id, void *info, void *pass)
{
	(void)pass;
	if (id == PGEVT_CONNDESTROY) {
		const PGEventConnDestroy *d = info;

		free(PQinstanceData(d->conn, conn_event));
	}
	return 1;
}

/*
 * The worker's session: schema-qualified names only, and commits that do
 * not wait for the WAL flush (an outcome lost in a crash is re-sent with
 * its idempotency key); claim_actions() and renew_leases() flush their own
 * commits.  Set with a statement, not the "options" startup parameter,
 * which PgBouncer refuses ("unsupported startup parameter").
 */
static const char session_sql[] = "select pg_catalog.set_config('search_path', '', false),"
				  " pg_catalog.set_config('synchronous_commit', 'off', false)";

/* a failed connection: log it; true when the server answered and refused */
static bool
connect_failed(PGconn *conn, const char *const *keys, const char *const *vals,
	       const char *conninfo_name)
{
	char msg[512];
	/*
	 * libpq keeps no SQLSTATE for a failed connection; PQping does the
	 * classification: OK means the server is up and answered with an
	 * error (authentication, role or database name), REJECT that it is
	 * starting or stopping, NO_RESPONSE that it is not there.
	 */
	bool answered = PQpingParams(keys, vals, 1) == PQPING_OK;

	snprintf(msg, sizeof(msg), "%s", conn ? PQerrorMessage(conn) : "out of memory");
	msg[strcspn(msg, "\n")] = '\0';
	log_error("could not connect to the database: %s%s%s%s", msg,
		  answered ? " (the server refused the worker: check " : "",
		  answered ? conninfo_name : "", answered ? ")" : "");
	return answered;
}

PGconn *
db_connect(const char *conninfo, const char *conninfo_name, db_idle_fn idle, void *idle_arg,
	   int answer_ms, bool *refused)
{
	conn_state *cs;
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {conninfo, "hookinbox-worker", NULL};
	PGconn *conn = PQconnectdbParams(keys, vals, 1);
	PGresult *r;

	if (refused != NULL)
		*refused = false;
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
		/*
		 * A server that answers the ping may just have finished starting
		 * (a restart between the attempt and the ping): only a second
		 * refusal is one.
		 */
		if (PQpingParams(keys, vals, 1) == PQPING_OK) {
			PQfinish(conn);
			conn = PQconnectdbParams(keys, vals, 1);
		}
	}
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
		bool answered = connect_failed(conn, keys, vals, conninfo_name);

		if (refused != NULL)
			*refused = answered;
		PQfinish(conn);
		return NULL;
	}
	r = PQexec(conn, session_sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(r));
		msg[strcspn(msg, "\n")] = '\0';
		log_error("could not set up the database session: %s", msg);
		PQclear(r);
		PQfinish(conn);
		return NULL;
	}
	PQclear(r);
	cs = xcalloc(1, sizeof(*cs));
	cs->idle = idle;
	cs->idle_arg = idle_arg;
	cs->answer_ms = answer_ms;
	if (!PQregisterEventProc(conn, conn_event, "hookinbox-worker", NULL) ||
	    !PQsetInstanceData(conn, conn_event, cs))
		abort(); /* only fails for lack of memory */
	return conn;
}

/* no retry fixes these: see db.h */
static bool
refusal_state(const char *state)
{
	return state != NULL && (strncmp(state, "28", 2) == 0 || strncmp(state, "3D", 2) == 0 ||
				 strncmp(state, "3F", 2) == 0 || strncmp(state, "42", 2) == 0);
}

const char *
db_refusal(const PGconn *conn)
{
	const conn_state *cs = conn ? PQinstanceData(conn, conn_event) : NULL;

	return cs != NULL && cs->refusal[0] != '\0' ? cs->refusal : NULL;
}

int
db_check_schema(PGconn *conn, int version)
{
	static const char sql[] = "select exists (select 1 from hookinbox.schema_migrations"
				  " where version = $1::integer)";
	char vbuf[16];
	const char *p[1] = {vbuf};
	PGresult *r;
	int rc = -1;

	snprintf(vbuf, sizeof(vbuf), "%d", version);
	r = db_exec(conn, sql, 1, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "schema version") != 0 || PQntuples(r) != 1)
		goto out;
	if (strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		conn_state *cs = PQinstanceData(conn, conn_event);

		if (cs != NULL)
			snprintf(cs->refusal, sizeof(cs->refusal),
				 "the database schema lacks migration %d: run sql/install.sql",
				 version);
		goto out;
	}
	rc = 0;
out:
	PQclear(r);
	return rc;
}

int
db_check(const PGconn *conn, const PGresult *res, ExecStatusType want, const char *what)
{
	const char *state;
	char msg[512];

	if (res != NULL && PQresultStatus(res) == want)
		return 0;
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	snprintf(msg, sizeof(msg), "%s", res ? PQresultErrorMessage(res) : PQerrorMessage(conn));
	msg[strcspn(msg, "\n")] = '\0';
	if (msg[0] == '\0')
		snprintf(msg, sizeof(msg), "unexpected result %s",
			 res ? PQresStatus(PQresultStatus(res)) : "(none)");
	if (refusal_state(state)) {
		conn_state *cs = PQinstanceData(conn, conn_event);

		if (cs != NULL) {
			if (cs->refusal[0] == '\0')
				snprintf(cs->refusal, sizeof(cs->refusal), "%s: %s (SQLSTATE %s)",
					 what, msg, state);
			return -1;
		}
	}
	if (state != NULL && (strcmp(state, "25006") == 0 || strncmp(state, "57P", 3) == 0)) {
		conn_state *cs = PQinstanceData(conn, conn_event);

		if (cs != NULL)
			cs->gone = true;
	}
	log_error("%s: %s (SQLSTATE %s)", what, msg, state ? state : "none");
	return -1;
}

/*
 * A statement whose result did not come within the connection's bound: a
 * primary that waits for a synchronous standby it lost never answers a
 * commit, and statement_timeout does not cover the commit's wait.  Ask
 * the server to cancel, give it a moment, and drop whatever it answers:
 * a commit it reports after the cancel may never reach the standby, so
 * the session is of no further use (the caller reconnects, or exits).
 */
static void
give_up(PGconn *conn, conn_state *cs)
{
	char err[256];
	PGcancel *cancel = PQgetCancel(conn);
	int64_t until = clock_mono_us() / 1000 + 2000;
	PGresult *res;

	log_error("the database did not answer within %d ms (a primary waiting for a "
		  "synchronous standby?): the statement is cancelled and the connection given up",
		  cs->answer_ms);
	if (cancel != NULL && !PQcancel(cancel, err, sizeof(err)))
		log_error("could not cancel the statement: %s", err);
	PQfreeCancel(cancel);
	while (PQisBusy(conn) && clock_mono_us() / 1000 < until) {
		cs->idle(cs->idle_arg, PQsocket(conn));
		if (!PQconsumeInput(conn))
			break;
	}
	if (!PQisBusy(conn))
		while ((res = PQgetResult(conn)) != NULL)
			PQclear(res);
	cs->gone = true;
}

PGresult *
db_exec(PGconn *conn, const char *sql, int n, const char *const *vals)
{
	conn_state *cs = PQinstanceData(conn, conn_event);
	PGresult *res, *last = NULL;
	int64_t until;
	int sent;

	if (cs == NULL || cs->idle == NULL)
		return n > 0 ? PQexecParams(conn, sql, n, NULL, vals, NULL, NULL, 0)
			     : PQexec(conn, sql);
	/* blocking mode: the statement is written out before these return */
	sent = n > 0 ? PQsendQueryParams(conn, sql, n, NULL, vals, NULL, NULL, 0)
		     : PQsendQuery(conn, sql);
	if (!sent)
		return NULL;
	until = cs->answer_ms > 0 ? clock_mono_us() / 1000 + cs->answer_ms : 0;
	while (PQisBusy(conn)) {
		if (until != 0 && clock_mono_us() / 1000 >= until) {
			give_up(conn, cs);
			return NULL;
		}
		cs->idle(cs->idle_arg, PQsocket(conn));
		if (!PQconsumeInput(conn))
			break;
	}
	/* as PQexec: keep the last result (an error ends the sequence) */
	while ((res = PQgetResult(conn)) != NULL) {
		PQclear(last);
		last = res;
	}
	return last;
}

int
db_command(PGconn *conn, const char *sql, const char *what)
{
	PGresult *res = db_exec(conn, sql, 0, NULL);
	int rc = db_check(conn, res, PGRES_COMMAND_OK, what);

	PQclear(res);
	return rc;
}

bool
db_lost(const PGconn *conn)
{
	const conn_state *cs = PQinstanceData(conn, conn_event);

	return PQstatus(conn) != CONNECTION_OK || (cs != NULL && cs->gone);
}

static void
arr_put(db_array *a, const char *s, size_t n)
{
	dynbuf_xadd(&a->b, s, n);
}

void
db_array_init(db_array *a)
{
	dynbuf_init(&a->b, DB_ARRAY_MAX);
	arr_put(a, "{", 1);
}

void
db_array_add(db_array *a, const char *value)
{
	if (a->b.len > 1)
		arr_put(a, ",", 1);
	if (value == NULL) {
		arr_put(a, "NULL", 4);
		return;
	}
	arr_put(a, "\"", 1);
	for (const char *p = value; *p; p++) {
		if (*p == '"' || *p == '\\')
			arr_put(a, "\\", 1);
		arr_put(a, p, 1);
	}
	arr_put(a, "\"", 1);
}

void
db_array_addf_int(db_array *a, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	db_array_add(a, num);
}

const char *
db_array_get(db_array *a)
{
	arr_put(a, "}", 1);
	a->b.len--; /* further adds overwrite the closing brace */
	return a->b.buf;
}

void
db_array_release(db_array *a)
{
	dynbuf_release(&a->b);
}

static int
cmp_id(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int
db_sorted_ids(const PGresult *r, const char *what, long long **ids, size_t *n)
{
	size_t rows = (size_t)PQntuples(r);
	long long *v = xcalloc(rows + 1, sizeof(*v));

	*ids = NULL;
	*n = 0;
	for (size_t i = 0; i < rows; i++)
		if (pgvalue_int(r, (int)i, 0, 1, LLONG_MAX, &v[i], what) != 0) {
			free(v);
			return -1;
		}
	qsort(v, rows, sizeof(*v), cmp_id);
	*ids = v;
	*n = rows;
	return 0;
}

bool
db_ids_have(const long long *ids, size_t n, long long id)
{
	return bsearch(&id, ids, n, sizeof(*ids), cmp_id) != NULL;
}
