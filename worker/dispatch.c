/* SPDX-License-Identifier: ISC */
/*
 * dispatch.c - the engine's calls: start, collect, decide, record
 */
#include "dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "clock.h"
#include "db.h"
#include "failpoint.h"
#include "log.h"
#include "outcome.h"
#include "record.h"
#include "sqlfn.h"
#include "tally.h"
#include "xalloc.h"

static int64_t
now_ms(void)
{
	return clock_mono_us() / 1000;
}

void
dispatch_init(dispatch *d)
{
	*d = (dispatch){.conn = NULL};
	jobq_init(&d->claimed);
	jobq_init(&d->finished);
	jobq_init(&d->handback);
}

void
dispatch_release(dispatch *d)
{
	jobq_release(&d->claimed);
	jobq_release(&d->finished);
	jobq_release(&d->handback);
	free(d->done);
	d->done = NULL;
}

void
dispatch_resize(dispatch *d)
{
	d->done = xrealloc(d->done, (size_t)d->concurrency * sizeof(*d->done));
}

/*
 * A reconcile call (GET reconcile_url) ended.  2xx: the downstream has the
 * effect, recorded as done with its reference.  404: it has not: the job
 * goes back to d->claimed to be sent (returns true).  Anything else: try
 * again later (never parked for the reconcile endpoint's own 4xx).
 */
static bool
reconciled(dispatch *d, job *j)
{
	char id[24], status[16];
	bool have = j->status >= 200 && j->status <= 299;

	snprintf(id, sizeof(id), "%lld", (long long)j->action_id);
	snprintf(status, sizeof(status), "%ld", j->status);
	log_kv("reconcile", "route", j->route_name, "action", id, "status", status, "means",
	       have		  ? "done"
	       : j->status == 404 ? "send"
				  : "later",
	       LOG_END);
	if (have) {
		snprintf(j->error, sizeof(j->error), "reconciled: the downstream has it");
		return false;
	}
	if (j->status != 404) {
		char was[JOB_ERROR_MAX];

		/* the marker keeps it unknown for the next claim: asked again, not sent blind */
		snprintf(was, sizeof(was), "%s", j->error);
		if (j->status != 0)
			snprintf(j->error, sizeof(j->error),
				 "reconcile answered http status %ld (outcome unknown)", j->status);
		else if (strstr(was, "outcome unknown") == NULL)
			snprintf(j->error, sizeof(j->error), "reconcile: %.200s (outcome unknown)",
				 was);
		j->status = 0; /* retried as an unknown outcome, never parked */
		return false;
	}
	(void)gate_finished(d->gate, j, now_ms());
	j->called = j->reconciling = j->unknown = false;
	j->status = 0;
	j->error[0] = j->ref[0] = '\0';
	j->retry_after_s = -1;
	jobq_push(&d->claimed, j);
	return true;
}

/* a job whose call is over (or never started): decide, log, queue for recording */
static void
finished(dispatch *d, job *j)
{
	if (j->reconciling && j->called && j->outcome != JOB_LOST && reconciled(d, j))
		return;
	outcome_decide(&d->policy, j, drand48());
	tally_call(d->m, j);
	if (j->called && j->route != NULL && j->route->handler == NULL &&
	    gate_finished(d->gate, j, now_ms()) && j->outcome != JOB_LOST &&
	    strstr(j->error, "outcome unknown") == NULL) {
		/*
		 * A failed probe: the route is held again and the action keeps its
		 * attempt.  Not one whose call may have been applied (a timeout or
		 * reset after sending): that attempt is recorded as any other, so
		 * the next claim reconciles it and replay.sql asks for blind=1.
		 */
		j->called = j->transport_error = j->timed_out = false;
		j->status = 0;
		j->error[0] = '\0';
		j->outcome = JOB_RETRY;
		jobq_push(&d->handback, j);
		return;
	}
	if (j->outcome == JOB_DONE && j->route && j->route->handler) {
		/* already recorded in the handler's transaction */
		d->n->done++;
		metrics_action(d->m, j->route_name, ACT_DONE);
		job_free(j);
		return;
	}
	if (j->outcome == JOB_LOST) {
		d->n->lost++;
		metrics_action(d->m, j->route_name, ACT_LEASE_LOST);
		job_free(j);
		return;
	}
	jobq_push(&d->finished, j);
}

