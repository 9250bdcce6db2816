/* SPDX-License-Identifier: ISC */
/*
 * gate.h - per-route limits: concurrency cap, rate, holds, circuit breaker
 *
 * The engine asks the gate before it starts a route's call and tells it
 * when the call ends; the gate keeps, per route of the configuration, the
 * calls in flight, a token bucket (rate), a hold (a 429 or Retry-After:
 * the whole route waits, GATE_HOLD_MAX_S at most) and a circuit breaker
 * (when every call for GATE_BREAKER_WINDOW_MS failed transiently, calls of
 * at least breaker_failures different actions, the route is held for breaker_cooldown
 * seconds, then one probe call goes out; any answer closes it).  What other workers must know
 * (holds, breaker changes) is queued as reports for the engine to write
 * to hookinbox.route_state; claim_actions() honours them there.
 *
 * No I/O and no clock of its own (now_ms is passed in): unit-tested in
 * tests/unit/test_gate.c.  It also keeps the route room, what the next
 * claim may take of each route.  The gate borrows the routes it was made for;
 * make a new one when the configuration is reloaded.
 */
#ifndef HOOKINBOX_GATE_H
#define HOOKINBOX_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "job.h"

typedef struct gate gate;

/* the breaker opens only after this long without an answer */
#define GATE_BREAKER_WINDOW_MS 10000
/* a Retry-After holds the route this long at most (seconds) */
#define GATE_HOLD_MAX_S 3600

typedef enum gate_report_kind {
	GATE_HOLD,  /* no claims for seconds (429 / Retry-After) */
	GATE_OPEN,  /* the breaker opened: held for the cool-down, then a probe */
	GATE_CLOSED /* a probe succeeded: the breaker is closed */
} gate_report_kind;

typedef struct gate_report {
	const char *route; /* borrowed from the configuration */
	gate_report_kind what;
	double seconds;
	char reason[128];
} gate_report;

/*
 * A gate for routes[0..n-1] (borrowed), for a worker with concurrency call
 * slots: a route without a concurrency of its own may use half of them
 * (rounded up) when there are several routes, all of them when there is
 * one, so that one dead route cannot take every slot.  The caller frees it
 * with gate_free.
 */
gate *gate_new(const route_conf *const *routes, size_t n, int concurrency);
void gate_free(gate *g);

/* "hold", "open", "closed" */
const char *gate_report_name(gate_report_kind k);

/* whether a call of route r may start now (cap, rate, hold) */
bool gate_may_start(gate *g, const route_conf *r, int64_t now_ms);
/* a call of route r started (takes a slot and a token) */
void gate_started(gate *g, const route_conf *r, int64_t now_ms);
/*
 * No HTTP call is in flight (the delivery engine says so): every route's
 * count of calls in flight is 0.  A count that missed its end would
 * otherwise keep its route "at its cap" for good, and a --once run from
 * ending.
 */
void gate_no_calls(gate *g);
/*
 * The call of j ended (outcome decided): frees its slot; a 429 or a
 * Retry-After holds the route, transient failures count towards the
 * breaker, any answer that is not one closes it.  Returns true when j was
 * a probe that failed: the caller hands its attempt back.
 */
bool gate_finished(gate *g, const job *j, int64_t now_ms);
/* whether route r is held now: its claimed jobs are handed back */
bool gate_held(const gate *g, const route_conf *r, int64_t now_ms);
/*
 * How many more actions of r to claim, waiting of them claimed and not
 * started: up to (claim_ahead + 1) x the route's cap, counting those in
 * flight; 0 while held.
 */
int gate_claim_limit(const gate *g, const route_conf *r, size_t waiting, int claim_ahead,
		     int64_t now_ms);
/*
 * The route room: what the next claim may take of each route, the routes
 * in the order gate_new got them.  gate_room sets each route's room to
 * gate_claim_limit, counting as waiting the jobs of waiting[0..n_waiting-1]
 * (claimed, not started) that are the route's, and returns the sum.
 */
long gate_room(gate *g, job *const *waiting, size_t n_waiting, int claim_ahead, int64_t now_ms);
/* the room per route as the last gate_room set it (all 0 before); borrowed */
const int *gate_room_limits(const gate *g);
/* whether at the last gate_room some route that is not held had no room: more may be due */
bool gate_room_capped(const gate *g);
/*
 * Whether a claim that took got[i] rows of route i (per route, in gate_new's
 * order) took all the room of some route: more of it may be due.
 */
bool gate_room_filled(const gate *g, const int *got);

/* moves up to max queued reports to out; returns how many */
size_t gate_take_reports(gate *g, gate_report *out, size_t max);

#endif
