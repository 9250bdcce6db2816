/*
 * store.c - the responder's one database call: hookinbox.accept()
 */
#include "store.h"

#include "log.h"
#include "xalloc.h"

#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#define ACCEPT_SQL                                                                  \
	"select id, duplicate from hookinbox.accept($1, $2, $3, $4, $5, $6, $7, $8, " \
	"$9::jsonb, $10, $11)"
#define REJECT_SQL "select hookinbox.reject($1, $2, $3)"
#define ACCEPT_NPARAMS 11

/* one delivery waiting for the committer */
typedef struct pending {
	const store_delivery *d;
	int64_t id;
	bool duplicate;
	int rc;
	sem_t done; /* posted by the committer once id/duplicate/rc are set */
	struct pending *next;
} pending;

struct store {
	char *conninfo;
	PGconn *conn;
	pthread_mutex_t conn_lock; /* one user of conn at a time */

	/* group commit only */
	bool group;
	int max_batch;
	pthread_t committer;
	pthread_mutex_t q_lock;
	pthread_cond_t q_cv; /* work for the committer, or stopping */
	pending *head, *tail;
	bool stopping;
};

static void *committer_main(void *arg);

store *
store_new(const char *conninfo)
{
	store *s = xcalloc(1, sizeof(*s));

	s->conninfo = xstrdup(conninfo);
	pthread_mutex_init(&s->conn_lock, NULL);
	return s;
}

store *
store_new_group(const char *conninfo, int max_batch)
{
	store *s = store_new(conninfo);

	s->group = true;
	s->max_batch = max_batch;
	pthread_mutex_init(&s->q_lock, NULL);
	pthread_cond_init(&s->q_cv, NULL);
	if (pthread_create(&s->committer, NULL, committer_main, s) != 0) {
		log_error("could not start the committer thread");
		abort();
	}
	return s;
}

void
store_free(store *s)
{
	if (s == NULL)
		return;
	if (s->group) {
		pthread_mutex_lock(&s->q_lock);
		s->stopping = true;
		pthread_cond_signal(&s->q_cv);
		pthread_mutex_unlock(&s->q_lock);
		pthread_join(s->committer, NULL);
		pthread_cond_destroy(&s->q_cv);
		pthread_mutex_destroy(&s->q_lock);
	}
	if (s->conn != NULL)
		PQfinish(s->conn);
	pthread_mutex_destroy(&s->conn_lock);
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

/* connect and prepare; 0 or -1 (logged).  Caller holds conn_lock. */
static int
ensure_connection(store *s)
{
	static const char *const keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {s->conninfo, "hookinbox.fcgi", NULL};
	char msg[256];
	PGresult *res;

	if (s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK)
		return 0;
	drop_connection(s);
	/* expand_dbname: conninfo is a full connection string */
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(s->conn) != CONNECTION_OK) {
		log_error("could not connect to the database: %s",
			  first_line(PQerrorMessage(s->conn), msg, sizeof(msg)));
		drop_connection(s);
		return -1;
	}
	res = PQprepare(s->conn, "accept", ACCEPT_SQL, ACCEPT_NPARAMS, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		log_error("could not prepare hookinbox.accept: %s (is sql/install.sql applied?)",
			  first_line(PQresultErrorMessage(res), msg, sizeof(msg)));
		PQclear(res);
		drop_connection(s);
		return -1;
	}
	PQclear(res);
	return 0;
}

/* after a failure: is the connection still worth keeping? */
static bool
connection_lost(PGconn *conn, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK || state == NULL)
		return true;
	/* 08: connection exception, 57: operator intervention (shutdown) */
	return strncmp(state, "08", 2) == 0 || strncmp(state, "57", 2) == 0;
}

/* the parameters of accept() for d; version must outlive the call */
typedef struct accept_params {
	const char *vals[ACCEPT_NPARAMS];
	int lens[ACCEPT_NPARAMS];
	int fmts[ACCEPT_NPARAMS];
	char version[24];
} accept_params;

