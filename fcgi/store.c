/* SPDX-License-Identifier: ISC */
/*
 * store.c - the responder's one database call: hookinbox.accept_batch(),
 * or accept_one() in single-row mode
 */
#include "store.h"

#include "clock.h"
#include "failpoint.h"
#include "log.h"
#include "pgarray.h"
#include "pgvalue.h"
#include "xalloc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#define ACCEPT_SQL                                                                                 \
	"select id, duplicate, held from hookinbox.accept_batch($1, $2, $3, $4, $5, $6, $7, $8, "  \
	"$9, $10, $11, $12, $13)"
/*
 * accept_batch() for one delivery, with scalars: the call of single-row
 * mode.  Called in the select list, not FROM, so that its one row is not
 * kept in a tuplestore and the executor does not build its row type from
 * the catalog a second time.  "offset 0" keeps the subquery from being
 * flattened into a call per column (PostgreSQL flattens none whose select
 * list calls a volatile function, but this does not rely on it).
 */
#define ONE_SQL                                                                                     \
	"select (r).id, (r).duplicate, (r).held from (select hookinbox.accept_one($1, $2, $3, $4, " \
	"$5, $6, $7, $8, $9, $10, $11, $12, $13) as r offset 0) s"
#define REJECT_SQL "select hookinbox.reject($1, $2, $3)"
#define REQUESTS_SQL                                                                               \
	"select hookinbox.count_requests($1, $2, $3, $4::integer, $5::bigint[], $6::float8)"
/*
 * The session's own settings, whatever the server, database or role say:
 * with synchronous_commit off anywhere, an acknowledged delivery could be
 * lost in a crash.
 */
#define SESSION_SQL                                                                                \
	"select set_config('synchronous_commit', 'on', false), "                                   \
	"set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false)"
#define ACCEPT_NPARAMS 13
/* a batch's bodies together stay under this (each is at most max_body) */
#define BATCH_BYTES (32 * 1024 * 1024)
/* a new connection's budget while the server is thought frozen (ensure_connection) */
#define PROBE_US (300 * 1000)
/*
 * A counting statement's budget (run_count): the deliveries behind it on
 * the connection wait at most this long for a count that the server does
 * not answer
 */
#define COUNT_US (500 * 1000)

/* one delivery waiting for its batch */
typedef struct pending {
	const store_delivery *d;
	store_outcome out;
	int rc;
	int64_t deadline; /* clock_mono_us() by which it is answered, stored or not */
	/*
	 * Posted once id/duplicate/rc are set, or to make this delivery's
	 * thread the leader (lead set, todo its list)
	 */
	sem_t done;
	bool lead;
	struct pending *todo; /* with lead: the deliveries to commit first, oldest first */
	struct pending *next;
} pending;

struct store {
	char *conninfo;
	char lock_timeout[16], statement_timeout[16]; /* "1000ms" */
	int64_t wait_us;			      /* store_options.wait_ms */
	int64_t late_at; /* when the server last missed a deadline, or 0 (conn_lock) */
	int rotation;	 /* connection attempts that hung, modulo the hosts (connect_start) */
	PGconn *conn;
	pthread_mutex_t conn_lock;	/* one user of conn and param at a time */
	pgarray *param[ACCEPT_NPARAMS]; /* accept_batch()'s arrays, reused */
	bool unnamed;			/* named statements do not last here: parse every call */
	bool no_one;			/* the schema has no accept_one(): accept_batch() alone */

	/* group commit only */
	bool group;
	int max_batch;
	/*
	 * Deliveries waiting for a leader, newest first.  Request threads
	 * push with a compare-and-swap and the leader takes the whole list
	 * with one exchange, so neither ever waits for the other's lock.
	 */
	_Atomic(pending *) incoming;
	atomic_bool leading;	 /* a request thread is committing for the others */
	pending **batch, **live; /* the leader's, max_batch entries each */
};

/* accept_batch()'s parameters, in order */
static const pgarray_type param_type[ACCEPT_NPARAMS] = {
	PGARRAY_TEXT, PGARRAY_TEXT,  PGARRAY_TEXT, PGARRAY_TEXT,  PGARRAY_TEXT,
	PGARRAY_TEXT, PGARRAY_TEXT,  PGARRAY_INT8, PGARRAY_JSONB, PGARRAY_BYTEA,
	PGARRAY_BOOL, PGARRAY_BYTEA, PGARRAY_TEXT,
};

