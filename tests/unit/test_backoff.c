/* SPDX-License-Identifier: ISC */
/*
 * test_backoff.c - what a call's result means and when to try again
 */
#include <math.h>
#include <stdbool.h>

#include "backoff.h"
#include "conf.h"
#include "fanout.h"
#include "tap.h"

int main(void);

static bool
near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

/* what each answer means (0: none) */
static const struct {
	long status;
	call_class want;
	const char *name;
} classes[] = {
	{200, CALL_SUCCESS, "200 succeeds"},
	{204, CALL_SUCCESS, "204 succeeds"},
	{0, CALL_RETRY, "no answer retries"},
	{408, CALL_RETRY, "408 retries"},
	{409, CALL_RETRY, "409 (key in progress) retries"},
	{425, CALL_RETRY, "425 retries"},
	{429, CALL_RETRY, "429 retries"},
	{500, CALL_RETRY, "500 retries"},
	{503, CALL_RETRY, "503 retries"},
	{400, CALL_FATAL, "400 parks"},
	{404, CALL_FATAL, "404 parks"},
	{422, CALL_FATAL, "422 parks"},
	{301, CALL_FATAL, "a redirect parks (not followed)"},
};

int
main(void)
{
	backoff_policy p = {.base_s = 5, .cap_s = 7200, .retry_window_s = 72000};
	double total = 0;

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		ok(backoff_classify(classes[i].status) == classes[i].want, "%s", classes[i].name);

	ok(near(backoff_delay(&p, 1, 0.5, -1), 5.0), "attempt 1: base");
	ok(near(backoff_delay(&p, 2, 0.5, -1), 10.0), "attempt 2: doubled");
	ok(near(backoff_delay(&p, 4, 0.5, -1), 40.0), "attempt 4: 40 s");
	ok(near(backoff_delay(&p, 30, 0.5, -1), 7200.0), "capped");
	ok(near(backoff_delay(&p, 1, 0.0, -1), 4.0), "jitter -20%%");
	ok(backoff_delay(&p, 1, 0.999999, -1) < 6.0 && backoff_delay(&p, 1, 0.99, -1) > 5.9,
	   "jitter up to +20%%");
	ok(near(backoff_delay(&p, 1, 2.0, -1), backoff_delay(&p, 1, 0.999999, -1)), "u clamped");
	ok(near(backoff_delay(&p, 1, 0.5, 30), 30.0), "Retry-After is a lower bound");
	ok(near(backoff_delay(&p, 3, 0.5, 3), 20.0),
	   "a short Retry-After does not shorten the backoff");
	ok(near(backoff_delay(&p, 1, 0.5, 9000), 9000.0), "Retry-After may exceed the cap");
	ok(near(backoff_delay(&p, 1, 0.5, 999999999), BACKOFF_RETRY_AFTER_MAX_S),
	   "a Retry-After of years is taken as BACKOFF_RETRY_AFTER_MAX_S");
	ok(!backoff_exhausted(&p, 1, 12, 0, backoff_delay(&p, 1, 0.5, 999999999)),
	   "and does not park the action at once");

	for (int a = 1; a < 12; a++)
		total += backoff_delay(&p, a, 0.999999, -1);
	ok(total < 20 * 3600, "the default schedule (12 attempts) ends inside 20 h: %.0f s", total);

	ok(backoff_exhausted(&p, 12, 12, 0, 5), "max attempts reached parks");
	ok(!backoff_exhausted(&p, 11, 12, 0, 5), "below max attempts retries");
	ok(backoff_exhausted(&p, 2, 12, 71990, 20), "beyond the retry window parks");
	ok(!backoff_exhausted(&p, 2, 12, 71970, 20), "inside the retry window retries");

	{
		/* conf.h's strings are mutable: use writable buffers */
		char shop[] = "shop", inv[] = "invoice.*", cs[] = "checkout.session.*",
		     star[] = "*";
		char name[] = "r";
		char *eps[] = {shop};
		char *evs[] = {inv, cs};
		char *all[] = {star};
		route_conf r = {.name = name,
				.endpoints = eps,
				.n_endpoints = 1,
				.events = evs,
				.n_events = 2};

		ok(fanout_route_matches(&r, "shop", "invoice.paid"), "glob matches");
		ok(fanout_route_matches(&r, "shop", "checkout.session.completed"),
		   "second glob matches");
		ok(!fanout_route_matches(&r, "shop", "customer.created"), "other types do not");
		ok(!fanout_route_matches(&r, "gh", "invoice.paid"), "other endpoints do not");
		ok(!fanout_route_matches(&r, "shop", NULL),
		   "an untyped event needs a matching glob");
		r.events = all;
		r.n_events = 1;
		ok(fanout_route_matches(&r, "shop", NULL), "* takes untyped events");
	}
	return done_testing();
}
