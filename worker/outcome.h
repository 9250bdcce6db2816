/* SPDX-License-Identifier: ISC */
/*
 * outcome.h - what a finished job means: done, retry later, or park
 *
 * Pure functions, no I/O: unit-tested in tests/unit/test_outcome.c.
 */
#ifndef HOOKINBOX_OUTCOME_H
#define HOOKINBOX_OUTCOME_H

#include "backoff.h"
#include "job.h"

/*
 * Decide j->outcome (and j->delay_s for a retry) from its result:
 *   - JOB_LOST (the lease was lost) and a handler's JOB_DONE (recorded in
 *     the handler's transaction) stay; so does a JOB_PARK decided before
 *     any call (payload purged);
 *   - an HTTP call by its status (backoff_classify); a failed SQL handler
 *     retries, unless it raised the permanent class (j->permanent): park;
 *   - a retry whose attempts or retry window are used up parks, with
 *     "attempts exhausted" or "retry window exhausted" appended to j->error.
 * u in [0, 1) picks the jitter.
 */
void outcome_decide(const backoff_policy *p, job *j, double u);

/* "done", "retry", "parked" or "lease-lost" */
const char *outcome_name(job_outcome o);

#endif
