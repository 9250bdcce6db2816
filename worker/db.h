/* SPDX-License-Identifier: ISC */
/*
 * db.h - the worker's database connection and small libpq helpers
 *
 * The database modules (fanout.c, claim.c, record.c, sqlfn.c, queue.c,
 * route_report.c), the engine's calls (dispatch.c) and the two that connect
 * (loop.c, health.c) include this header.  libpq also reaches the modules
 * whose headers take a PGconn (claim.h, dispatch.h, fanout.h, queue.h,
 * record.h, route_report.h, sqlfn.h), e.g. metrics.c through queue.h; outside the
 * worker only fcgi/store.c and common/dbcheck.c include it.
 */
#ifndef HOOKINBOX_DB_H
#define HOOKINBOX_DB_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "dynbuf.h"

/*
 * While a statement of the sweep (fan-out, claim, record) runs on the
 * server, the worker keeps its calls moving: db_exec sends the statement
 * and, until the result is in, calls the connection's idle function with
 * the connection's socket so that it can wait on both.  The idle function
 * must not use the connection.
 */
typedef void (*db_idle_fn)(void *arg, int pg_socket);

/*
 * Connect with conninfo, which the configuration calls conninfo_name
 * ("[worker] conninfo": what a refusal tells the operator to check)
 * (fallback_application_name hookinbox-worker,
 * search_path empty so that every name must be schema-qualified); idle
 * (may be NULL: wait in libpq) and idle_arg are the connection's idle
 * function, for its whole life.  With an idle function, a statement whose
 * result has not come within answer_ms (0: no bound) is cancelled and the
 * connection marked lost (db_lost): db_exec returns NULL.  Returns NULL after logging why; then
 * *refused (when not NULL) says whether the server answered and refused us
 * (role, password, database name: a configuration error) rather than not
 * answering or not accepting connections yet (try again later).  The
 * caller closes it with PQfinish.
 */
PGconn *db_connect(const char *conninfo, const char *conninfo_name, db_idle_fn idle, void *idle_arg,
		   int answer_ms, bool *refused);

/*
 * Check res: 0 when its status is want, else -1 after logging
 * "what: message" and the SQLSTATE.  Never clears res.
 *
 * An error that no retry can fix (SQLSTATE class 28 authorization, 3D
 * unknown database, 3F unknown schema, 42 access rule: a missing grant, or
 * a table, column or function this program needs and the schema lacks) is
 * not logged but kept on the connection: db_refusal() returns it, and the
 * caller stops with a configuration error.
 */
int db_check(const PGconn *conn, const PGresult *res, ExecStatusType want, const char *what);

/*
 * The first error of the connection that no retry can fix, as
 * "what: message (SQLSTATE x)"; NULL when there was none.  Owned by the
 * connection.
 */
const char *db_refusal(const PGconn *conn);

/*
 * Whether the schema has migration version (0), or -1: a missing migration
 * is kept as the connection's refusal (db_refusal), a database error is
 * logged or kept as db_check does.
 */
int db_check_schema(PGconn *conn, int version) __attribute__((warn_unused_result));

/*
 * Run sql with n text parameters (n may be 0); the last result, which the
 * caller checks with db_check and clears, or NULL when it could not be sent.
 */
PGresult *db_exec(PGconn *conn, const char *sql, int n, const char *const *vals);

/* run a statement without parameters that returns no rows; 0 or -1 (logged) */
int db_command(PGconn *conn, const char *sql, const char *what);

/*
 * true when the connection is gone, or the server said the session is of no
 * further use (read-only, shutting down): the caller connects again or
 * stops and exits 75
 */
bool db_lost(const PGconn *conn);

/*
 * A growing PostgreSQL array literal ("{...}") for one parameter, so that
 * a batch goes to the server in one statement.  Values are quoted; a NULL
 * value is the SQL NULL.
 */
typedef struct db_array {
	dynbuf b;
} db_array;

void db_array_init(db_array *a);
void db_array_add(db_array *a, const char *value);
void db_array_addf_int(db_array *a, long long v);
/* the literal, valid until the next add or db_array_release */
const char *db_array_get(db_array *a);
void db_array_release(db_array *a);

/*
 * The action ids a statement returned (column 0 of r, each 1..LLONG_MAX),
 * sorted for db_ids_have: 0 and *ids (the caller frees) and *n, or -1
 * after logging "what: ..." with *ids NULL.  The claim's renewal and the
 * record ask which of their jobs came back.
 */
int db_sorted_ids(const PGresult *r, const char *what, long long **ids, size_t *n)
	__attribute__((warn_unused_result));
bool db_ids_have(const long long *ids, size_t n, long long id);

#endif
