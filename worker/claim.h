/* SPDX-License-Identifier: ISC */
/*
 * claim.h - take due actions under a lease
 */
#ifndef HOOKINBOX_CLAIM_H
#define HOOKINBOX_CLAIM_H

#include <stddef.h>

#include <libpq-fe.h>

#include "conf.h"
#include "job.h"
#include "jobq.h"

/* what the next claim asks for */
typedef struct claim_request {
	const conf *c;		 /* the routes, the lease and the retry window */
	int limit;		 /* rows at most */
	const int *route_limits; /* per route of c (conf_route_at): rows at most; 0: none */
	size_t first;		 /* the route taken first, the others in turn after it */
} claim_request;

/* what a claim did; the per-route arrays follow c's routes */
typedef struct claim_result {
	long claimed;
	long stale;  /* order = newest: marked stale on the way */
	long parked; /* attempts or retry window used up without a recorded outcome */
	long review; /* order = newest or sequence could not place it: held for review */
	size_t n_routes;
	int *route_got;	   /* rows taken of route i, stale and parked included */
	int *route_stale;  /* of which marked stale */
	int *route_parked; /* of which parked */
} claim_result;

/* a result for n_routes routes, all counts 0; the caller releases it */
void claim_result_init(claim_result *res, size_t n_routes);
void claim_result_release(claim_result *res);

/*
 * Claim up to req->limit due actions with hookinbox.claim_actions() (one
 * statement, committed when this returns: no transaction is held while the
 * calls run), at most req->route_limits[i] of route conf_route_at(c, i), the
 * routes taken in turn from index req->first; routes with a limit of 0, and
 * the routes c does not configure, are left alone.  res (made by
 * claim_result_init for c's routes) says what the claim did, by route: the
 * caller counts it.  Each action held for review is logged (event=review).
 * On success returns 0 and appends the new jobs to out, which owns them.
 * Returns -1 on error (logged).
 */
int claim_run(PGconn *conn, const claim_request *req, jobq *out, claim_result *res)
	__attribute__((warn_unused_result));

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

#endif