store *
store_new(const store_options *opt)
{
	store *s = xcalloc(1, sizeof(*s));

	s->conninfo = xstrdup(opt->conninfo);
	snprintf(s->lock_timeout, sizeof(s->lock_timeout), "%dms", opt->lock_timeout_ms);
	snprintf(s->statement_timeout, sizeof(s->statement_timeout), "%dms",
		 opt->statement_timeout_ms);
	s->wait_us = (int64_t)opt->wait_ms * 1000;
	pthread_mutex_init(&s->conn_lock, NULL);
	for (int k = 0; k < ACCEPT_NPARAMS; k++)
		s->param[k] = pgarray_new(param_type[k]);
	return s;
}

store *
store_new_group(const store_options *opt, int max_batch)
{
	store *s = store_new(opt);

	s->group = true;
	s->max_batch = max_batch;
	atomic_init(&s->incoming, NULL);
	atomic_init(&s->leading, false);
	s->batch = xmalloc((size_t)max_batch * sizeof(*s->batch));
	s->live = xmalloc((size_t)max_batch * sizeof(*s->live));
	return s;
}

void
store_free(store *s)
{
	if (s == NULL)
		return;
	if (s->conn != NULL)
		PQfinish(s->conn);
	pthread_mutex_destroy(&s->conn_lock);
	for (int k = 0; k < ACCEPT_NPARAMS; k++)
		pgarray_free(s->param[k]);
	free(s->batch);
	free(s->live);
	free(s->conninfo);
	free(s);
}