static void
accept_params_init(accept_params *p, const store_delivery *d)
{
	memset(p, 0, sizeof(*p));
	if (d->version != NULL)
		snprintf(p->version, sizeof(p->version), "%" PRId64, *d->version);
	p->vals[0] = d->endpoint;
	p->vals[1] = d->provider;
	p->vals[2] = d->account;
	p->vals[3] = d->environment;
	p->vals[4] = d->event_id;
	p->vals[5] = d->event_type;
	p->vals[6] = d->object_id;
	p->vals[7] = d->version ? p->version : NULL;
	p->vals[8] = d->headers_json;
	/* the body goes in binary: the exact bytes, no escaping */
	p->vals[9] = (const char *)d->body;
	p->lens[9] = (int)d->body_len;
	p->fmts[9] = 1;
	p->vals[10] = d->body_dedup ? "t" : "f";
}

/* read accept()'s one row; 0 or -1 */
static int
accept_result(const PGresult *res, int64_t *id, bool *duplicate)
{
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQnfields(res) != 2)
		return -1;
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*duplicate = PQgetvalue(res, 0, 1)[0] == 't';
	return 0;
}

/* one delivery in its own (autocommit) transaction.  Caller holds conn_lock. */
static int
accept_once(store *s, const store_delivery *d, int64_t *id, bool *duplicate, bool *lost)
{
	accept_params p;
	PGresult *res;
	char msg[256];
	int rc;

	accept_params_init(&p, d);
	res = PQexecPrepared(s->conn, "accept", ACCEPT_NPARAMS, p.vals, p.lens, p.fmts, 0);
	rc = accept_result(res, id, duplicate);
	*lost = false;
	if (rc != 0) {
		*lost = connection_lost(s->conn, res);
		log_error("could not store delivery for endpoint \"%s\": %s", d->endpoint,
			  first_line(PQresultErrorMessage(res), msg, sizeof(msg)));
	}
	PQclear(res);
	return rc;
}

/* accept with one reconnect.  Caller holds conn_lock. */
static int
accept_locked(store *s, const store_delivery *d, int64_t *id, bool *duplicate)
{
	bool lost;

	if (ensure_connection(s) != 0)
		return -1;
	if (accept_once(s, d, id, duplicate, &lost) == 0)
		return 0;
	if (!lost)
		return -1;
	/*
	 * A connection that died since the last request (server restart) fails
	 * on first use: re-make it and try once more.  accept() is idempotent on
	 * the delivery key, so a retry after an unknown outcome is safe.
	 */
	drop_connection(s);
	if (ensure_connection(s) != 0)
		return -1;
	if (accept_once(s, d, id, duplicate, &lost) == 0)
		return 0;
	if (lost)
		drop_connection(s);
	return -1;
}

/*
 * Send BEGIN, accept() for each delivery and COMMIT as one pipeline.
 * 0 when COMMIT succeeded (results filled in), -1 otherwise (nothing of the
 * batch is committed, or the outcome is unknown: either way no one is told
 * it is stored).  Caller holds conn_lock and has a connection.
 */
static int
commit_pipeline(store *s, pending **batch, int n)
{
	PGconn *conn = s->conn;
	accept_params *params = xmalloc((size_t)n * sizeof(*params));
	bool failed = false;
	char msg[256];
	PGresult *res;
	int rc = -1;

	if (PQenterPipelineMode(conn) != 1)
		goto out;
	PQsendQueryParams(conn, "begin", 0, NULL, NULL, NULL, NULL, 0);
	for (int i = 0; i < n; i++) {
		accept_params_init(&params[i], batch[i]->d);
		PQsendQueryPrepared(conn, "accept", ACCEPT_NPARAMS, params[i].vals, params[i].lens,
				    params[i].fmts, 0);
	}
	PQsendQueryParams(conn, "commit", 0, NULL, NULL, NULL, NULL, 0);
	if (PQpipelineSync(conn) != 1) {
		failed = true;
		goto drain;
	}
	/* n + 2 results, each followed by NULL, then the sync */
	for (int i = -1; i <= n; i++) {
		res = PQgetResult(conn);
		if (res == NULL) {
			failed = true;
			break;
		}
		if (i >= 0 && i < n) {
			if (accept_result(res, &batch[i]->id, &batch[i]->duplicate) != 0)
				failed = true;
		} else if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			failed = true;
		}
		if (PQresultStatus(res) == PGRES_FATAL_ERROR)
			log_error("group commit of %d deliveries failed: %s", n,
				  first_line(PQresultErrorMessage(res), msg, sizeof(msg)));
		PQclear(res);
		res = PQgetResult(conn); /* the NULL after each command */
		PQclear(res);
	}
