/* SPDX-License-Identifier: ISC */
/*
 * pgvalue.h - numbers in a libpq result, checked
 *
 * libpq hands every value over as text.  Read with strtoll and no end
 * pointer, a NULL, an empty string or another type is a silent 0; these
 * read a value with decimal.h's rules and say so when it is not the
 * number the query promises (the schema is then not the one this program
 * was built for).
 */
#ifndef HOOKINBOX_PGVALUE_H
#define HOOKINBOX_PGVALUE_H

#include <libpq-fe.h>

/*
 * the value at row, col of r, an integer in [min, max]: 0 (*out set), or
 * -1 when it is NULL or not such a number (logged with what, e.g.
 * "renew leases", and the column number)
 */
int pgvalue_int(const PGresult *r, int row, int col, long long min, long long max, long long *out,
		const char *what) __attribute__((warn_unused_result));
/* the same for a finite float8 or numeric value */
int pgvalue_real(const PGresult *r, int row, int col, double *out, const char *what)
	__attribute__((warn_unused_result));

#endif
