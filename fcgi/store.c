/*
 * store.c - the responder's one database call: hookinbox.accept()
 */
#include "store.h"

#include "log.h"
#include "xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#define ACCEPT_SQL                                                                  \
	"select id, duplicate from hookinbox.accept($1, $2, $3, $4, $5, $6, $7, $8, " \
	"$9::jsonb, $10, $11)"
#define REJECT_SQL "select hookinbox.reject($1, $2, $3)"

struct store {
	char *conninfo;
	PGconn *conn;
	bool prepared;
};

store *
store_new(const char *conninfo)
{
	store *s = xcalloc(1, sizeof(*s));

	s->conninfo = xstrdup(conninfo);
	return s;
}

void
store_free(store *s)
{
	if (s == NULL)
		return;
	if (s->conn != NULL)
		PQfinish(s->conn);
	free(s->conninfo);
	free(s);
}

static void
drop_connection(store *s)
{
	if (s->conn != NULL)
		PQfinish(s->conn);
	s->conn = NULL;
	s->prepared = false;
}

/* connect and prepare; 0 or -1 (logged) */
static int
ensure_connection(store *s)
{
	static const char *const keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {s->conninfo, "hookinbox.fcgi", NULL};
	PGresult *res;

	if (s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK)
		return 0;
	drop_connection(s);
	/* expand_dbname: conninfo is a full connection string */
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(s->conn) != CONNECTION_OK) {
		char *msg = PQerrorMessage(s->conn);

		msg[strcspn(msg, "\n")] = '\0';
		log_error("could not connect to the database: %s", msg);
		drop_connection(s);
		return -1;
	}
	res = PQprepare(s->conn, "accept", ACCEPT_SQL, 11, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		char *msg = PQresultErrorMessage(res);

		msg[strcspn(msg, "\n")] = '\0';
		log_error("could not prepare hookinbox.accept: %s (is sql/install.sql applied?)", msg);
		PQclear(res);
		drop_connection(s);
		return -1;
	}
	PQclear(res);
	s->prepared = true;
	return 0;
}

/* SQLSTATE classes after which the connection is not worth keeping */
static bool
connection_lost(PGconn *conn, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK || state == NULL)
		return true;
	return strncmp(state, "08", 2) == 0 || strncmp(state, "57", 2) == 0;
}

static int
accept_once(store *s, const store_delivery *d, int64_t *id, bool *duplicate, bool *lost)
{
	char version[24];
	const char *vals[11];
	int lens[11] = {0};
	int fmts[11] = {0};
	PGresult *res;
	int rc = -1;

	*lost = false;
	if (d->version != NULL)
		snprintf(version, sizeof(version), "%" PRId64, *d->version);
	vals[0] = d->endpoint;
	vals[1] = d->provider;
	vals[2] = d->account;
	vals[3] = d->environment;
	vals[4] = d->event_id;
	vals[5] = d->event_type;
	vals[6] = d->object_id;
	vals[7] = d->version ? version : NULL;
	vals[8] = d->headers_json;
	/* the body goes in binary: the exact bytes, no escaping */
	vals[9] = (const char *)d->body;
	lens[9] = (int)d->body_len;
	fmts[9] = 1;
	vals[10] = d->body_dedup ? "t" : "f";

	res = PQexecPrepared(s->conn, "accept", 11, vals, lens, fmts, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQnfields(res) != 2) {
		char *msg = PQresultErrorMessage(res);

		msg[strcspn(msg, "\n")] = '\0';
		*lost = connection_lost(s->conn, res);
		log_error("could not store delivery for endpoint \"%s\": %s", d->endpoint, msg);
		goto out;
	}
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*duplicate = PQgetvalue(res, 0, 1)[0] == 't';
	rc = 0;
out:
	PQclear(res);
	return rc;
}

int
store_accept(store *s, const store_delivery *d, int64_t *id, bool *duplicate)
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

void
store_count_rejection(store *s, const char *endpoint, const char *reason, long n)
{
	char count[24];
	const char *vals[3] = {endpoint, reason, count};
	PGresult *res;

	if (ensure_connection(s) != 0)
		return;
	snprintf(count, sizeof(count), "%ld", n);
	res = PQexecParams(s->conn, REJECT_SQL, 3, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		char *msg = PQresultErrorMessage(res);

		msg[strcspn(msg, "\n")] = '\0';
		log_warn("could not count rejections: %s", msg);
		if (connection_lost(s->conn, res))
			drop_connection(s);
	}
	PQclear(res);
}
