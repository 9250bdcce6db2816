/* SPDX-License-Identifier: ISC */
/*
 * gate.c - per-route limits: concurrency cap, rate, holds, circuit breaker
 */
#include "gate.h"

#include <stdio.h>
#include <stdlib.h>

#include "backoff.h"
#include "xalloc.h"

#define GATE_MAX_REPORTS 64 /* more than this between two writes: the oldest are dropped */

typedef struct route_gate {
	const route_conf *r;
	int cap; /* calls in flight at most */
	int inflight;
	double tokens;		  /* rate: calls that may start now */
	int64_t refilled_ms;	  /* when tokens was last topped up */
	int64_t hold_until_ms;	  /* held (429, Retry-After) until then */
	int64_t open_until_ms;	  /* the breaker is open: held until then, then a probe */
	bool open;		  /* the breaker opened here and no answer came since */
	int failures;		  /* transient failures since the last answer */
	int64_t failing_since_ms; /* when the first of them started */
	int64_t *failed;	  /* the actions among them, breaker_failures at most */
	int n_failed;
} route_gate;

struct gate {
	route_gate *routes;
	size_t n;
	gate_report reports[GATE_MAX_REPORTS];
	size_t n_reports;
	int *room;   /* per route: what the next claim may take (gate_room) */
	bool capped; /* some route (not held) had no room: more of it may be due */
};

gate *
gate_new(const route_conf *const *routes, size_t n, int concurrency)
{
	gate *g = xcalloc(1, sizeof(*g));

	g->n = n;
	g->routes = xcalloc(n + 1, sizeof(*g->routes));
	g->room = xcalloc(n + 1, sizeof(*g->room));
	for (size_t i = 0; i < n; i++) {
		g->routes[i].r = routes[i];
		g->routes[i].cap = routes[i]->concurrency > 0 ? routes[i]->concurrency
				   : n > 1		      ? (concurrency + 1) / 2
							      : concurrency;
		g->routes[i].tokens = -1; /* full at the first look */
		if (routes[i]->breaker_failures > 0)
			g->routes[i].failed =
				xcalloc((size_t)routes[i]->breaker_failures, sizeof(int64_t));
	}
	return g;
}

void
gate_free(gate *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->routes[i].failed);
	free(g->routes);
	free(g->room);
	free(g);
}

const char *
gate_report_name(gate_report_kind k)
{
	switch (k) {
	case GATE_HOLD:
		return "hold";
	case GATE_OPEN:
		return "open";
	case GATE_CLOSED:
		break;
	}
	return "closed";
}

static route_gate *
find(const gate *g, const route_conf *r)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->routes[i].r == r)
			return &g->routes[i];
	return NULL;
}

static void
report(gate *g, const route_conf *r, gate_report_kind what, double seconds, const char *reason)
{
	gate_report *rep;

	if (g->n_reports == GATE_MAX_REPORTS) {
		for (size_t i = 1; i < g->n_reports; i++)
			g->reports[i - 1] = g->reports[i];
		g->n_reports--;
	}
	rep = &g->reports[g->n_reports++];
	*rep = (gate_report){.route = r->name, .what = what, .seconds = seconds};
	snprintf(rep->reason, sizeof(rep->reason), "%s", reason);
}

/* a second's worth of calls at most (and at least one) */
static double
burst(const route_conf *r)
{
	return r->rate < 1 ? 1 : r->rate;
}

static void
refill(route_gate *rg, int64_t now_ms)
{
	if (rg->r->rate <= 0)
		return;
	if (rg->tokens < 0) {
		rg->tokens = burst(rg->r);
	} else if (now_ms > rg->refilled_ms) {
		rg->tokens += rg->r->rate * (double)(now_ms - rg->refilled_ms) / 1000.0;
		if (rg->tokens > burst(rg->r))
			rg->tokens = burst(rg->r);
	}
	rg->refilled_ms = now_ms;
}

bool
gate_held(const gate *g, const route_conf *r, int64_t now_ms)
{
	const route_gate *rg = find(g, r);

	return rg != NULL && (now_ms < rg->hold_until_ms || now_ms < rg->open_until_ms);
}

bool
gate_may_start(gate *g, const route_conf *r, int64_t now_ms)
{
	route_gate *rg = find(g, r);

	if (rg == NULL)
		return true;
	if (gate_held(g, r, now_ms) || rg->inflight >= rg->cap)
		return false;
	refill(rg, now_ms);
	return r->rate <= 0 || rg->tokens >= 1;
}

void
gate_started(gate *g, const route_conf *r, int64_t now_ms)
{
	route_gate *rg = find(g, r);

	if (rg == NULL)
		return;
	rg->inflight++;
	if (r->rate > 0) {
		refill(rg, now_ms);
		rg->tokens -= 1;
	}
}

static void
hold(route_gate *rg, int64_t until_ms)
{
	if (until_ms > rg->hold_until_ms)
		rg->hold_until_ms = until_ms;
}

/*
 * The breaker judges the route over a window: it opens only when every call
 * that ended for GATE_BREAKER_WINDOW_MS failed transiently, calls of at
 * least breaker_failures different actions.  A downstream that answers some
 * calls (one failing the first call of each key, or half of all calls) is
 * alive: its actions' own backoff spaces their retries, and holding the
 * whole route would only starve it.  So is one whose last few actions keep
 * failing while the rest were answered (the unlucky few of a flaky one):
 * their retries alone never open it.
 */
