/* SPDX-License-Identifier: ISC */
/*
 * health.h - hookinbox-worker --health-check
 */
#ifndef HOOKINBOX_HEALTH_H
#define HOOKINBOX_HEALTH_H

#include <stdbool.h>

#include "conf.h"

#define EX_UNHEALTHY 1 /* --health-check: a threshold is exceeded */

/*
 * Look at the queue, print one line on stdout and return EX_OK,
 * EX_UNHEALTHY when the oldest pending event or action is older than
 * max_pending_s or a parked action older than max_parked_s, EX_TEMPFAIL
 * when the database does not answer, EX_CONFIG when it refuses the role.
 * With nagios, the line and status follow the Nagios plugin convention
 * (0 OK, 2 CRITICAL, performance data after "|").
 */
int health_check(const conf *c, long max_pending_s, long max_parked_s, bool nagios);

#endif
