/* SPDX-License-Identifier: ISC */
/*
 * route_report.h - what workers tell each other about their routes
 *
 * Through hookinbox.route_state every worker learns what one of them
 * learned about a route (a hold, the breaker opened or closed); through
 * hookinbox.worker_routes each worker learns whether another runs with
 * other routes; and a worker names the routes with due actions that its
 * configuration lacks.  Statements only: the engine decides when.
 */
#ifndef HOOKINBOX_ROUTE_REPORT_H
#define HOOKINBOX_ROUTE_REPORT_H

#include <stddef.h>

#include <libpq-fe.h>

#include "conf.h"
#include "gate.h"

/*
 * Write every report g has queued (hookinbox.route_report()), and log each
 * one written.  A report that fails is logged and dropped.  Returns 0, or
 * -1 when the connection is lost (the reports not yet taken stay in g).
 */
int route_report_flush(PGconn *conn, gate *g) __attribute__((warn_unused_result));

/*
 * Log one line per route that has due actions but is not configured in c
 * (this worker leaves them alone).  Returns 0, or -1 on error (logged).
 */
int route_report_unserved(PGconn *conn, const conf *c) __attribute__((warn_unused_result));

/*
 * Remember this configuration's routes under their fingerprint
 * (hookinbox.routes_check()), copied to fp (fp_cap bytes; left as it was on
 * error), and log one line per other fingerprint seen in the last 24 hours.
 * Returns 0, or -1 on error (logged).
 */
int route_report_check(PGconn *conn, const conf *c, char *fp, size_t fp_cap)
	__attribute__((warn_unused_result));

#endif