static bool
breaker_trips(const route_gate *rg, const route_conf *r, int64_t now_ms)
{
	return r->breaker_failures > 0 && !rg->open && rg->n_failed >= r->breaker_failures &&
	       now_ms - rg->failing_since_ms >= GATE_BREAKER_WINDOW_MS;
}

/* count the action among the route's failing ones, breaker_failures at most */
static void
note_failed(route_gate *rg, const route_conf *r, int64_t action_id)
{
	if (rg->failed == NULL || rg->n_failed >= r->breaker_failures)
		return;
	for (int i = 0; i < rg->n_failed; i++)
		if (rg->failed[i] == action_id)
			return;
	rg->failed[rg->n_failed++] = action_id;
}

/* a 429 or a Retry-After on a failure holds the route (GATE_HOLD_MAX_S at most) */
static void
hold_for(gate *g, route_gate *rg, const job *j, int64_t now_ms)
{
	double s = j->retry_after_s > 0 ? j->retry_after_s : j->delay_s;
	char why[96];

	if (j->status != 429 && !(j->retry_after_s > 0 && j->status >= 300))
		return;
	if (s < 1)
		s = 1;
	if (s > GATE_HOLD_MAX_S)
		s = GATE_HOLD_MAX_S; /* a hostile or mistaken Retry-After */
	hold(rg, now_ms + (int64_t)(s * 1000));
	snprintf(why, sizeof(why), "status %ld%s", j->status,
		 j->retry_after_s > 0 ? " with Retry-After" : "");
	report(g, j->route, GATE_HOLD, s, why);
}

bool
gate_finished(gate *g, const job *j, int64_t now_ms)
{
	route_gate *rg = find(g, j->route);
	const route_conf *r = j->route;
	bool transient;
	char why[96];

	if (rg == NULL)
		return false;
	if (rg->inflight > 0)
		rg->inflight--;
	/* no answer, or one that says try again (5xx, 408, 409, 425) */
	transient =
		j->status == 0 || (backoff_classify(j->status) == CALL_RETRY && j->status != 429);

	if (!transient) {
		/* the downstream answers: closed at once, whichever call saw it */
		rg->failures = 0;
		rg->n_failed = 0;
		if (j->probe || rg->open) {
			rg->open = false;
			rg->open_until_ms = 0;
			report(g, r, GATE_CLOSED, 0, j->probe ? "probe answered" : "call answered");
		}
	} else {
		if (rg->failures++ == 0)
			rg->failing_since_ms = now_ms - j->duration_ms;
		note_failed(rg, r, j->action_id);
		if (r->breaker_failures > 0 && (j->probe || breaker_trips(rg, r, now_ms))) {
			rg->open = true;
			rg->open_until_ms = now_ms + (int64_t)r->breaker_cooldown * 1000;
			snprintf(why, sizeof(why), "%s after %d transient failures in %lld s",
				 j->probe ? "probe failed" : "breaker opened", rg->failures,
				 (long long)((now_ms - rg->failing_since_ms) / 1000));
			report(g, r, GATE_OPEN, r->breaker_cooldown, why);
		}
	}
	/*
	 * The hold is reported after the breaker: in route_state a probe's
	 * "closed" ends the hold it finds and its "open" sets the cool-down,
	 * so a Retry-After reported before either would be lost for the other
	 * workers.
	 */
	hold_for(g, rg, j, now_ms);
	return transient && j->probe;
}

int
gate_claim_limit(const gate *g, const route_conf *r, size_t waiting, int claim_ahead,
		 int64_t now_ms)
{
	const route_gate *rg = find(g, r);
	long room;

	if (rg == NULL)
		return 0;
	if (gate_held(g, r, now_ms))
		return 0;
	room = (long)(claim_ahead + 1) * rg->cap - rg->inflight - (long)waiting;
	return room > 0 ? (int)room : 0;
}

long
gate_room(gate *g, job *const *waiting, size_t n_waiting, int claim_ahead, int64_t now_ms)
{
	long sum = 0;

	g->capped = false;
	for (size_t i = 0; i < g->n; i++) {
		const route_conf *r = g->routes[i].r;
		size_t w = 0;

		for (size_t k = 0; k < n_waiting; k++)
			w += waiting[k]->route == r;
		g->room[i] = gate_claim_limit(g, r, w, claim_ahead, now_ms);
		sum += g->room[i];
		if (g->room[i] == 0 && !gate_held(g, r, now_ms))
			g->capped = true;
	}
	return sum;
}

const int *
gate_room_limits(const gate *g)
{
	return g->room;
}

bool
gate_room_capped(const gate *g)
{
	return g->capped;
}

bool
gate_room_filled(const gate *g, const int *got)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->room[i] > 0 && got[i] >= g->room[i])
			return true;
	return false;
}

size_t
gate_take_reports(gate *g, gate_report *out, size_t max)
{
	size_t n = g->n_reports < max ? g->n_reports : max;

	for (size_t i = 0; i < n; i++)
		out[i] = g->reports[i];
	for (size_t i = n; i < g->n_reports; i++)
		g->reports[i - n] = g->reports[i];
	g->n_reports -= n;
	return n;
}

void
gate_no_calls(gate *g)
{
	for (size_t i = 0; i < g->n; i++)
		g->routes[i].inflight = 0;
}
