/* SPDX-License-Identifier: ISC */
/*
 * record.c - write call outcomes back, guarded by the lease token
 */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>

#include "db.h"
#include "failpoint.h"

static const char *
outcome_state(job_outcome o)
{
	switch (o) {
	case JOB_DONE:
		return "done";
	case JOB_RETRY:
		return "pending";
	case JOB_PARK:
		return "parked";
	case JOB_LOST:
		break;
	}
	return NULL;
}

int
record_run(PGconn *conn, job **jobs, size_t n)
{
	static const char sql[] = "select * from hookinbox.record_actions($1::bigint[], $2::uuid[],"
				  " $3::text[], $4::integer[], $5::text[], $6::text[],"
				  " $7::double precision[])";
	db_array a[7];
	const char *p[7];
	long long *ids = NULL;
	size_t n_ids = 0, sent = 0;
	PGresult *r = NULL;
	int rc = -1, in_tx = 0;

	for (size_t k = 0; k < 7; k++)
		db_array_init(&a[k]);
	for (size_t i = 0; i < n; i++) {
		job *j = jobs[i];
		char delay[32];

		if (outcome_state(j->outcome) == NULL)
			continue;
		db_array_addf_int(&a[0], j->action_id);
		db_array_add(&a[1], j->token);
		db_array_add(&a[2], outcome_state(j->outcome));
		if (j->status > 0)
			db_array_addf_int(&a[3], j->status);
		else
			db_array_add(&a[3], NULL);
		db_array_add(&a[4], j->error[0] ? j->error : NULL);
		db_array_add(&a[5], j->ref[0] ? j->ref : NULL);
		snprintf(delay, sizeof(delay), "%.3f", j->outcome == JOB_RETRY ? j->delay_s : 0.0);
		db_array_add(&a[6], delay);
		sent++;
	}
	if (sent == 0) {
		rc = 0;
		goto out;
	}
	for (size_t k = 0; k < 7; k++)
		p[k] = db_array_get(&a[k]);
	if (db_command(conn, "begin", "record") != 0)
		goto out;
	in_tx = 1;
	r = db_exec(conn, sql, 7, p);
	if (db_check(conn, r, PGRES_TUPLES_OK, "record outcomes") != 0 || PQnfields(r) != 1)
		goto out;
	FAILPOINT("worker-mid-record");
	if (db_sorted_ids(r, "record outcomes", &ids, &n_ids) != 0)
		goto out;
	PQclear(r);
	r = NULL;
	in_tx = 0;
	if (db_command(conn, "commit", "record: commit") != 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (outcome_state(jobs[i]->outcome) != NULL &&
		    !db_ids_have(ids, n_ids, jobs[i]->action_id))
			jobs[i]->outcome = JOB_LOST;
	rc = 0;
out:
	PQclear(r);
	if (in_tx && !db_lost(conn))
		(void)db_command(conn, "rollback", "record: rollback");
	free(ids);
	for (size_t k = 0; k < 7; k++)
		db_array_release(&a[k]);
	return rc;
}
