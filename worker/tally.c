/* SPDX-License-Identifier: ISC */
/*
 * tally.c - what the engine counts
 */
#include "tally.h"

#include <stdio.h>

#include "log.h"
#include "outcome.h"

static void
log_call(const job *j)
{
	char id[24], attempt[16], status[16], ms[24], delay[24];

	snprintf(id, sizeof(id), "%lld", (long long)j->action_id);
	snprintf(attempt, sizeof(attempt), "%d", j->attempt);
	snprintf(status, sizeof(status), "%ld", j->status);
	snprintf(ms, sizeof(ms), "%lld", (long long)j->duration_ms);
	snprintf(delay, sizeof(delay), "%.1f", j->delay_s);
	log_kv("call", "route", j->route_name, LOG_NUM, "action", id, LOG_NUM, "attempt", attempt,
	       LOG_NUM, "status", status, LOG_NUM, "duration_ms", ms, "outcome",
	       outcome_name(j->outcome), LOG_NUM, "retry_in_s",
	       j->outcome == JOB_RETRY ? delay : NULL, "error", j->error[0] ? j->error : NULL,
	       LOG_END);
}

/* count a finished call by route and status class, with its duration */
static void
count_call(metrics *m, const job *j)
{
	call_kind k;

	if (j->route != NULL && j->route->handler != NULL)
		k = j->outcome == JOB_DONE ? CALL_OK : CALL_ERROR;
	else if (j->status >= 200 && j->status <= 299)
		k = CALL_2XX;
	else if (j->status >= 300 && j->status <= 399)
		k = CALL_3XX;
	else if (j->status >= 400 && j->status <= 499)
		k = CALL_4XX;
	else if (j->status >= 500 && j->status <= 599)
		k = CALL_5XX;
	else if (j->timed_out)
		k = CALL_TIMEOUT;
	else
		k = CALL_ERROR;
	metrics_call(m, j->route_name, k, (double)j->duration_ms / 1000.0);
}

void
tally_call(metrics *m, const job *j)
{
	log_call(j);
	if (j->called)
		count_call(m, j);
}

void
tally_recorded(loop_counters *n, metrics *m, const job *j, bool recorded)
{
	if (!recorded) {
		n->lost++;
		metrics_action(m, j->route_name, ACT_LEASE_LOST);
	} else if (j->outcome == JOB_DONE) {
		n->done++;
		metrics_action(m, j->route_name, ACT_DONE);
	} else if (j->outcome == JOB_RETRY) {
		n->retry++;
		metrics_action(m, j->route_name, ACT_RETRY);
	} else if (j->outcome == JOB_PARK) {
		n->parked++;
		metrics_action(m, j->route_name, ACT_PARKED);
	} else {
		char id[24];

		snprintf(id, sizeof(id), "%lld", (long long)j->action_id);
		log_kv("lease-lost", "route", j->route_name, "action", id, LOG_END);
		n->lost++;
		metrics_action(m, j->route_name, ACT_LEASE_LOST);
	}
}

void
tally_claim(loop_counters *n, metrics *m, const conf *c, const claim_result *res)
{
	n->stale += res->stale;
	n->parked += res->parked;
	for (size_t i = 0; i < res->n_routes; i++) {
		const char *name = conf_route_at(c, i)->name;

		for (int k = 0; k < res->route_stale[i]; k++)
			metrics_action(m, name, ACT_STALE);
		for (int k = 0; k < res->route_parked[i]; k++)
			metrics_action(m, name, ACT_PARKED);
	}
}
