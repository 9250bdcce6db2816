/* SPDX-License-Identifier: ISC */
/*
 * dbcheck.h - checks of a program's database settings
 *
 * dbcheck_conninfo: can libpq parse the connection string (at start, at
 * --check and at every reload, so that a typo is refused before it reaches
 * a connection attempt).  dbcheck_connect (--check --connect): connect, and
 * check the schema version and the privileges the program needs.  Neither
 * ever echoes the connection string: it may hold a password.
 */
#ifndef HOOKINBOX_DBCHECK_H
#define HOOKINBOX_DBCHECK_H

#include <stdbool.h>
#include <stddef.h>

typedef enum dbcheck_role {
	DBCHECK_INTAKE, /* the responder: EXECUTE on accept_batch() and reject() */
	DBCHECK_WORKER	/* the worker: read and update the inbox, work the actions */
} dbcheck_role;

/* 0 when libpq can parse conninfo (key = value pairs or a URI), else -1 */
int dbcheck_conninfo(const char *conninfo);

/*
 * Connect with conninfo and check that the schema is at least the version
 * this build was made with and that the connected role has what role
 * needs.  0 with a summary in msg, or -1 with what is wrong in msg and
 * *unavailable set when the database could not be reached at all.
 */
int dbcheck_connect(const char *conninfo, dbcheck_role role, const char *progname, char *msg,
		    size_t msglen, bool *unavailable);

#endif
