/*
 * db.c - the worker's database connection and small libpq helpers
 */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xalloc.h"

/*
 * The worker's commits need not wait for the WAL flush: every state change
 * it makes (fan-out, claim, outcome) is keyed and replayable, so losing the
 * last few after a database crash only repeats work, and a repeated call
 * carries the same idempotency key.  SQL handlers, whose effects others may
 * read at once, commit synchronously (sqlfn.c).  The intake never does this.
 */
PGconn *
db_connect(const char *conninfo)
{
	/* options first: an "options" in conninfo wins */
	const char *keys[] = {"options", "dbname", "fallback_application_name", NULL};
	const char *vals[] = {"-c search_path= -c synchronous_commit=off", conninfo, "hookinbox-worker", NULL};
	PGconn *conn = PQconnectdbParams(keys, vals, 1);

	if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", conn ? PQerrorMessage(conn) : "out of memory");
		msg[strcspn(msg, "\n")] = '\0';
		log_error("could not connect to the database: %s", msg);
		PQfinish(conn);
		return NULL;
	}
	return conn;
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
	log_error("%s: %s (SQLSTATE %s)", what, msg, state ? state : "none");
	return -1;
}

static db_idle_fn idle_fn;
static void *idle_arg;

void
db_set_idle(db_idle_fn fn, void *arg)
{
	idle_fn = fn;
	idle_arg = arg;
}

PGresult *
db_exec(PGconn *conn, const char *sql, int n, const char *const *vals)
{
	PGresult *res, *last = NULL;
	int sent;

	if (idle_fn == NULL)
		return n > 0 ? PQexecParams(conn, sql, n, NULL, vals, NULL, NULL, 0) : PQexec(conn, sql);
	/* blocking mode: the statement is written out before these return */
	sent = n > 0 ? PQsendQueryParams(conn, sql, n, NULL, vals, NULL, NULL, 0) : PQsendQuery(conn, sql);
	if (!sent)
		return NULL;
	while (PQisBusy(conn)) {
		idle_fn(idle_arg, PQsocket(conn));
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
	return PQstatus(conn) != CONNECTION_OK;
}

static void
arr_put(db_array *a, const char *s, size_t n)
{
	if (n >= a->cap - a->len) {
		while (n >= a->cap - a->len)
			a->cap *= 2;
		a->buf = xrealloc(a->buf, a->cap);
	}
	memcpy(a->buf + a->len, s, n);
	a->len += n;
	a->buf[a->len] = '\0';
}

void
db_array_init(db_array *a)
{
	a->cap = 256;
	a->buf = xmalloc(a->cap);
	a->buf[0] = '{';
	a->buf[1] = '\0';
	a->len = 1;
}

void
db_array_add(db_array *a, const char *value)
{
	if (a->len > 1)
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
	a->len--; /* further adds overwrite the closing brace */
	return a->buf;
}

void
db_array_release(db_array *a)
{
	free(a->buf);
	a->buf = NULL;
	a->len = a->cap = 0;
}