drain:
	while ((res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		PQclear(res);
		if (st == PGRES_PIPELINE_SYNC)
			break;
	}
	if (PQexitPipelineMode(conn) != 1)
		failed = true;
	if (failed && PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE) {
		res = PQexec(conn, "rollback");
		PQclear(res);
	}
	rc = failed ? -1 : 0;
out:
	free(params);
	return rc;
}

static void
commit_batch(store *s, pending **batch, int n)
{
	pthread_mutex_lock(&s->conn_lock);
	if (n > 1 && ensure_connection(s) == 0 && commit_pipeline(s, batch, n) == 0) {
		for (int i = 0; i < n; i++)
			batch[i]->rc = 0;
	} else {
		/*
		 * One delivery, or the batch failed as a whole (one bad row aborts the
		 * transaction, or the connection broke): each in its own transaction,
		 * so one bad delivery cannot fail the others.
		 */
		if (s->conn != NULL && PQstatus(s->conn) != CONNECTION_OK)
			drop_connection(s);
		for (int i = 0; i < n; i++)
			batch[i]->rc = accept_locked(s, batch[i]->d, &batch[i]->id, &batch[i]->duplicate);
	}
	pthread_mutex_unlock(&s->conn_lock);
}

static void *
committer_main(void *arg)
{
	store *s = arg;
	pending **batch = xmalloc((size_t)s->max_batch * sizeof(*batch));

	pthread_mutex_lock(&s->q_lock);
	for (;;) {
		int n = 0;

		while (s->head == NULL && !s->stopping)
			pthread_cond_wait(&s->q_cv, &s->q_lock);
		if (s->head == NULL)
			break; /* stopping, and nothing left to commit */
		/* whatever queued up while the last batch committed */
		while (s->head != NULL && n < s->max_batch) {
			batch[n++] = s->head;
			s->head = s->head->next;
		}
		if (s->head == NULL)
			s->tail = NULL;
		pthread_mutex_unlock(&s->q_lock);
		commit_batch(s, batch, n);
		/*
		 * Wake exactly the deliveries of this batch, one futex each: a
		 * broadcast would wake every request thread for every batch.  The
		 * post is the last touch of an entry; its owner may return at once.
		 */
		for (int i = 0; i < n; i++)
			sem_post(&batch[i]->done);
		pthread_mutex_lock(&s->q_lock);
	}
	pthread_mutex_unlock(&s->q_lock);
	free(batch);
	return NULL;
}

int
store_accept(store *s, const store_delivery *d, int64_t *id, bool *duplicate)
{
	pending p = {.d = d, .rc = -1};
	int rc;

	if (!s->group) {
		pthread_mutex_lock(&s->conn_lock);
		rc = accept_locked(s, d, id, duplicate);
		pthread_mutex_unlock(&s->conn_lock);
		return rc;
	}
	/*
	 * p lives on this stack until the committer marks it done: we wait for
	 * that below, so the queue never holds a dangling pointer.
	 */
	sem_init(&p.done, 0, 0);
	pthread_mutex_lock(&s->q_lock);
	if (s->tail != NULL)
		s->tail->next = &p;
	else
		s->head = &p; /* cppcheck-suppress autoVariables */
	s->tail = &p;	      /* cppcheck-suppress autoVariables */
	pthread_cond_signal(&s->q_cv);
	pthread_mutex_unlock(&s->q_lock);
	while (sem_wait(&p.done) != 0)
		; /* EINTR: a signal handler ran; the committer still owns p */
	sem_destroy(&p.done);
	*id = p.id;
	*duplicate = p.duplicate;
	return p.rc;
}

void
store_count_rejection(store *s, const char *endpoint, const char *reason, long n)
{
	char count[24], msg[256];
	const char *vals[3] = {endpoint, reason, count};
	PGresult *res;

	pthread_mutex_lock(&s->conn_lock);
	if (ensure_connection(s) != 0)
		goto out;
	snprintf(count, sizeof(count), "%ld", n);
	res = PQexecParams(s->conn, REJECT_SQL, 3, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_warn("could not count rejections: %s",
			 first_line(PQresultErrorMessage(res), msg, sizeof(msg)));
		if (connection_lost(s->conn, res))
			drop_connection(s);
	}
	PQclear(res);
out:
	pthread_mutex_unlock(&s->conn_lock);
}
