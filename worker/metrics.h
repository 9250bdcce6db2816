/* SPDX-License-Identifier: ISC */
/*
 * metrics.h - the worker's Prometheus text-format metrics file
 *
 * Counters (calls by route and status class, a call latency histogram,
 * actions recorded by route and outcome; kept across runs in the file) plus the
 * database-wide figures of a queue_snapshot, written for node_exporter's
 * textfile collector: to PATH.tmp, then renamed over PATH, so that the
 * collector never reads half a file.
 */
#ifndef HOOKINBOX_METRICS_H
#define HOOKINBOX_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "queue.h"

typedef struct metrics metrics;

/* status classes of a call */
typedef enum call_kind {
	CALL_2XX,
	CALL_3XX,
	CALL_4XX,
	CALL_5XX,
	CALL_TIMEOUT, /* no answer within the route's timeout */
	CALL_ERROR,   /* no usable answer: connection refused, reset, garbage; handler failed */
	CALL_OK,      /* a SQL handler committed */
	CALL__COUNT
} call_kind;

/* what happened to an action, as recorded (or found by the claim) */
typedef enum action_kind {
	ACT_DONE,
	ACT_RETRY,
	ACT_PARKED,
	ACT_STALE,
	ACT_LEASE_LOST,
	ACT__COUNT
} action_kind;

/* the run as a whole, for the last-run gauges */
typedef struct metrics_run {
	int64_t started;   /* wall clock, seconds */
	int64_t now;	   /* wall clock when written */
	double duration_s; /* --once: the run; --loop: since the start */
	bool ok;	   /* false when the database was lost */
	long fanned_out, unrouted, sent, done, retry, parked, stale, lost;
} metrics_run;

metrics *metrics_new(void);
/* accepts NULL */
void metrics_free(metrics *m);

/* make a route's series exist (at zero) before its first call */
void metrics_route(metrics *m, const char *route);
void metrics_call(metrics *m, const char *route, call_kind k, double seconds);
void metrics_action(metrics *m, const char *route, action_kind k);

/*
 * Write the file.  q may be NULL (the database was not reachable): then the
 * database-wide series are left out.  The counters written are those the
 * file held plus what m counted since its last write (under a lock on
 * PATH.lock): they count across runs and processes.  Returns 0, or -1 after
 * logging why.
 */
int metrics_write(metrics *m, const char *path, const queue_snapshot *q, const metrics_run *run);

#endif