/* the first line of a libpq message, for one log line */
static const char *
first_line(const char *msg, char *buf, size_t len)
{
	snprintf(buf, len, "%s", msg);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void
drop_connection(store *s)
{
	if (s->conn != NULL)
		PQfinish(s->conn);
	s->conn = NULL;
}

/*
 * A named prepared statement saves PostgreSQL the parse and plan of every
 * call: a fifth of its CPU per delivery in single-row mode (docs/scaling.md;
 * nothing measurable in group commit).  Behind a pooler in transaction
 * mode (PgBouncer before 1.21) a statement prepared on one server
 * connection is missing on the next (26000), or another client prepared it
 * there first (42P05): from then on, this store sends the statement with
 * every call, unnamed, which any pooler passes through.
 */
static bool
named_statement_lost(store *s, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	if (s->unnamed || state == NULL ||
	    (strcmp(state, "26000") != 0 && strcmp(state, "42P05") != 0))
		return false;
	log_info("prepared statements do not last between transactions on this connection "
		 "(a pooler in transaction mode?): sending the statement with each call");
	s->unnamed = true;
	return true;
}

/*
 * Wait until the connection's socket is ready for events or the deadline
 * passes: 1 ready, 0 deadline passed, -1 poll failed.  A frozen server
 * (SIGSTOP, a partition) never answers, and statement_timeout is the
 * server's own: this is the responder's bound.
 */
static int
wait_socket(PGconn *conn, short events, int64_t deadline)
{
	struct pollfd pfd = {.fd = PQsocket(conn), .events = events};

	if (pfd.fd < 0)
		return -1;
	for (;;) {
		int64_t left = deadline - clock_mono_us();
		int n;

		if (left <= 0)
			return 0;
		n = poll(&pfd, 1, (int)((left + 999) / 1000));
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/*
 * The one result of the statement just sent, or NULL when the connection
 * failed (*late false) or the deadline passed (*late true).  The caller
 * drops the connection after NULL: a statement may still be in flight.
 */
static PGresult *
await_result(PGconn *conn, int64_t deadline, bool *late)
{
	PGresult *res = NULL, *r;
	int f;

	*late = false;
	while ((f = PQflush(conn)) == 1) {
		int w = wait_socket(conn, POLLIN | POLLOUT, deadline);

		if (w <= 0) {
			*late = w == 0;
			return NULL;
		}
		if (!PQconsumeInput(conn))
			return NULL;
	}
	if (f < 0)
		return NULL;
	for (;;) {
		while (PQisBusy(conn)) {
			int w = wait_socket(conn, POLLIN, deadline);

			if (w <= 0 || !PQconsumeInput(conn)) {
				*late = w == 0;
				PQclear(res);
				return NULL;
			}
		}
		r = PQgetResult(conn);
		if (r == NULL)
			break;
		if (res == NULL)
			res = r;
		else
			PQclear(r);
	}
	return res;
}

/* the error of a failed call: the result's, else the connection's */
static const char *
call_error(PGconn *conn, const PGresult *res, bool late, char *buf, size_t len)
{
	if (late)
		return "no answer before the deadline";
	return first_line(res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(conn), buf, len);
}

/* the number of items of a comma-separated list */
static int
list_items(const char *list)
{
	int n = 1;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n;
}

/* list (n items) rotated left by k, xmalloc'd */
static char *
list_rotated(const char *list, int n, int k)
{
	const char *cut = list;
	char *out;

	for (int i = 0; i < k % n; i++)
		cut = strchr(cut, ',') + 1;
	if (cut == list)
		return xstrdup(list);
	out = xasprintf("%s,%.*s", cut, (int)(cut - list - 1), list);
	return out;
}

/*
 * Start connecting.  With several hosts, libpq tries them in turn and
 * moves on when one refuses; one that never answers holds the attempt to
 * the deadline, as libpq's connect_timeout is not applied to a connection
 * polled by its caller.  So after such an attempt (s->rotation counts
 * them) the host list is rotated: the next attempt starts with the next host.
 */
static PGconn *
connect_start(store *s, int *nhosts)
{
	PQconninfoOption *opts = PQconninfoParse(s->conninfo, NULL);
	const char **keys, **vals;
	char *rotated[3] = {NULL, NULL, NULL};
	int n = 0, k = 0, hosts = 1;
	PGconn *conn;

	*nhosts = 1;
	if (opts == NULL) {
		/* not parseable: libpq says why when connecting */
		static const char *const dk[] = {"dbname", "fallback_application_name", NULL};
		const char *dv[] = {s->conninfo, "hookinbox.fcgi", NULL};

		return PQconnectStartParams(dk, dv, 1);
	}
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		n++;
	keys = xcalloc((size_t)n + 2, sizeof(*keys));
	vals = xcalloc((size_t)n + 2, sizeof(*vals));
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (o->val != NULL &&
		    (strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0))
			hosts = list_items(o->val) > hosts ? list_items(o->val) : hosts;
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++) {
		const char *v = o->val;

		if (v == NULL)
			continue;
		if (hosts > 1 && s->rotation % hosts != 0 && list_items(v) == hosts &&
		    (strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0 ||
		     strcmp(o->keyword, "port") == 0)) {
			char **slot = &rotated[o->keyword[0] == 'p' ? 2 : o->keyword[4] == 'a'];

			*slot = list_rotated(v, hosts, s->rotation % hosts);
			v = *slot;
		}
		keys[k] = o->keyword;
		vals[k++] = v;
	}
	keys[k] = "fallback_application_name";
	vals[k++] = "hookinbox.fcgi";
	conn = PQconnectStartParams(keys, vals, 0);
	for (int i = 0; i < 3; i++)
		free(rotated[i]);
	free(keys);
	free(vals);
	PQconninfoFree(opts);
	*nhosts = hosts;
	return conn;
}

/*
 * Connect without blocking, by the deadline: a server that accepts the
 * connection and then says nothing (frozen) would hold PQconnectdb
 * forever.
 */
static int
connect_by(store *s, int64_t deadline, bool *late)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	char msg[256];
	int hosts;

	*late = false;
	s->conn = connect_start(s, &hosts);
	if (s->conn == NULL)
		abort(); /* out of memory */
	while (PQstatus(s->conn) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	       st != PGRES_POLLING_FAILED) {
		int w = wait_socket(s->conn, st == PGRES_POLLING_READING ? POLLIN : POLLOUT,
				    deadline);

		if (w <= 0) {
			*late = w == 0;
			break;
		}
		st = PQconnectPoll(s->conn);
	}
	if (PQstatus(s->conn) == CONNECTION_OK && PQsetnonblocking(s->conn, 1) == 0)
		return 0;
	log_error("could not connect to the database: %s%s",
		  *late ? "no answer before the deadline"
			: first_line(PQerrorMessage(s->conn), msg, sizeof(msg)),
		  *late && hosts > 1 ? " (the next attempt starts with the next host)" : "");
	if (*late && hosts > 1)
		s->rotation = (s->rotation + 1) % hosts;
	drop_connection(s);
	return -1;
}

/*
 * Prepare sql as name (unnamed once named statements are lost); the result
 * of the prepare, NULL as await_result
 */
static PGresult *
prepare(store *s, const char *name, const char *sql, int64_t deadline, bool *late)
{
	PGresult *res = PQsendPrepare(s->conn, s->unnamed ? "" : name, sql, ACCEPT_NPARAMS, NULL)
				? await_result(s->conn, deadline, late)
				: NULL;

	if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK &&
	    named_statement_lost(s, res)) {
		PQclear(res);
		res = PQsendPrepare(s->conn, "", sql, ACCEPT_NPARAMS, NULL)
			      ? await_result(s->conn, deadline, late)
			      : NULL;
	}
	return res;
}

