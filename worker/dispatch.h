/* SPDX-License-Identifier: ISC */
/*
 * dispatch.h - the engine's calls: start claimed jobs, collect finished
 * calls, decide their outcomes and record them
 *
 * The loop (loop.c) owns one dispatch and fills its "given" part: the
 * connection, the call engine, the gate, the counters and the limits it
 * works under; it claims into d->claimed.  dispatch_pump collects the calls
 * that ended, decides each outcome (outcome.c), starts claimed jobs while a
 * call slot is free, carries out SQL handlers, renews short leases and
 * hands back what must not start now; dispatch_flush records the finished
 * outcomes under their lease tokens.  A statement of its own that fails
 * sets d->db_failed when the connection is lost.
 */
#ifndef HOOKINBOX_DISPATCH_H
#define HOOKINBOX_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "backoff.h"
#include "deliver.h"
#include "gate.h"
#include "jobq.h"
#include "loop.h"
#include "metrics.h"

typedef struct dispatch {
	/* given by the loop (borrowed) */
	PGconn *conn;	  /* the database connection; NULL while reconnecting */
	deliver *dl;	  /* the call engine */
	gate *gate;	  /* the route limits */
	metrics *m;	  /* per-route metrics */
	loop_counters *n; /* the run's counters */
	backoff_policy policy;
	int concurrency;     /* calls in flight at most */
	int lease_s;	     /* [worker] lease */
	int64_t deadline_ms; /* clock_mono ms; 0 = none */
	bool stopping;	     /* claim nothing more, hand back what has not started */
	/* SIGHUP while busy: hand back what has not started, the calls in
	 * flight are recorded (on the old routes) */
	bool reload_pending;
	bool in_db; /* inside db_exec: the connection is busy */

	/* kept here */
	jobq claimed;	/* claimed, not yet started (the loop claims into it) */
	jobq finished;	/* waiting to be recorded */
	jobq handback;	/* probes that failed: their attempt is given back */
	job **done;	/* deliver_poll's output, concurrency entries */
	bool pumping;	/* inside dispatch_pump: done and claimed are being walked */
	bool db_failed; /* the connection is gone */
} dispatch;

/* an empty dispatch, nothing given yet */
void dispatch_init(dispatch *d);
/* frees the jobs d still holds (their leases expire) and its lists */
void dispatch_release(dispatch *d);
/* d->concurrency changed: make room for as many finished calls at once */
void dispatch_resize(dispatch *d);

/*
 * Collect the calls that have finished (waiting up to timeout_ms for one)
 * and refill their slots from d->claimed.  Uses the connection only when it
 * is free (not d->in_db).  Returns how many calls ended.
 */
size_t dispatch_pump(dispatch *d, int timeout_ms);

/* record the finished outcomes in one statement (the connection must be free) */
void dispatch_flush(dispatch *d);

#endif
