/* SPDX-License-Identifier: ISC */
/*
 * dbcheck.c - checks of a program's database settings
 *
 * The schema version this build needs is the number of migrations under
 * sql/migrations when it was built (HOOKINBOX_SCHEMA_VERSION, from the
 * Makefile): a newer schema is fine (older programs keep working on it), an
 * older one is not.
 */
#include "dbcheck.h"

#include "decimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#ifndef HOOKINBOX_SCHEMA_VERSION
#define HOOKINBOX_SCHEMA_VERSION 1
#endif

/*
 * One row: 'none' when the schema is not installed, 'hidden' when the role
 * may not read its version (hookinbox_intake holds no privilege on any
 * table: the functions it needs are checked instead), else 'readable'.
 */
static const char *const schema_sql =
	"select case when to_regclass('hookinbox.schema_migrations') is null then 'none' "
	"when has_table_privilege('hookinbox.schema_migrations', 'select') then 'readable' "
	"else 'hidden' end";
static const char *const version_sql =
	"select coalesce(max(version), 0) from hookinbox.schema_migrations";

/* one row: does current_user have what the program needs */
static const char *const privilege_sql[] = {
	[DBCHECK_INTAKE] =
		"select coalesce(bool_and(has_function_privilege(p.oid, 'execute')), false) "
		"and count(distinct p.proname) = 2 "
		"from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace "
		"where n.nspname = 'hookinbox' and p.proname in ('accept_batch', 'reject')",
	[DBCHECK_WORKER] =
		"select has_table_privilege('hookinbox.inbox', 'select, update') "
		"and has_table_privilege('hookinbox.action', 'select, insert, update') "
		"and (select coalesce(bool_and(has_function_privilege(p.oid, 'execute')), false) "
		"and count(distinct p.proname) = 3 "
		"from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace "
		"where n.nspname = 'hookinbox' "
		"and p.proname in ('fan_out', 'claim_actions', 'record_actions'))",
};

static const char *const role_needs[] = {
	[DBCHECK_INTAKE] =
		"EXECUTE on hookinbox.accept_batch() and hookinbox.reject() (role hookinbox_intake)",
	[DBCHECK_WORKER] =
		"SELECT and UPDATE on hookinbox.inbox and hookinbox.action and EXECUTE on the "
		"worker's functions (role hookinbox_worker)",
};

int
dbcheck_conninfo(const char *conninfo)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &err);

	PQfreemem(err); /* its text may quote the string, password and all */
	if (opts == NULL)
		return -1;
	PQconninfoFree(opts);
	return 0;
}

/* one value of a one-row, one-column query, or -1 with msg set */
static int
query_value(PGconn *conn, const char *sql, char *out, size_t outlen, bool *is_null, char *msg,
	    size_t msglen)
{
	PGresult *res = PQexecParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
	int rc = -1;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQnfields(res) != 1) {
		snprintf(msg, msglen, "could not query the database: %s", PQerrorMessage(conn));
		goto out;
	}
	*is_null = PQgetisnull(res, 0, 0);
	snprintf(out, outlen, "%s", PQgetvalue(res, 0, 0));
	rc = 0;
out:
	PQclear(res);
	return rc;
}

/* drop the newline libpq ends its messages with */
static void
chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

int
dbcheck_connect(const char *conninfo, dbcheck_role role, const char *progname, char *msg,
		size_t msglen, bool *unavailable)
{
	const char *const keys[] = {"connect_timeout", "dbname", "fallback_application_name", NULL};
	const char *const values[] = {"10", conninfo, progname, NULL};
	PGconn *conn = PQconnectdbParams(keys, values, 1);
	char schema[16], version[32] = "", ok[8], user[128];
	bool is_null;
	int rc = -1;

	*unavailable = false;
	if (PQstatus(conn) != CONNECTION_OK) {
		snprintf(msg, msglen, "could not connect to the database: %s",
			 PQerrorMessage(conn));
		/* a server that answers the ping refused us (role, password,
		 * database name): a configuration error, not one to wait out */
		*unavailable = PQpingParams(keys, values, 1) != PQPING_OK;
		goto out;
	}
	if (query_value(conn, "select current_user", user, sizeof(user), &is_null, msg, msglen) !=
		    0 ||
	    query_value(conn, schema_sql, schema, sizeof(schema), &is_null, msg, msglen) != 0)
		goto out;
	if (strcmp(schema, "none") == 0) {
		snprintf(msg, msglen,
			 "the schema hookinbox is not installed (run sql/install.sql)");
		goto out;
	}
	if (strcmp(schema, "readable") == 0) {
		long long v;

		if (query_value(conn, version_sql, version, sizeof(version), &is_null, msg,
				msglen) != 0)
			goto out;
		if (decimal_parse(version, 0, 1000000, &v) != 0) {
			snprintf(msg, msglen, "the schema version \"%s\" is not a number", version);
			goto out;
		}
		if (v < HOOKINBOX_SCHEMA_VERSION) {
			snprintf(
				msg, msglen,
				"the schema is at version %lld, this program needs %d: upgrade it with "
				"sql/install.sql",
				v, HOOKINBOX_SCHEMA_VERSION);
			goto out;
		}
	}
	if (query_value(conn, privilege_sql[role], ok, sizeof(ok), &is_null, msg, msglen) != 0)
		goto out;
	if (strcmp(ok, "t") != 0) {
		snprintf(msg, msglen,
			 "role \"%s\" lacks %s: is the schema older than this program, or "
			 "the conninfo another program's?",
			 user, role_needs[role]);
		goto out;
	}
	if (version[0] != '\0')
		snprintf(msg, msglen, "connected as \"%s\", schema at version %s", user, version);
	else
		snprintf(msg, msglen, "connected as \"%s\", the functions it needs are there",
			 user);
	rc = 0;
out:
	chomp(msg);
	PQfinish(conn);
	return rc;
}