/*
 * accept_one(), prepared after accept_batch() in single-row mode (unnamed:
 * only checked).  A schema older than the responder has none: then each
 * delivery goes through accept_batch(), which answers the same.  0 or -1
 * (logged).
 */
static int
prepare_one(store *s, int64_t deadline, bool *late)
{
	char msg[256];
	const char *state;
	PGresult *res = prepare(s, "accept_one", ONE_SQL, deadline, late);

	if (PQresultStatus(res) == PGRES_COMMAND_OK) {
		s->no_one = false;
		PQclear(res);
		return 0;
	}
	state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state != NULL && strcmp(state, "42883") == 0) {
		if (!s->no_one)
			log_info(
				"the schema has no hookinbox.accept_one(): single-row deliveries go "
				"through accept_batch() (apply sql/install.sql)");
		s->no_one = true;
		PQclear(res);
		return 0;
	}
	log_error("could not prepare hookinbox.accept_one: %s",
		  call_error(s->conn, res, *late, msg, sizeof(msg)));
	PQclear(res);
	drop_connection(s);
	return -1;
}

/* connect and prepare by the deadline; 0 or -1 (logged) */
static int
connect_session(store *s, int64_t deadline, bool *late)
{
	char msg[256];
	PGresult *res;

	drop_connection(s);
	if (connect_by(s, deadline, late) != 0)
		return -1;
	{
		const char *set[2] = {s->lock_timeout, s->statement_timeout};

		res = PQsendQueryParams(s->conn, SESSION_SQL, 2, NULL, set, NULL, NULL, 0)
			      ? await_result(s->conn, deadline, late)
			      : NULL;
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			log_error("could not set up the database session: %s",
				  call_error(s->conn, res, *late, msg, sizeof(msg)));
			PQclear(res);
			drop_connection(s);
			return -1;
		}
		PQclear(res);
	}
	/* unnamed too: it checks that the schema has accept_batch() */
	res = prepare(s, "accept", ACCEPT_SQL, deadline, late);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		log_error(
			"could not prepare hookinbox.accept_batch: %s (is sql/install.sql applied?)",
			call_error(s->conn, res, *late, msg, sizeof(msg)));
		PQclear(res);
		drop_connection(s);
		return -1;
	}
	PQclear(res);
	/* group commit never calls it (accept_call) */
	return s->group ? 0 : prepare_one(s, deadline, late);
}

/*
 * A connection, by the deadline; 0 or -1 (logged).  Caller holds conn_lock.
 *
 * Once the server has not answered by a deadline, it is probably still
 * frozen: while that is recent, a new connection gets PROBE_US, not the
 * whole wait, so that the deliveries queued behind the one that timed out
 * (in the web server, with one request thread) are answered 503 at once
 * instead of one full wait each.  The first probe that connects ends it.
 */
static int
ensure_connection(store *s, int64_t deadline, bool *late)
{
	int64_t now;

	*late = false;
	if (s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK)
		return 0;
	now = clock_mono_us();
	if (s->late_at != 0 && now - s->late_at < s->wait_us && deadline - now > PROBE_US)
		deadline = now + PROBE_US;
	if (connect_session(s, deadline, late) == 0) {
		s->late_at = 0;
		return 0;
	}
	if (*late)
		s->late_at = clock_mono_us();
	return -1;
}

/* why a call failed: what to do next depends on it */
typedef enum failure {
	FAIL_ROW,     /* the statement failed (one bad row?): try each delivery alone */
	FAIL_TIMEOUT, /* lock_timeout or statement_timeout: each alone would wait again */
	FAIL_LOST,    /* the connection is gone: re-make it */
	FAIL_LATE     /* no answer by the deadline: the connection is dropped, no retry */
} failure;

static failure
classify(PGconn *conn, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK || state == NULL)
		return FAIL_LOST;
	/* 57014 query_canceled (statement_timeout), 55P03 lock_not_available */
	if (strcmp(state, "57014") == 0 || strcmp(state, "55P03") == 0)
		return FAIL_TIMEOUT;
	/*
	 * 08: connection exception, 57: operator intervention (shutdown),
	 * 25006: the server is read-only (a standby, or a primary being
	 * demoted): a new connection lets a multi-host conninfo with
	 * target_session_attrs=read-write find the primary
	 */
	if (strncmp(state, "08", 2) == 0 || strncmp(state, "57", 2) == 0 ||
	    strcmp(state, "25006") == 0)
		return FAIL_LOST;
	return FAIL_ROW;
}

