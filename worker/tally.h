/* SPDX-License-Identifier: ISC */
/*
 * tally.h - what the engine counts: the run's counters, the metrics by
 * route, and the line logged for each call
 *
 * The statement modules (claim.c, record.c) say what they did; the engine
 * hands that here, so that observability stays a floor above them.  No
 * I/O but the log.
 */
#ifndef HOOKINBOX_TALLY_H
#define HOOKINBOX_TALLY_H

#include <stdbool.h>

#include "claim.h"
#include "conf.h"
#include "job.h"
#include "loop.h"
#include "metrics.h"

/*
 * A job's outcome is decided: log it (event=call) and, when a call was
 * made, count it in m by route and status class, with its duration.
 */
void tally_call(metrics *m, const job *j);

/*
 * The outcome of j was written (recorded true), or the statement failed
 * (recorded false: counted as lost).  Counts it in n and in m; a lease
 * found lost is logged (event=lease-lost).
 */
void tally_recorded(loop_counters *n, metrics *m, const job *j, bool recorded);

/* a claim on c's routes marked res->stale stale and res->parked parked */
void tally_claim(loop_counters *n, metrics *m, const conf *c, const claim_result *res);

#endif
