/* SPDX-License-Identifier: ISC */
/*
 * test_gate.c - per-route limits: cap, rate, holds, circuit breaker
 */
#include <stdbool.h>
#include <string.h>

#include "gate.h"
#include "tap.h"

int main(void);

static char a_name[] = "a", b_name[] = "b", c_name[] = "c";

/* a finished call of route r: status (0 = no answer), Retry-After or -1 */
/* a call of a new action each time, unless the caller sets action_id */
static job
call(const route_conf *r, long status, double retry_after, bool probe)
{
	static int64_t next_action = 1;
	job j;

	memset(&j, 0, sizeof(j));
	j.action_id = next_action++;
	j.route = r;
	j.status = status;
	j.retry_after_s = retry_after;
	j.called = true;
	j.probe = probe;
	j.delay_s = 5;
	return j;
}

/* a call of route r started and finished at t: what gate_finished says */
static bool
one_call(gate *g, const route_conf *r, long status, double retry_after, bool probe, int64_t t)
{
	job j = call(r, status, retry_after, probe);

	gate_started(g, r, t);
	return gate_finished(g, &j, t);
}

int
main(void)
{
	route_conf a = {.name = a_name,
			.timeout = 2,
			.concurrency = 2,
			.breaker_failures = 3,
			.breaker_cooldown = 30};
	route_conf b = {.name = b_name, .timeout = 2, .concurrency = 4, .rate = 2};
	const route_conf *routes[] = {&a, &b};
	route_conf c = {.name = c_name, .timeout = 2};
	const route_conf *one[] = {&c};
	gate *g = gate_new(routes, 2, 8);
	gate_report rep[8];
	int64_t t = 1000000;
	job j;
	int n;

	/* cap */
	ok(gate_may_start(g, &a, t), "a free route may start");
	gate_started(g, &a, t);
	gate_started(g, &a, t);
	ok(!gate_may_start(g, &a, t), "at its cap (2): no more");
	ok(gate_may_start(g, &b, t), "another route is not affected");
	ok(gate_claim_limit(g, &a, 1, 2, t) == 3,
	   "claim room: 3 rounds x 2 - 2 in flight - 1 waiting");

	/* breaker: 3 consecutive transient failures, a 4xx in between resets */
	j = call(&a, 503, -1, false);
	ok(!gate_finished(g, &j, t), "a 5xx: not a probe");
	j = call(&a, 400, -1, false);
	gate_started(g, &a, t);
	(void)gate_finished(g, &j, t);
	ok(!gate_held(g, &a, t), "a 4xx answers: the count starts again");
	for (int i = 0; i < 2; i++) {
		(void)one_call(g, &a, 0, -1, false, t);
	}
	ok(!gate_held(g, &a, t), "two failures: still closed");
	(void)one_call(g, &a, 502, -1, false, t);
	ok(!gate_held(g, &a, t), "three at once: still closed (not failing for a window yet)");
	t += GATE_BREAKER_WINDOW_MS;
	(void)one_call(g, &a, 502, -1, false, t);
	ok(gate_held(g, &a, t), "failing for the whole window: open, the route is held");
	ok(gate_claim_limit(g, &a, 0, 2, t) == 0, "held: nothing claimed");
	ok(!gate_may_start(g, &a, t + 29999), "held for the cool-down");
	ok(gate_may_start(g, &a, t + 30000) && !gate_held(g, &a, t + 30000),
	   "after it: a call may start");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 1 && rep[0].what == GATE_OPEN && rep[0].seconds == 30 &&
		   strcmp(rep[0].route, "a") == 0,
	   "one report: a opened for 30 s");

	/* the probe fails: open again, its attempt given back; succeeds: closed */
	t += 30000;
	ok(one_call(g, &a, 0, -1, true, t), "a failed probe says so (its attempt is given back)");
	ok(gate_held(g, &a, t + 1), "held again");
	t += 30000;
	ok(!one_call(g, &a, 200, -1, true, t), "a probe answered");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 2 && rep[0].what == GATE_OPEN && rep[1].what == GATE_CLOSED,
	   "reports: open, then closed");

	/* a flaky downstream (every other call answered) never opens it */
	t += 60000;
	for (int i = 0; i < 40; i++) {
		(void)one_call(g, &a, i % 2 ? 200 : 500, -1, false, t);
		ok(!gate_held(g, &a, t), "half failing for %d s: closed", i);
		t += 1000;
	}
	/* the retries of fewer actions than breaker_failures (a flaky one's unlucky few) */
	for (int i = 0; i < 20; i++) {
		j = call(&a, 503, -1, false);
		j.action_id = 1 + i % 2;
		gate_started(g, &a, t);
		(void)gate_finished(g, &j, t);
		t += 1000;
	}
	ok(!gate_held(g, &a, t), "two actions failing for 20 s: closed");
	j = call(&a, 503, -1, false);
	gate_started(g, &a, t);
	(void)gate_finished(g, &j, t);
	ok(gate_held(g, &a, t), "a third action failing too: open");
	(void)one_call(g, &a, 200, -1, true, t + 30000);
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 2 && rep[0].what == GATE_OPEN && rep[1].what == GATE_CLOSED,
	   "reports: open, then closed by the probe");
	t += 30000;

	/* open, then a call in flight answers: closed at once */
	for (int i = 0; i < 4; i++) {
		(void)one_call(g, &a, 0, -1, false, t);
		t += GATE_BREAKER_WINDOW_MS / 2;
	}
	ok(gate_held(g, &a, t), "failing for the window again: open");
	j = call(&a, 200, -1, false);
	(void)gate_finished(g, &j, t);
	ok(!gate_held(g, &a, t), "a call that was in flight answers: closed at once");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 2 && rep[0].what == GATE_OPEN && rep[1].what == GATE_CLOSED,
	   "reports: open, then closed (no probe needed)");

	/* 429 and Retry-After hold the whole route */
	(void)one_call(g, &a, 429, 7, false, t);
	ok(gate_held(g, &a, t + 6999) && !gate_held(g, &a, t + 7000),
	   "429 Retry-After: 7 holds 7 s");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 1 && rep[0].what == GATE_HOLD && rep[0].seconds == 7, "reported as a hold");
	(void)one_call(g, &a, 429, -1, false, t + 7000);
	ok(gate_held(g, &a, t + 11999) && !gate_held(g, &a, t + 12000),
	   "429 alone: held for the backoff delay");
	t += 12000;
	(void)gate_take_reports(g, rep, 8);
	(void)one_call(g, &a, 503, 999999999, false, t);
	ok(gate_held(g, &a, t + GATE_HOLD_MAX_S * 1000 - 1) &&
		   !gate_held(g, &a, t + GATE_HOLD_MAX_S * 1000),
	   "Retry-After: 999999999 holds GATE_HOLD_MAX_S at most");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 1 && rep[0].seconds == GATE_HOLD_MAX_S, "and is reported capped");
	t += GATE_HOLD_MAX_S * 1000;

	/*
	 * A probe answered 429 or 503 with Retry-After: the hold is reported
	 * after the breaker's change (route_state: "closed" ends the hold it
	 * finds, "open" sets the cool-down), so that other workers keep it.
	 */
	j = call(&a, 429, 120, true);
	gate_started(g, &a, t);
	ok(!gate_finished(g, &j, t), "a probe answered 429: not a failed probe");
	ok(gate_held(g, &a, t + 119999) && !gate_held(g, &a, t + 120000),
	   "and the route is held for its Retry-After");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 2 && rep[0].what == GATE_CLOSED && rep[1].what == GATE_HOLD &&
		   rep[1].seconds == 120,
	   "reports: closed, then the hold");
	t += 120000;
	j = call(&a, 503, 120, true);
	gate_started(g, &a, t);
	ok(gate_finished(g, &j, t), "a probe answered 503 with Retry-After: a failed probe");
	ok(gate_held(g, &a, t + 119999), "held for the Retry-After, past the cool-down");
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 2 && rep[0].what == GATE_OPEN && rep[1].what == GATE_HOLD && rep[1].seconds == 120,
	   "reports: open, then the hold");
	t += 120000;
	j = call(&a, 200, -1, true);
	gate_started(g, &a, t);
	(void)gate_finished(g, &j, t);
	(void)gate_take_reports(g, rep, 8);

	/* rate: 2/s, a burst of 2 */
	ok(gate_may_start(g, &b, t), "rate: first call");
	gate_started(g, &b, t);
	ok(gate_may_start(g, &b, t), "rate: second (burst 2)");
	gate_started(g, &b, t);
	ok(!gate_may_start(g, &b, t + 499), "rate: a third waits");
	ok(gate_may_start(g, &b, t + 500), "rate: half a second later, one more");
	(void)gate_take_reports(g, rep, 8);

	/* the report queue keeps the newest when it overflows */
	for (int i = 0; i < 70; i++) {
		(void)one_call(g, &b, 503, i + 1, false, t);
	}
	n = (int)gate_take_reports(g, rep, 8);
	ok(n == 8 && rep[0].seconds == 7,
	   "overflow: the oldest dropped (first kept: Retry-After 7)");

	gate_free(g);

	/* a route without a cap of its own: half the slots beside others, all alone */
	g = gate_new(one, 1, 7);
	ok(gate_claim_limit(g, &c, 0, 0, t) == 7, "alone: all 7 slots");
	gate_free(g);
	{
		const route_conf *two[] = {&c, &a};

		g = gate_new(two, 2, 7);
		ok(gate_claim_limit(g, &c, 0, 0, t) == 4, "beside another: half of 7, rounded up");
		ok(gate_claim_limit(g, &a, 0, 0, t) == 2, "its own cap wins");
		gate_free(g);
	}
	{
		/* the route room: a claim's limits by route, and whether it filled one */
		const route_conf *two[] = {&c, &a};
		job w1 = call(&a, 0, -1, false), w2 = call(&a, 0, -1, false);
		job *waiting[] = {&w1, &w2};
		int got[2] = {0, 2};
		const int *room;

		g = gate_new(two, 2, 7);
		ok(gate_room(g, waiting, 2, 0, t) == 4, "room: c 4, a 2 - 2 waiting");
		room = gate_room_limits(g);
		ok(room[0] == 4 && room[1] == 0, "room per route, in gate_new's order");
		ok(gate_room_capped(g), "a route that is not held has no room: capped");
		ok(!gate_room_filled(g, got), "a route without room is never filled");
		got[0] = 4;
		ok(gate_room_filled(g, got), "a claim that took all of c's room filled it");
		ok(gate_room(g, waiting, 0, 1, t) == 12 && !gate_room_capped(g),
		   "nothing waiting, a round ahead: 8 + 4, none capped");
		gate_free(g);
	}
	gate_free(NULL);
	return done_testing();
}
