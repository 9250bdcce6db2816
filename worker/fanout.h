/* SPDX-License-Identifier: ISC */
/*
 * fanout.h - turn pending inbox rows into actions, one per matching route
 */
#ifndef HOOKINBOX_FANOUT_H
#define HOOKINBOX_FANOUT_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "conf.h"

typedef struct fanout_result {
	long rows;     /* inbox rows taken */
	long unrouted; /* of which matched no route */
	long actions;  /* actions made (duplicates collapsed) */
} fanout_result;

/* whether route r takes an event of type (NULL: untyped) from endpoint */
bool fanout_route_matches(const route_conf *r, const char *endpoint, const char *type);

/*
 * Claim up to batch pending inbox rows (FOR UPDATE SKIP LOCKED), route
 * them, insert their actions and mark them dispatched or unrouted, in one
 * transaction.  fp is this configuration's routes fingerprint
 * (route_report_check(); NULL: unknown): while another configuration runs,
 * the rows are recorded for its top-up.  Returns 0 with *res filled, or -1
 * (logged; rolled back).
 */
int fanout_run(PGconn *conn, const conf *c, int batch, const char *fp, fanout_result *res)
	__attribute__((warn_unused_result));

/*
 * The top-up: up to batch events another configuration fanned out while
 * this one (fingerprint fp) ran too, routed again with this configuration's
 * routes; only the (route, event) actions the event lacks are added.  A
 * NULL fp does nothing.  Returns 0 with *res filled, or -1 (logged).
 */
int fanout_topup(PGconn *conn, const conf *c, int batch, const char *fp, fanout_result *res)
	__attribute__((warn_unused_result));

#endif