/* after a failure: is the connection still worth keeping? */
static bool
connection_lost(PGconn *conn, const PGresult *res)
{
	return classify(conn, res) == FAIL_LOST;
}

/*
 * The accept_batch() statement, or accept_one()'s: prepared, unless that
 * stopped working; NULL as await_result
 */
static PGresult *
accept_exec(store *s, bool one, const char *const *vals, const int *lens, const int *fmts,
	    int64_t deadline, bool *late)
{
	*late = false;
	if (!s->unnamed) {
		PGresult *res = PQsendQueryPrepared(s->conn, one ? "accept_one" : "accept",
						    ACCEPT_NPARAMS, vals, lens, fmts, 0)
					? await_result(s->conn, deadline, late)
					: NULL;

		if (res == NULL || PQresultStatus(res) != PGRES_FATAL_ERROR ||
		    !named_statement_lost(s, res))
			return res;
		PQclear(res);
	}
	return PQsendQueryParams(s->conn, one ? ONE_SQL : ACCEPT_SQL, ACCEPT_NPARAMS, NULL, vals,
				 lens, fmts, 0)
		       ? await_result(s->conn, deadline, late)
		       : NULL;
}

/*
 * accept_one()'s parameters for d, pointing into d and version (room for
 * an int8 in decimal): the strings as text, the bytes as binary
 */
static void
one_params(const store_delivery *d, char *version, size_t version_len, const char **vals, int *lens,
	   int *fmts)
{
	vals[0] = d->endpoint;
	vals[1] = d->provider;
	vals[2] = d->account;
	vals[3] = d->environment;
	vals[4] = d->event_id;
	vals[5] = d->event_type;
	vals[6] = d->object_id;
	if (d->version != NULL)
		snprintf(version, version_len, "%lld", (long long)*d->version);
	vals[7] = d->version != NULL ? version : NULL;
	vals[8] = d->headers_json;
	vals[9] = d->body_len > 0 ? (const char *)d->body : ""; /* NULL would be SQL NULL */
	vals[10] = d->body_dedup ? "t" : "f";
	vals[11] = (const char *)d->signed_sha256;
	vals[12] = d->note;
	for (int k = 0; k < ACCEPT_NPARAMS; k++) {
		lens[k] = 0;
		fmts[k] = 0;
	}
	lens[9] = (int)d->body_len; /* at most 64 MiB (conf.c's MAX_BODY_MAX) */
	fmts[9] = 1;
	lens[11] = d->signed_sha256 != NULL ? 32 : 0;
	fmts[11] = 1;
}

/* accept_batch()'s parameters for batch[0..n): s->param's arrays, binary */
static void
batch_params(store *s, pending **batch, int n, const char **vals, int *lens, int *fmts)
{
	for (int k = 0; k < ACCEPT_NPARAMS; k++)
		pgarray_reset(s->param[k]);
	for (int i = 0; i < n; i++) {
		const store_delivery *d = batch[i]->d;

		pgarray_add_str(s->param[0], d->endpoint);
		pgarray_add_str(s->param[1], d->provider);
		pgarray_add_str(s->param[2], d->account);
		pgarray_add_str(s->param[3], d->environment);
		pgarray_add_str(s->param[4], d->event_id);
		pgarray_add_str(s->param[5], d->event_type);
		pgarray_add_str(s->param[6], d->object_id);
		if (d->version != NULL)
			pgarray_add_int8(s->param[7], *d->version);
		else
			pgarray_add_null(s->param[7]);
		pgarray_add_str(s->param[8], d->headers_json);
		pgarray_add(s->param[9], d->body, d->body_len);
		pgarray_add_bool(s->param[10], d->body_dedup);
		if (d->signed_sha256 != NULL)
			pgarray_add(s->param[11], d->signed_sha256, 32);
		else
			pgarray_add_null(s->param[11]);
		pgarray_add_str(s->param[12], d->note);
	}
	for (int k = 0; k < ACCEPT_NPARAMS; k++) {
		vals[k] = pgarray_value(s->param[k], &lens[k]);
		fmts[k] = 1;
	}
}

/*
 * accept_batch() for batch[0..n) as one statement, which is its own
 * transaction: when it returns rows, they are committed.  0 (results set)
 * or -1 (logged; *why says what failed).  Caller holds conn_lock and has
 * a connection.
 */
