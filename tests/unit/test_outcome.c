/* SPDX-License-Identifier: ISC */
/*
 * test_outcome.c - what a finished job means: done, retry later, or park
 */
#include <stdbool.h>
#include <string.h>

#include "conf.h"
#include "outcome.h"
#include "tap.h"

int main(void);

static char http_name[] = "r", sql_name[] = "s", sql_fn[] = "app.apply";
static const route_conf http_route = {.name = http_name, .timeout = 10};
static const route_conf sql_route = {.name = sql_name, .handler = sql_fn, .timeout = 10};

/* a job after one call: attempt a of max, age in seconds */
static job
after_call(const route_conf *r, long status, int a, int max, double age)
{
	job j;

	memset(&j, 0, sizeof(j));
	j.route = r;
	j.status = status;
	j.attempt = a;
	j.max_attempts = max;
	j.age_s = age;
	j.retry_after_s = -1;
	j.outcome = JOB_RETRY;
	j.called = true;
	return j;
}

int
main(void)
{
	backoff_policy p = {.base_s = 5, .cap_s = 7200, .retry_window_s = 72000};
	job j;

	j = after_call(&http_route, 200, 1, 10, 0);
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_DONE, "2xx: done");

	j = after_call(&http_route, 503, 1, 10, 0);
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_RETRY && j.delay_s > 4.9 && j.delay_s < 5.1,
	   "5xx: retry after the base delay");

	j = after_call(&http_route, 0, 2, 10, 0);
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_RETRY && j.delay_s > 9.9 && j.delay_s < 10.1,
	   "no answer: retry, doubled");

	j = after_call(&http_route, 429, 1, 10, 0);
	j.retry_after_s = 60;
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_RETRY && j.delay_s >= 60, "429 with Retry-After: at least that long");

	j = after_call(&http_route, 422, 1, 10, 0);
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_PARK && j.error[0] == '\0', "other 4xx: parked at once");

	j = after_call(&http_route, 500, 10, 10, 0);
	strcpy(j.error, "http status 500");
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_PARK, "last attempt failed: parked");
	ok(strcmp(j.error, "http status 500; attempts exhausted") == 0, "and says why: %s",
	   j.error);

	j = after_call(&http_route, 500, 3, 10, 71990);
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_PARK && strstr(j.error, "retry window exhausted") != NULL,
	   "next try beyond the retry window: parked");

	j = after_call(&http_route, 500, 3, 10, 0);
	j.outcome = JOB_LOST;
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_LOST, "lease lost: stays lost whatever the status");

	j = after_call(&http_route, 0, 1, 10, 0);
	j.called = false;
	j.outcome = JOB_PARK;
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_PARK, "parked before any call (payload purged): stays parked");

	j = after_call(&sql_route, 0, 1, 10, 0);
	j.outcome = JOB_DONE;
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_DONE, "handler recorded done: stays done");

	j = after_call(&sql_route, 0, 1, 10, 0);
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_RETRY, "handler failed: retry");

	j = after_call(&sql_route, 0, 1, 10, 0);
	j.permanent = true;
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_PARK, "handler raised the permanent class (ZP): parked at once");

	j = after_call(&sql_route, 0, 1, 10, 0);
	j.outcome = JOB_LOST;
	outcome_decide(&p, &j, 0.5);
	ok(j.outcome == JOB_LOST, "handler lost its lease: stays lost");

	ok(strcmp(outcome_name(JOB_DONE), "done") == 0 &&
		   strcmp(outcome_name(JOB_RETRY), "retry") == 0 &&
		   strcmp(outcome_name(JOB_PARK), "parked") == 0 &&
		   strcmp(outcome_name(JOB_LOST), "lease-lost") == 0,
	   "outcome names as the log prints them");
	return done_testing();
}
