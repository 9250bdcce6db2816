/* SPDX-License-Identifier: ISC */
/*
 * test_outcome.c - what a finished job means: done, retry later, or park
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "outcome.h"
#include "tap.h"

int main(void);

static char http_name[] = "r", sql_name[] = "s", sql_fn[] = "app.apply";
static const route_conf http_route = {.name = http_name, .timeout = 10};
static const route_conf sql_route = {.name = sql_name, .handler = sql_fn, .timeout = 10};

/*
 * One finished call and what outcome_decide must make of it: the job after
 * attempt a of 10 with status (0: no answer), its age in seconds, a
 * Retry-After (0: none), and the outcome a caller already set (none: the
 * JOB_RETRY a call leaves); the delay is checked when max_delay > 0, the
 * error when err is set (exactly, or as a substring with err_in).
 */
typedef struct ocase {
	const char *name;
	const route_conf *route;
	long status;
	int attempt;
	double age, retry_after;
	bool preset;
	job_outcome set;
	bool uncalled, permanent;
	const char *error; /* j.error before the call is decided */
	job_outcome want;
	double min_delay, max_delay;
	const char *err;
	bool err_in;
} ocase;

static const ocase cases[] = {
	{.name = "2xx: done", .route = &http_route, .status = 200, .attempt = 1, .want = JOB_DONE},
	{.name = "5xx: retry after the base delay",
	 .route = &http_route,
	 .status = 503,
	 .attempt = 1,
	 .want = JOB_RETRY,
	 .min_delay = 4.9,
	 .max_delay = 5.1},
	{.name = "no answer: retry, doubled",
	 .route = &http_route,
	 .status = 0,
	 .attempt = 2,
	 .want = JOB_RETRY,
	 .min_delay = 9.9,
	 .max_delay = 10.1},
	{.name = "429 with Retry-After: at least that long",
	 .route = &http_route,
	 .status = 429,
	 .attempt = 1,
	 .retry_after = 60,
	 .want = JOB_RETRY,
	 .min_delay = 60,
	 .max_delay = 1e9},
	{.name = "other 4xx: parked at once",
	 .route = &http_route,
	 .status = 422,
	 .attempt = 1,
	 .want = JOB_PARK,
	 .err = ""},
	{.name = "last attempt failed: parked",
	 .route = &http_route,
	 .status = 500,
	 .attempt = 10,
	 .error = "http status 500",
	 .want = JOB_PARK,
	 .err = "http status 500; attempts exhausted"},
	{.name = "next try beyond the retry window: parked",
	 .route = &http_route,
	 .status = 500,
	 .attempt = 3,
	 .age = 71990,
	 .want = JOB_PARK,
	 .err = "retry window exhausted",
	 .err_in = true},
	{.name = "lease lost: stays lost whatever the status",
	 .route = &http_route,
	 .status = 500,
	 .attempt = 3,
	 .preset = true,
	 .set = JOB_LOST,
	 .want = JOB_LOST},
	{.name = "parked before any call (payload purged): stays parked",
	 .route = &http_route,
	 .attempt = 1,
	 .preset = true,
	 .set = JOB_PARK,
	 .uncalled = true,
	 .want = JOB_PARK},
	{.name = "handler recorded done: stays done",
	 .route = &sql_route,
	 .attempt = 1,
	 .preset = true,
	 .set = JOB_DONE,
	 .want = JOB_DONE},
	{.name = "handler failed: retry", .route = &sql_route, .attempt = 1, .want = JOB_RETRY},
	{.name = "handler raised the permanent class (ZP): parked at once",
	 .route = &sql_route,
	 .attempt = 1,
	 .permanent = true,
	 .want = JOB_PARK},
	{.name = "handler lost its lease: stays lost",
	 .route = &sql_route,
	 .attempt = 1,
	 .preset = true,
	 .set = JOB_LOST,
	 .want = JOB_LOST},
};

int
main(void)
{
	backoff_policy p = {.base_s = 5, .cap_s = 7200, .retry_window_s = 72000};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const ocase *c = &cases[i];
		job j;

		memset(&j, 0, sizeof(j));
		j.route = c->route;
		j.status = c->status;
		j.attempt = c->attempt;
		j.max_attempts = 10;
		j.age_s = c->age;
		j.retry_after_s = c->retry_after > 0 ? c->retry_after : -1;
		j.outcome = c->preset ? c->set : JOB_RETRY;
		j.called = !c->uncalled;
		j.permanent = c->permanent;
		if (c->error != NULL)
			snprintf(j.error, sizeof(j.error), "%s", c->error);
		outcome_decide(&p, &j, 0.5);
		ok(j.outcome == c->want && (c->max_delay <= 0 || (j.delay_s >= c->min_delay &&
								  j.delay_s < c->max_delay)),
		   "%s", c->name);
		if (c->err != NULL)
			ok(c->err_in ? strstr(j.error, c->err) != NULL
				     : strcmp(j.error, c->err) == 0,
			   "%s: error \"%s\"", c->name, j.error);
	}

	ok(strcmp(outcome_name(JOB_DONE), "done") == 0 &&
		   strcmp(outcome_name(JOB_RETRY), "retry") == 0 &&
		   strcmp(outcome_name(JOB_PARK), "parked") == 0 &&
		   strcmp(outcome_name(JOB_LOST), "lease-lost") == 0,
	   "outcome names as the log prints them");
	return done_testing();
}
