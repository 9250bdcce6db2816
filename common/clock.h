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

/* wall-clock unix time in seconds */
int64_t clock_now(void);
/* monotonic time in microseconds, for durations */
int64_t clock_mono_us(void);

#endif
