/* SPDX-License-Identifier: ISC */
/*
 * pgvalue.c - numbers in a libpq result, checked
 */
#include "pgvalue.h"

#include "decimal.h"
#include "log.h"

static int
bad(const PGresult *r, int row, int col, const char *what)
{
	log_error("%s: column %d of row %d is %s, not the number the query promises", what, col + 1,
		  row + 1, PQgetisnull(r, row, col) ? "NULL" : "something else");
	return -1;
}

int
pgvalue_int(const PGresult *r, int row, int col, long long min, long long max, long long *out,
	    const char *what)
{
	if (PQgetisnull(r, row, col) || decimal_parse(PQgetvalue(r, row, col), min, max, out) != 0)
		return bad(r, row, col, what);
	return 0;
}

int
pgvalue_real(const PGresult *r, int row, int col, double *out, const char *what)
{
	if (PQgetisnull(r, row, col) || decimal_real(PQgetvalue(r, row, col), out) != 0)
		return bad(r, row, col, what);
	return 0;
}