static int
accept_call(store *s, pending **batch, int n, int64_t deadline, failure *why)
{
	const char *vals[ACCEPT_NPARAMS];
	int lens[ACCEPT_NPARAMS], fmts[ACCEPT_NPARAMS];
	char msg[256], version[24];
	/*
	 * accept_one() in single-row mode only: for group commit's batches
	 * of one it cost 3-5 % of the throughput at 16 connections
	 * (BENCHMARKS.md, 2026-12-07), where it saves a sixth of
	 * PostgreSQL's work per delivery in single-row mode
	 */
	bool one = n == 1 && !s->group && !s->no_one;
	PGresult *res;
	bool late;
	int rc = -1;

	if (one)
		one_params(batch[0]->d, version, sizeof(version), vals, lens, fmts);
	else
		batch_params(s, batch, n, vals, lens, fmts);
	res = accept_exec(s, one, vals, lens, fmts, deadline, &late);
	*why = FAIL_ROW;
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == n && PQnfields(res) == 3) {
		rc = 0;
		for (int i = 0; i < n && rc == 0; i++) {
			long long id = 0;

			rc = pgvalue_int(res, i, 0, 1, LLONG_MAX, &id, "accept_batch");
			batch[i]->out.id = id;
			batch[i]->out.duplicate = PQgetvalue(res, i, 1)[0] == 't';
			batch[i]->out.held = PQgetvalue(res, i, 2)[0] == 't';
		}
	} else {
		*why = late ? FAIL_LATE : classify(s->conn, res);
		if (n == 1)
			log_error("could not store delivery for endpoint \"%s\": %s",
				  batch[0]->d->endpoint,
				  call_error(s->conn, res, late, msg, sizeof(msg)));
		else
			log_error("could not store a batch of %d deliveries: %s", n,
				  call_error(s->conn, res, late, msg, sizeof(msg)));
		/* an answer may still come for the statement in flight: not on this connection */
		if (late) {
			drop_connection(s);
			s->late_at = clock_mono_us();
		}
	}
	PQclear(res);
	return rc;
}

/* accept_call with one reconnect, by the deadline; *why as there.  Caller holds conn_lock. */
static int
accept_locked(store *s, pending **batch, int n, int64_t deadline, failure *why)
{
	bool late;

	*why = FAIL_LOST;
	if (ensure_connection(s, deadline, &late) != 0) {
		*why = late ? FAIL_LATE : FAIL_LOST;
		return -1;
	}
	if (accept_call(s, batch, n, deadline, why) == 0)
		return 0;
	if (*why != FAIL_LOST)
		return -1;
	/*
	 * A connection that died since the last request (server restart) fails
	 * on first use: re-make it and try once more.  accept_batch() is
	 * idempotent on the delivery keys, so a retry after an unknown outcome
	 * is safe.
	 */
	drop_connection(s);
	if (ensure_connection(s, deadline, &late) != 0) {
		*why = late ? FAIL_LATE : FAIL_LOST;
		return -1;
	}
	if (accept_call(s, batch, n, deadline, why) == 0)
		return 0;
	if (*why == FAIL_LOST)
		drop_connection(s);
	return -1;
}

/* conn_lock by the deadline; 0 or -1 */
static int
lock_until(store *s, int64_t deadline)
{
	int64_t left = deadline - clock_mono_us();
	struct timespec ts;

	if (left <= 0)
		return pthread_mutex_trylock(&s->conn_lock) == 0 ? 0 : -1;
	ts = clock_in_us(CLOCK_REALTIME, left);
	return pthread_mutex_timedlock(&s->conn_lock, &ts) == 0 ? 0 : -1;
}

/*
 * conn_lock for a delivery: a request thread waiting behind another whose
 * statement hangs must not wait longer than its own deadline.  0 or -1
 * (logged).
 */
static int
lock_by(store *s, int64_t deadline)
{
	if (lock_until(s, deadline) == 0)
		return 0;
	log_error("could not store delivery: the database connection is busy past the deadline");
	return -1;
}

