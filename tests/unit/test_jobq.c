/* SPDX-License-Identifier: ISC */
/*
 * test_jobq.c - a growable list of jobs
 */
#include <stdlib.h>

#include "jobq.h"
#include "tap.h"
#include "xalloc.h"

int main(void);

static job *
new_job(int64_t id)
{
	job *j = xcalloc(1, sizeof(*j));

	j->action_id = id;
	return j;
}

int
main(void)
{
	jobq q, taken;
	bool in_order = true;

	jobq_init(&q);
	ok(q.n == 0 && q.v == NULL, "init: empty");
	for (int64_t i = 0; i < 100; i++)
		jobq_push(&q, new_job(i));
	for (size_t i = 0; i < q.n; i++)
		in_order = in_order && q.v[i]->action_id == (int64_t)i;
	ok(q.n == 100 && q.cap >= 100 && in_order, "push: 100 jobs, in order, past one growth");
	jobq_take(&q, &taken);
	ok(q.n == 0 && q.v == NULL && taken.n == 100, "take: all moved, the queue empty");
	jobq_push(&q, new_job(100));
	ok(q.n == 1 && taken.n == 100 && taken.v[99]->action_id == 99,
	   "a push after take does not disturb what was taken");
	jobq_release(&taken);
	ok(taken.n == 0 && taken.v == NULL, "release: empty and usable");
	jobq_release(&q);
	jobq_release(&q);
	ok(q.n == 0, "release twice: harmless");
	return done_testing();
}
