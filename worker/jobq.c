/* SPDX-License-Identifier: ISC */
/*
 * jobq.c - a growable list of jobs
 */
#include "jobq.h"

#include <stdlib.h>

#include "dynbuf.h"
#include "xalloc.h"

void
jobq_init(jobq *q)
{
	*q = (jobq){.v = NULL, .n = 0, .cap = 0};
}

void
jobq_release(jobq *q)
{
	for (size_t i = 0; i < q->n; i++)
		job_free(q->v[i]);
	free(q->v);
	jobq_init(q);
}

void
jobq_push(jobq *q, job *j)
{
	q->v = xgrow(q->v, q->n + 1, &q->cap, sizeof(*q->v));
	q->v[q->n++] = j;
}

void
jobq_take(jobq *q, jobq *out)
{
	*out = *q;
	jobq_init(q);
}
