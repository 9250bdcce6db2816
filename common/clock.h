/* SPDX-License-Identifier: ISC */
/*
 * clock.h - the current time, overridable in test builds only
 *
 * A test build (-DHOOKINBOX_TEST) reads HOOKINBOX_TEST_NOW (unix seconds)
 * so that published vectors with fixed timestamps can be replayed; the
 * release build always uses the real clock.
 */
#ifndef HOOKINBOX_CLOCK_H
#define HOOKINBOX_CLOCK_H

#include <stdint.h>
#include <time.h>

/* wall-clock unix time in seconds */
int64_t clock_now(void);
/* monotonic time in microseconds, for durations */
int64_t clock_mono_us(void);
/*
 * The time us microseconds from now on clock which (CLOCK_REALTIME for
 * pthread_cond_timedwait and pthread_mutex_timedlock, CLOCK_MONOTONIC
 * for clock_nanosleep), us >= 0
 */
struct timespec clock_in_us(clockid_t which, int64_t us);

#endif