/* batch: room for n entries; all stays as it is, for the caller's wake-ups */
static void
commit_batch(store *s, pending **all, int n, pending **batch)
{
	int64_t now = clock_mono_us(), deadline = INT64_MAX;
	int live = 0;
	failure why;

	/*
	 * A delivery that waited out its deadline behind a batch that hung is
	 * answered now, not sent: its statement would be late at once and cost
	 * the connection.  The batch is due by its earliest deadline.
	 */
	for (int i = 0; i < n; i++) {
		if (all[i]->deadline <= now)
			continue;
		if (all[i]->deadline < deadline)
			deadline = all[i]->deadline;
		batch[live++] = all[i];
	}
	if (live < n)
		log_error("could not store %d deliveries: their deadline passed while the database "
			  "did not answer",
			  n - live);
	n = live;
	if (n == 0 || lock_by(s, deadline) != 0)
		return;
	if (accept_locked(s, batch, n, deadline, &why) == 0) {
		for (int i = 0; i < n; i++)
			batch[i]->rc = 0;
	} else if (n > 1 && why == FAIL_ROW && s->conn != NULL) {
		/*
		 * The batch failed as a whole while the connection stayed up (one
		 * bad row aborts the statement): each in its own statement, so that
		 * one bad delivery cannot fail the others.  Without a connection
		 * (accept_locked has already tried to make one) all are refused at
		 * once, rather than each waiting for its own connection attempt;
		 * after a lock or statement timeout too, since each would wait
		 * again.
		 */
		for (int i = 0; i < n; i++)
			batch[i]->rc = accept_locked(s, &batch[i], 1, deadline, &why);
	}
	pthread_mutex_unlock(&s->conn_lock);
}

/* the deliveries pushed since the last call, oldest first */
static pending *
take_incoming(store *s)
{
	pending *p = atomic_exchange_explicit(&s->incoming, NULL, memory_order_acquire);
	pending *fifo = NULL;

	while (p != NULL) {
		pending *next = p->next;

		p->next = fifo;
		fifo = p;
		p = next;
	}
	return fifo;
}

static bool
lead_try(store *s)
{
	bool idle = false;

	return atomic_compare_exchange_strong(&s->leading, &idle, true);
}

/*
 * The leader: commits one batch, the oldest max_batch deliveries of todo
 * (NULL: of what has queued up), its own among them or not, then passes
 * the lead to the oldest delivery left or gives it up, and only then
 * wakes the batch: the next statement is not held up by the wake-ups.
 * Giving the lead up races with a push that saw it held: after the
 * release the queue is looked at again (seq_cst, as the push and
 * lead_try), so a delivery is never left without a leader.
 */
static void
lead(store *s, pending *todo)
{
	pending *done, *next, **tail = &done;
	int n = 0;

	FAILPOINT_PAUSE("group-commit-pause");
	if (todo == NULL)
		todo = take_incoming(s);
	for (size_t bytes = 0; todo != NULL && n < s->max_batch; n++) {
		bytes += todo->d->body_len;
		if (n > 0 && bytes > BATCH_BYTES)
			break;
		s->batch[n] = todo;
		*tail = todo;
		tail = &todo->next;
		todo = todo->next;
	}
	*tail = NULL;
	if (n > 0)
		commit_batch(s, s->batch, n, s->live);
	/* the arrays are the next leader's from here on: the batch is the list done */
	next = todo;
	while (next == NULL && (next = take_incoming(s)) == NULL) {
		atomic_store(&s->leading, false);
		if (atomic_load(&s->incoming) == NULL || !lead_try(s))
			break;
	}
	if (next != NULL) {
		next->lead = true;
		next->todo = next;
		sem_post(&next->done);
	}
	/* the post is the last touch of an entry: its owner may return at once */
	while (done != NULL) {
		pending *p = done;

		done = p->next;
		sem_post(&p->done);
	}
}

int
store_accept(store *s, const store_delivery *d, store_outcome *out)
{
	pending p = {.d = d, .rc = -1, .deadline = clock_mono_us() + s->wait_us};
	pending *head;
	int rc;

	if (!s->group) {
		pending *one = &p;
		failure why;

		if (lock_by(s, p.deadline) != 0)
			return -1;
		rc = accept_locked(s, &one, 1, p.deadline, &why);
		pthread_mutex_unlock(&s->conn_lock);
		*out = p.out;
		return rc;
	}
	/*
	 * Leader/follower: the thread that finds no batch in flight commits
	 * what has queued up itself, its own delivery included; the others
	 * sleep until a leader has committed theirs or hands them the lead.
	 * p lives on this stack until its batch has been committed, so the
	 * list never holds a dangling pointer.
	 */
	sem_init(&p.done, 0, 0);
	head = atomic_load_explicit(&s->incoming, memory_order_relaxed);
	do {
		p.next = head;
	} while (!atomic_compare_exchange_weak(&s->incoming, &head, &p));
	if (lead_try(s))
		lead(s, NULL);
	for (;;) {
		while (sem_wait(&p.done) != 0)
			; /* EINTR: a signal handler ran */
		if (!p.lead)
			break;
		p.lead = false;
		lead(s, p.todo);
	}
	sem_destroy(&p.done);
	*out = p.out;
	return p.rc;
}

