/* SPDX-License-Identifier: ISC */
/*
 * record.h - write call outcomes back, guarded by the lease token
 */
#ifndef HOOKINBOX_RECORD_H
#define HOOKINBOX_RECORD_H

#include <stddef.h>

#include <libpq-fe.h>

#include "job.h"

/*
 * Record the outcome (done, retry after delay_s, parked) of jobs[0..n-1]
 * in one transaction through hookinbox.record_actions().  A job whose
 * lease was lost (expired and taken over) is left alone and its outcome
 * set to JOB_LOST.  Returns 0, or -1 on a database error (logged, rolled
 * back: the leases expire and the actions are called again with the same
 * keys).
 */
int record_run(PGconn *conn, job **jobs, size_t n) __attribute__((warn_unused_result));

#endif
