/* SPDX-License-Identifier: ISC */
/*
 * outcome.c - what a finished job means: done, retry later, or park
 */
#include "outcome.h"

#include <stdio.h>
#include <string.h>

const char *
outcome_name(job_outcome o)
{
	switch (o) {
	case JOB_DONE:
		return "done";
	case JOB_RETRY:
		return "retry";
	case JOB_PARK:
		return "parked";
	case JOB_LOST:
		break;
	}
	return "lease-lost";
}

/* append "; what" to j->error, truncating */
static void
error_append(job *j, const char *what)
{
	size_t len = strlen(j->error);

	snprintf(j->error + len, sizeof(j->error) - len, "%s%s", len ? "; " : "", what);
}

void
outcome_decide(const backoff_policy *p, job *j, double u)
{
	call_class cls;
	double delay;

	if (j->outcome == JOB_LOST)
		return; /* the lease was lost: nothing of ours to record */
	if (j->route != NULL && j->route->handler != NULL) {
		if (j->outcome == JOB_DONE)
			return; /* recorded in the handler's transaction */
		cls = j->permanent ? CALL_FATAL : CALL_RETRY;
	} else if (j->outcome == JOB_PARK) {
		return; /* decided before any call (payload purged) */
	} else if (j->status > 0)
		cls = backoff_classify(j->status);
	else
		cls = CALL_RETRY;
	if (cls == CALL_SUCCESS) {
		j->outcome = JOB_DONE;
		return;
	}
	if (cls == CALL_FATAL) {
		j->outcome = JOB_PARK;
		return;
	}
	delay = backoff_delay(p, j->attempt, u, j->retry_after_s);
	if (backoff_exhausted(p, j->attempt, j->max_attempts, j->age_s, delay)) {
		error_append(j, j->attempt >= j->max_attempts ? "attempts exhausted"
							      : "retry window exhausted");
		j->outcome = JOB_PARK;
		return;
	}
	j->outcome = JOB_RETRY;
	j->delay_s = delay;
}
