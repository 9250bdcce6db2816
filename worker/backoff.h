/* SPDX-License-Identifier: ISC */
/*
 * backoff.h - what a call's result means and when to try again
 *
 * Pure functions, no I/O: unit-tested in tests/unit/test_backoff.c.
 */
#ifndef HOOKINBOX_BACKOFF_H
#define HOOKINBOX_BACKOFF_H

#include <stdbool.h>

typedef enum call_class {
	CALL_SUCCESS, /* 2xx */
	CALL_RETRY,   /* 408, 409, 425, 429, 5xx, no answer: try again */
	CALL_FATAL    /* any other status: park at once */
} call_class;

typedef struct backoff_policy {
	int base_s;	    /* delay after the first failed attempt */
	int cap_s;	    /* no computed delay exceeds this (Retry-After may) */
	int retry_window_s; /* park rather than retry beyond this age */
} backoff_policy;

/* status 0 means no HTTP answer at all (timeout, connection error) */
call_class backoff_classify(long status);

/*
 * Seconds to wait after failed attempt number attempt (1-based):
 * base * 2^(attempt-1), capped, times a jitter factor in [0.8, 1.2]
 * chosen by u in [0, 1); then at least retry_after_s when that is >= 0,
 * taken as BACKOFF_RETRY_AFTER_MAX_S at most (a Retry-After of years would
 * otherwise park the action at once, past its retry window).
 */
#define BACKOFF_RETRY_AFTER_MAX_S 21600.0
double backoff_delay(const backoff_policy *p, int attempt, double u, double retry_after_s);

/*
 * Whether a retryable failure parks instead: attempts used up, or the next
 * try (age_s + delay_s) would fall outside the retry window.
 */
bool backoff_exhausted(const backoff_policy *p, int attempt, int max_attempts, double age_s,
		       double delay_s);

#endif