/*
 * Lease a job needs left to start its call: the route's timeout plus a
 * margin to record the outcome (1 s, less when the lease is short).
 */
static int64_t
lease_needed_ms(const dispatch *d, const job *j)
{
	int64_t t = (int64_t)j->route->timeout * 1000;
	int64_t margin = ((int64_t)d->lease_s * 1000 - t) / 2;

	return t + (margin < 1000 ? margin : 1000);
}

/* a job that would call someone (a configured route, a body to send) */
static bool
would_call(const job *j)
{
	return j->route != NULL && j->body != NULL && j->outcome != JOB_LOST;
}

static bool
lease_short(const dispatch *d, const job *j, int64_t now)
{
	return would_call(j) && now + lease_needed_ms(d, j) > j->lease_until_ms;
}

/* stopping, or the call could not end before the deadline: hand it back */
static bool
too_late(const dispatch *d, const job *j, int64_t now)
{
	return would_call(j) &&
	       (d->stopping ||
		(d->deadline_ms != 0 && now + (int64_t)j->route->timeout * 1000 > d->deadline_ms));
}

/* a call whose route is held (429, Retry-After, open breaker): hand it back */
static bool
route_held(const dispatch *d, const job *j, int64_t now)
{
	return would_call(j) && j->route->handler == NULL && gate_held(d->gate, j->route, now);
}

static bool
hand_back(const dispatch *d, const job *j, int64_t now)
{
	return too_late(d, j, now) || route_held(d, j, now) || (would_call(j) && d->reload_pending);
}

/* take the claimed jobs for which pred holds out of d->claimed, in order */
static size_t
take_claimed(dispatch *d, bool (*pred)(const dispatch *, const job *, int64_t), job **out)
{
	int64_t now = now_ms();
	size_t keep = 0, n = 0;

	for (size_t i = 0; i < d->claimed.n; i++) {
		if (pred(d, d->claimed.v[i], now))
			out[n++] = d->claimed.v[i];
		else
			d->claimed.v[keep++] = d->claimed.v[i];
	}
	d->claimed.n = keep;
	return n;
}

/*
 * Renew, in one statement, the leases of the claimed jobs too short for
 * their call; jobs whose lease is gone come back JOB_LOST.  The connection
 * must be free.
 */
static void
renew_leases(dispatch *d)
{
	job **jobs = xcalloc(d->claimed.n + 1, sizeof(*jobs));
	int64_t now = now_ms();
	size_t n = 0;

	/* they stay in d->claimed, in claim order; claim_renew updates them */
	for (size_t i = 0; i < d->claimed.n; i++)
		if (lease_short(d, d->claimed.v[i], now))
			jobs[n++] = d->claimed.v[i];
	if (n > 0 && claim_renew(d->conn, jobs, n, d->lease_s) != 0) {
		if (db_lost(d->conn))
			d->db_failed = true;
	} else {
		for (size_t i = 0; i < n; i++)
			d->n->renewed += jobs[i]->outcome != JOB_LOST;
	}
	free(jobs);
}

/*
 * Hand back, in one statement, the claimed jobs that must not start now
 * (stopping, or past what the deadline allows): due again at once for any
 * worker, the attempt not counted.  The connection must be free.
 */
static void
release_claims(dispatch *d)
{
	job **jobs = xcalloc(d->claimed.n + d->handback.n + 1, sizeof(*jobs));
	size_t n = take_claimed(d, hand_back, jobs);

	for (size_t i = 0; i < d->handback.n; i++)
		jobs[n++] = d->handback.v[i];
	d->handback.n = 0;

	if (n > 0 && claim_release(d->conn, jobs, n) != 0 && db_lost(d->conn))
		d->db_failed = true;
	d->n->released += (long)n;
	for (size_t i = 0; i < n; i++)
		job_free(jobs[i]);
	free(jobs);
}