int
store_accept_many(store *s, const store_delivery *d, size_t n, store_outcome *out)
{
	int64_t deadline = clock_mono_us() + s->wait_us;
	pending *all, **batch;
	failure why;
	int rc = -1;

	if (n == 0 || n > INT32_MAX)
		return -1;
	all = xcalloc(n, sizeof(*all));
	batch = xcalloc(n, sizeof(*batch));
	for (size_t i = 0; i < n; i++) {
		all[i] = (pending){.d = &d[i], .rc = -1, .deadline = deadline};
		batch[i] = &all[i];
	}
	/* one statement whatever happens: a failed batch is not retried row by row */
	if (lock_by(s, deadline) == 0) {
		rc = accept_locked(s, batch, (int)n, deadline, &why);
		pthread_mutex_unlock(&s->conn_lock);
	}
	if (rc == 0)
		for (size_t i = 0; i < n; i++)
			out[i] = all[i].out;
	free(batch);
	free(all);
	return rc;
}

/*
 * One counting statement (its own transaction), under the connection lock.
 *
 * Counts share the connection with the deliveries and can wait; the
 * deliveries cannot.  So a count is not sent while the server is thought
 * frozen (it missed a deadline within the last wait), and one that the
 * server does not answer within COUNT_US is given up with its connection,
 * as a late delivery is: otherwise a count sent as the server stalls would
 * hold the connection, and every delivery queued behind it, for a whole
 * wait.  Making a connection keeps the whole wait: a slow connection set-up
 * is no sign of a frozen server, and a hung one moves on to the next host.
 */
static int
run_count(store *s, const char *sql, int n, const char *const *vals, const char *what)
{
	char msg[256];
	int64_t deadline = clock_mono_us() + s->wait_us, now;
	PGresult *res;
	bool late;
	int rc = -1;

	/* waiting for the lock holds up no delivery: a waiter holds nothing */
	if (lock_until(s, deadline) != 0)
		return -1;
	now = clock_mono_us();
	if (s->late_at != 0 && now - s->late_at < s->wait_us)
		goto out;
	if (ensure_connection(s, deadline, &late) != 0)
		goto out;
	now = clock_mono_us();
	if (deadline - now > COUNT_US)
		deadline = now + COUNT_US;
	res = PQsendQueryParams(s->conn, sql, n, NULL, vals, NULL, NULL, 0)
		      ? await_result(s->conn, deadline, &late)
		      : NULL;
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_warn("could not count %s: %s", what,
			 call_error(s->conn, res, late, msg, sizeof(msg)));
		if (late)
			s->late_at = clock_mono_us();
		if (late || connection_lost(s->conn, res))
			drop_connection(s);
	} else {
		rc = 0;
	}
	PQclear(res);
out:
	pthread_mutex_unlock(&s->conn_lock);
	return rc;
}

int
store_count_rejection(store *s, const char *endpoint, const char *reason, long n)
{
	char count[24];
	const char *vals[3] = {endpoint, reason, count};

	snprintf(count, sizeof(count), "%ld", n);
	return run_count(s, REJECT_SQL, 3, vals, "rejections");
}

int
store_count_requests(store *s, const char *endpoint, const char *provider, const char *outcome,
		     int status, const long *buckets, size_t n_buckets, double sum)
{
	char st[16], total[48], arr[512];
	const char *vals[6] = {endpoint, provider, outcome, st, arr, total};
	size_t used = 0;

	snprintf(st, sizeof(st), "%d", status);
	snprintf(total, sizeof(total), "%.6f", sum);
	for (size_t i = 0; i < n_buckets; i++) {
		int w = snprintf(arr + used, sizeof(arr) - used, "%c%ld", i == 0 ? '{' : ',',
				 buckets[i]);

		if (w < 0 || (size_t)w >= sizeof(arr) - used)
			return -1; /* cannot happen with the bounds' few buckets */
		used += (size_t)w;
	}
	if (used == 0 || sizeof(arr) - used < 2)
		return -1;
	memcpy(arr + used, "}", 2);
	return run_count(s, REQUESTS_SQL, 6, vals, "requests");
}
