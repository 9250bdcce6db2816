/* SPDX-License-Identifier: ISC */
/*
 * bf_store.c - the inbox as hookinbox-backfill sees it (libpq)
 */
#include "bf_store.h"

#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgvalue.h"
#include "xalloc.h"

struct bf_store {
	PGconn *conn;
};

/* the first line of libpq's message */
static void
first_line(char *err, size_t errlen, const char *what, const char *msg)
{
	snprintf(err, errlen, "%s: %s", what, msg != NULL ? msg : "unknown error");
	err[strcspn(err, "\n")] = '\0';
}

/* which bf_store_err a failed statement is, by SQLSTATE (never by text) */
static bf_store_err
classify(const PGresult *r, PGconn *conn)
{
	const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK || state == NULL || strncmp(state, "08", 2) == 0 ||
	    strncmp(state, "57P", 3) == 0)
		return BF_STORE_UNAVAILABLE;
	/* 42501 no privilege, 42883 no such function, 3F000 no such schema */
	if (strcmp(state, "42501") == 0 || strcmp(state, "42883") == 0 ||
	    strcmp(state, "3F000") == 0)
		return BF_STORE_REFUSED;
	return BF_STORE_FAILED;
}

bf_store *
bf_store_connect(const char *conninfo, const char *user, char *err, size_t errlen,
		 bf_store_err *why)
{
	const char *keys[] = {"dbname", "fallback_application_name", user ? "user" : NULL, NULL};
	const char *vals[] = {conninfo, "hookinbox-backfill", user, NULL};
	PGconn *conn = PQconnectdbParams(keys, vals, 1);
	bf_store *s;

	if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
		first_line(err, errlen, "could not connect to the database",
			   conn ? PQerrorMessage(conn) : NULL);
		/* a server that answered and refused the role is a configuration error */
		*why = PQpingParams(keys, vals, 1) == PQPING_OK ? BF_STORE_REFUSED
								: BF_STORE_UNAVAILABLE;
		PQfinish(conn);
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->conn = conn;
	return s;
}

void
bf_store_free(bf_store *s)
{
	if (s == NULL)
		return;
	PQfinish(s->conn);
	free(s);
}

int
bf_store_known(bf_store *s, const bf_key *key, const char *const *ids, size_t n, bool *known,
	       char *err, size_t errlen, bf_store_err *why)
{
	size_t len = 1;
	char *list, *p;
	const char *params[5];
	PGresult *r;
	int rc = -1;

	/* the ids are source_id_ok (no newline): one parameter, split in SQL */
	for (size_t i = 0; i < n; i++) {
		len += strlen(ids[i]) + 1;
		known[i] = false;
	}
	list = p = xmalloc(len);
	*p = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(ids[i]);

		if (i > 0)
			*p++ = '\n';
		memcpy(p, ids[i], l + 1);
		p += l;
	}
	params[0] = key->endpoint;
	params[1] = key->provider;
	params[2] = key->account;
	params[3] = key->environment;
	params[4] = list;
	r = PQexecParams(
		s->conn,
		"select hookinbox.backfill_known($1, $2, $3, $4, string_to_array($5, E'\\n'))", 5,
		NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		first_line(err, errlen, "could not look the events up in the inbox",
			   PQresultErrorMessage(r));
		*why = classify(r, s->conn);
		goto out;
	}
	for (int row = 0; row < PQntuples(r); row++) {
		const char *id = PQgetvalue(r, row, 0);

		for (size_t i = 0; i < n; i++)
			if (strcmp(ids[i], id) == 0)
				known[i] = true;
	}
	rc = 0;
out:
	PQclear(r);
	free(list);
	return rc;
}

int
bf_store_put(bf_store *s, const bf_key *key, const bf_row *row, int64_t *id, bool *duplicate,
	     char *err, size_t errlen, bf_store_err *why)
{
	char version[24];
	long long stored;
	const char *params[12] = {key->endpoint,    key->provider, key->account,
				  key->environment, row->event_id, row->event_type,
				  row->object_id,   NULL,	   row->headers_json,
				  row->body,	    row->note,	   key->body_dedup ? "t" : "f"};
	int lengths[12] = {0};
	int formats[12] = {0};
	PGresult *r;
	int rc = -1;

	if (row->has_version) {
		snprintf(version, sizeof(version), "%lld", (long long)row->version);
		params[7] = version;
	}
	/* the body goes as bytes: it is stored exactly as the API returned it */
	lengths[9] = (int)row->body_len;
	formats[9] = 1;
	r = PQexecParams(s->conn,
			 "select id, duplicate from hookinbox.backfill_store($1, $2, $3, $4, $5, "
			 "$6, $7, $8::bigint, $9::jsonb, $10::bytea, $11, $12::boolean)",
			 12, NULL, params, lengths, formats, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		first_line(err, errlen, "could not store the event", PQresultErrorMessage(r));
		*why = classify(r, s->conn);
		goto out;
	}
	if (pgvalue_int(r, 0, 0, 1, INT64_MAX, &stored, "backfill_store") != 0) {
		snprintf(err, errlen, "could not store the event: the database answered no id");
		*why = BF_STORE_REFUSED;
		goto out;
	}
	*id = stored;
	*duplicate = strcmp(PQgetvalue(r, 0, 1), "t") == 0;
	rc = 0;
out:
	PQclear(r);
	return rc;
}