/*
 * Start claimed jobs while a call slot is free, or carry them out at once
 * (SQL handlers, jobs that cannot be sent); the rest wait in d->claimed
 * for the next slot.  Claiming ahead like this keeps every slot busy while
 * the worker is inside a database round trip.  A call starts only under a
 * lease that outlives its timeout: a job whose lease is too short waits
 * until the connection is free to renew it (guarded by its token), and is
 * dropped uncalled when the lease is gone.  Stopping, or near the
 * deadline, what has not started is handed back.
 */
static void
start_claimed(dispatch *d, bool may_use_db)
{
	size_t keep = 0;
	bool renew = false, release = false;
	bool db_free = may_use_db && !d->in_db;

	for (size_t i = 0; i < d->claimed.n; i++) {
		job *j = d->claimed.v[i];
		bool call = j->route != NULL && j->route->handler == NULL && j->body != NULL;
		int64_t t0 = clock_mono_us();

		if (d->db_failed) {
			/* the connection is gone: it waits for its lease to expire */
			job_free(j);
			continue;
		}
		if (j->outcome == JOB_LOST) {
			snprintf(j->error, sizeof(j->error), "lease ran out before the call");
			finished(d, j);
			continue;
		}
		if (hand_back(d, j, t0 / 1000)) {
			release = release || db_free;
			d->claimed.v[keep++] = j;
			continue;
		}
		/* no free slot, or none for its route; or a handler while the connection is busy */
		if ((call && (deliver_inflight(d->dl) >= (size_t)d->concurrency ||
			      !gate_may_start(d->gate, j->route, t0 / 1000))) ||
		    (!call && d->in_db)) {
			d->claimed.v[keep++] = j;
			continue;
		}
		if (lease_short(d, j, t0 / 1000)) {
			renew = renew || db_free;
			d->claimed.v[keep++] = j;
			continue;
		}
		if (j->route == NULL) {
			snprintf(j->error, sizeof(j->error), "route \"%s\" is not configured",
				 j->route_name);
			finished(d, j);
			continue;
		}
		if (j->body == NULL) {
			snprintf(j->error, sizeof(j->error), "payload purged");
			j->outcome = JOB_PARK;
			finished(d, j);
			continue;
		}
		d->n->sent++;
		j->called = true;
		/* an unknown outcome: ask the downstream before sending again */
		j->reconciling = call && j->unknown && j->route->reconcile_url != NULL;
		if (j->route->handler != NULL) {
			if (sqlfn_apply(d->conn, j) != 0)
				d->db_failed = true;
			j->duration_ms = (clock_mono_us() - t0) / 1000;
			finished(d, j);
			continue;
		}
		gate_started(d->gate, j->route, t0 / 1000);
		if (deliver_start(d->dl, j) != 0)
			finished(d, j);
	}
	d->claimed.n = keep;
	release = release || (d->handback.n > 0 && db_free);
	if (release)
		release_claims(d);
	if (renew)
		renew_leases(d);
	if (release || renew)
		start_claimed(d, false);
}

/* collect the calls that have finished and refill their slots */
size_t
dispatch_pump(dispatch *d, int timeout_ms)
{
	size_t got = deliver_poll(d->dl, timeout_ms, d->done, (size_t)d->concurrency);

	d->pumping = true;
	for (size_t i = 0; i < got; i++) {
		if (d->done[i]->status >= 200 && d->done[i]->status <= 299)
			FAILPOINT("worker-after-call");
		finished(d, d->done[i]);
	}
	start_claimed(d, true);
	d->pumping = false;
	return got;
}

void
dispatch_flush(dispatch *d)
{
	/* calls that finish while this records go to a fresh list */
	jobq batch;
	int64_t t0 = clock_mono_us();
	int rc;

	jobq_take(&d->finished, &batch);
	rc = record_run(d->conn, batch.v, batch.n);
	d->n->record_us += clock_mono_us() - t0;

	for (size_t i = 0; i < batch.n; i++) {
		job *j = batch.v[i];

		tally_recorded(d->n, d->m, j, rc == 0);
		job_free(j);
	}
	free(batch.v);
	if (rc != 0 && db_lost(d->conn))
		d->db_failed = true;
}
