/* SPDX-License-Identifier: ISC */
/*
 * jobq.h - a growable list of jobs, in the order they were added
 *
 * The engine keeps its jobs in three of these: claimed and not started,
 * finished and waiting to be recorded, and failed probes to hand back.  A
 * jobq is a value on its owner's stack or in its owner's struct: the
 * owner calls jobq_init and jobq_release.  The queue owns the jobs in it
 * until they are taken out (jobq_take, or by the caller rewriting v[] and
 * n, as a filter does).
 */
#ifndef HOOKINBOX_JOBQ_H
#define HOOKINBOX_JOBQ_H

#include <stddef.h>

#include "job.h"

typedef struct jobq {
	job **v; /* v[0..n-1]; grown by xgrow */
	size_t n, cap;
} jobq;

void jobq_init(jobq *q);
/* frees every job still in q, then the list; q is empty and usable again */
void jobq_release(jobq *q);
/* appends j; q now owns it */
void jobq_push(jobq *q, job *j);
/*
 * Moves q's jobs to out (which must be empty or released) and leaves q
 * empty: jobs pushed to q afterwards do not disturb a walk over out.
 */
void jobq_take(jobq *q, jobq *out);

#endif
