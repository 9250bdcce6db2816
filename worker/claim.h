/* SPDX-License-Identifier: ISC */
/*
 * claim.h - take due actions under a lease
 */
#ifndef HOOKINBOX_CLAIM_H
#define HOOKINBOX_CLAIM_H

#include <stddef.h>

#include <libpq-fe.h>

#include "conf.h"
#include "gate.h"
#include "job.h"
#include "jobq.h"
#include "metrics.h"

typedef struct claim_counts {
	long claimed;
	long stale;  /* order = newest: marked stale on the way */
	long parked; /* attempts or retry window used up without a recorded outcome */
	long review; /* order = newest or sequence could not place it: held for review */
} claim_counts;

/*
 * Claim up to limit due actions with hookinbox.claim_actions() (one
 * statement, committed when this returns: no transaction is held while the
 * calls run), at most route_limits[i] of route conf_route_at(c, i), the
 * routes taken in turn from index first; routes with a limit of 0, and the
 * routes c does not configure, are left alone.  route_got[i] says how many
 * rows of route i the claim took (stale and parked ones included).  On success returns 0 and
 * appends the new jobs to out, which owns them.  *counts says what the claim did, and m (may be
 * NULL) counts the stale and parked actions per route; each action held for review is logged
 * (event=review).  Returns -1 on error (logged).
 */
int claim_run(PGconn *conn, const conf *c, int limit, const int *route_limits, int *route_got,
	      size_t first, jobq *out, claim_counts *counts, metrics *m)
	__attribute__((warn_unused_result));

/*
 * Tell every worker what this one learned about a route (a hold, the
 * breaker opened or closed: hookinbox.route_report()), and log it.
 * Returns 0, or -1 on error (logged).
 */
int claim_route_report(PGconn *conn, const gate_report *rep) __attribute__((warn_unused_result));

/*
 * Renew the leases of jobs[0..n-1] (hookinbox.renew_leases(), guarded by
 * each job's token) for lease_s seconds from now.  A renewed job gets its
 * new lease_until_ms; a job whose lease is gone, or (order = object) ran
 * out, gets outcome JOB_LOST and must not be called.  Returns 0, or -1 on
 * a database error (logged; the jobs are left as they were).
 */
int claim_renew(PGconn *conn, job **jobs, size_t n, int lease_s)
	__attribute__((warn_unused_result));

/*
 * Hand jobs[0..n-1] back uncalled (hookinbox.release_actions(), guarded by
 * their tokens): due now, the attempt given back.  The caller still frees
 * the jobs.  Returns 0, or -1 on a database error (logged; their leases
 * then expire on their own).
 */
int claim_release(PGconn *conn, job **jobs, size_t n) __attribute__((warn_unused_result));

/*
 * Log one line per route that has due actions but is not configured in c
 * (this worker leaves them alone).  Returns 0, or -1 on error (logged).
 */
int claim_unserved(PGconn *conn, const conf *c) __attribute__((warn_unused_result));

/*
 * Remember this configuration's routes under their fingerprint
 * (hookinbox.routes_check()), copied to fp (fp_cap bytes; left as it was on
 * error), and log one line per other fingerprint seen in the last 24 hours.
 * Returns 0, or -1 on error (logged).
 */
int claim_routes_check(PGconn *conn, const conf *c, char *fp, size_t fp_cap)
	__attribute__((warn_unused_result));

#endif
