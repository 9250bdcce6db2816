/* SPDX-License-Identifier: ISC */
/*
 * sqlfn.h - routes with handler = sql:schema.function
 */
#ifndef HOOKINBOX_SQLFN_H
#define HOOKINBOX_SQLFN_H

#include <libpq-fe.h>

#include "job.h"

/* a handler error of this SQLSTATE class parks the action at once */
#define SQLFN_PERMANENT_CLASS "ZP"
/* a unique violation in the handler: parked at once, said so */
#define SQLFN_UNIQUE_VIOLATION "23505"

/*
 * Apply j through its route's SQL function in one transaction that first
 * checks and locks the lease, then calls schema.function(event jsonb),
 * then records the action as done: the local effect happens exactly once
 * or not at all.  On return j->outcome is JOB_DONE (recorded), JOB_LOST
 * (lease lost; nothing done) or JOB_RETRY with j->error set (the function
 * failed; the caller decides retry or park and records it; j->permanent
 * when it raised SQLSTATE class ZP or a unique violation).  Returns -1
 * only when the connection is gone.
 */
int sqlfn_apply(PGconn *conn, job *j) __attribute__((warn_unused_result));

#endif
