/*
 * claim.h - take due actions under a lease
 */
#ifndef HOOKINBOX_CLAIM_H
#define HOOKINBOX_CLAIM_H

#include <stddef.h>

#include <libpq-fe.h>

#include "conf.h"
#include "job.h"
#include "metrics.h"

typedef struct claim_counts {
	long claimed;
	long stale;  /* order = object: marked stale on the way */
	long parked; /* attempts or retry window used up without a recorded outcome */
} claim_counts;

/*
 * Claim up to limit due actions of the routes c configures with
 * hookinbox.claim_actions() (one
 * statement, committed when this returns: no transaction is held while the
 * calls run).  On success returns 0 and appends the new jobs to
 * (*jobs)[*n...], growing the xrealloc'd array; the caller owns them.
 * *counts says what the claim did, and m (may be NULL) counts the stale and
 * parked actions per route.  Returns -1 on error (logged).
 */
int claim_run(PGconn *conn, const conf *c, int limit, job ***jobs, size_t *n, size_t *cap,
	      claim_counts *counts, metrics *m) __attribute__((warn_unused_result));

/*
 * Renew the leases of jobs[0..n-1] (hookinbox.renew_leases(), guarded by
 * each job's token) for lease_s seconds from now.  A renewed job gets its
 * new lease_until_ms; a job whose lease is gone, or (order = object) ran
 * out, gets outcome JOB_LOST and must not be called.  Returns 0, or -1 on
 * a database error (logged; the jobs are left as they were).
 */
int claim_renew(PGconn *conn, job **jobs, size_t n, int lease_s) __attribute__((warn_unused_result));

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

#endif
