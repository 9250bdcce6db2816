/* SPDX-License-Identifier: ISC */
/*
 * queue.h - the queue's health in a few cheap queries
 *
 * What the metrics file and --health-check report about the whole
 * database (not only this worker): pending inbox rows per endpoint and the
 * age of the oldest, rows accepted in the last hour, pending (retrying, in
 * flight) and parked actions per route with the oldest of each, and the
 * requests the responders rejected, by endpoint and reason; deliveries held
 * for review and parked actions by age; the responders' request durations;
 * what blocks a route (an operator's pause, a hold, an open breaker).
 *
 * Cost: pending inbox rows through the partial index inbox_pending,
 * pending actions through action_due, parked through action_parked, the
 * last hour through inbox_received, held deliveries through inbox_review:
 * each is proportional to the backlog, the parked or held set or one hour
 * of intake, never to the done rows.  route_state is one row per route a
 * worker registered.  The duration histogram is one row per
 * endpoint, provider, outcome and status.  Done and
 * stale actions are not counted here (that would read every row); the
 * worker counts what it records instead, and sql/stats.sql counts them for
 * an operator who can afford the scan.
 */
#ifndef HOOKINBOX_QUEUE_H
#define HOOKINBOX_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

typedef struct queue_endpoint {
	char *name;
	long pending;		 /* inbox rows not yet fanned out */
	long accepted_hour;	 /* inbox rows received in the last hour */
	double oldest_pending_s; /* -1 when none is pending */
} queue_endpoint;

typedef struct queue_route {
	char *name;
	long pending;	/* every pending action (due, waiting or in flight) */
	long retrying;	/* pending with attempts > 0 */
	long in_flight; /* pending under an unexpired lease */
	long parked;
	long review;		 /* held: an ordered route could not place it */
	double oldest_pending_s; /* since the action was made; -1 when none */
	double oldest_parked_s;	 /* since it was parked; -1 when none */
} queue_route;

/* what blocks a route's claims (hookinbox.route_state, sql/route.sql) */
typedef struct queue_route_state {
	char *name;
	bool paused;	   /* by an operator */
	double hold_s;	   /* until the hold ends (Retry-After, breaker cool-down); 0: none */
	bool breaker_open; /* open or probing */
} queue_route_state;

/* the responders' rejections (hookinbox.rejection, every hour kept) */
typedef struct queue_rejection {
	char *endpoint; /* "(unknown)" for requests to no endpoint */
	char *reason;	/* "signature mismatch", "stale timestamp", ... */
	long long count;
} queue_rejection;

/* held deliveries of an endpoint, or parked actions of a route, by age */
#define QUEUE_AGES 4
extern const char *const queue_age_labels[QUEUE_AGES]; /* "0s" "1h" "1d" "7d" */
typedef struct queue_aged {
	char *name;
	long older_than[QUEUE_AGES]; /* how many are older than each label's age */
	double oldest_s;
} queue_aged;

/* the responders' request-duration histogram (hookinbox.request_duration) */
typedef struct queue_duration {
	char *endpoint, *provider, *outcome;
	int status;
	long long *buckets; /* n_bounds + 1, not cumulative, +Inf last */
	double sum;
} queue_duration;

typedef struct queue_snapshot {
	queue_endpoint *ep;
	size_t n_ep;
	queue_route *rt;
	size_t n_rt;
	queue_rejection *rej;
	size_t n_rej;
	queue_aged *held; /* inbox state review, by endpoint */
	size_t n_held;
	queue_aged *parked; /* by route */
	size_t n_parked;
	queue_route_state *blocked; /* every route with a row in route_state */
	size_t n_blocked;
	char **bounds; /* the histogram's upper bounds as text, for le="" */
	size_t n_bounds;
	queue_duration *dur;
	size_t n_dur;
} queue_snapshot;

/*
 * Fill *q (which the caller releases with queue_snapshot_release, also
 * after an error).  Returns 0, or -1 on a database error (logged).
 */
int queue_snapshot_take(PGconn *conn, queue_snapshot *q) __attribute__((warn_unused_result));
void queue_snapshot_release(queue_snapshot *q);

/* the oldest over all endpoints or routes (-1: none), *which names it (borrowed) */
double queue_oldest_pending_event(const queue_snapshot *q, const char **which);
double queue_oldest_pending_action(const queue_snapshot *q, const char **which);
double queue_oldest_parked_action(const queue_snapshot *q, const char **which);

#endif
