/* SPDX-License-Identifier: ISC */
/*
 * clock.c - the current time, overridable in test builds only
 */
#include "clock.h"

#include "decimal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t
clock_now(void)
{
#ifdef HOOKINBOX_TEST
	const char *s = getenv("HOOKINBOX_TEST_NOW");
	char whole[32];
	long long now;

	/* unix seconds; a fraction (a test's Time::HiRes clock) is dropped */
	if (s != NULL && snprintf(whole, sizeof(whole), "%.*s", (int)strcspn(s, "."), s) > 0 &&
	    decimal_parse(whole, INT64_MIN, INT64_MAX, &now) == 0)
		return now;
#endif
	return (int64_t)time(NULL);
}

struct timespec
clock_in_us(clockid_t which, int64_t us)
{
	struct timespec ts;

	clock_gettime(which, &ts);
	ts.tv_sec += (time_t)(us / 1000000);
	ts.tv_nsec += (long)(us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

int64_t
clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
