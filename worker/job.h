/* SPDX-License-Identifier: ISC */
/*
 * job.h - one claimed action on its way through the worker
 *
 * claim.c makes jobs (claim_run), deliver.c or sqlfn.c carries them out and
 * fills the result, record.c writes the outcome back under the lease token.
 * A job owns every string and the body it points to; route is borrowed from
 * the configuration and outlives the job.
 */
#ifndef HOOKINBOX_JOB_H
#define HOOKINBOX_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"

#define JOB_TOKEN_LEN 36 /* a uuid in text form */
#define JOB_ERROR_MAX 256
#define JOB_REF_MAX 201

typedef enum job_outcome {
	JOB_DONE,  /* 2xx, or the SQL handler committed */
	JOB_RETRY, /* pending again after delay_s */
	JOB_PARK,  /* parked for review */
	JOB_LOST   /* nothing to record: the lease was lost or already recorded */
} job_outcome;

typedef struct job {
	/* from the claim */
	int64_t action_id;
	char token[JOB_TOKEN_LEN + 1]; /* lease token of the claim */
	char *route_name;
	const route_conf *route; /* NULL when the route is no longer configured */
	char *idem_key;
	int attempt; /* this attempt, counted at claim time (1-based) */
	int max_attempts;
	double age_s;		/* seconds since the action's retry window opened */
	int64_t lease_until_ms; /* the lease ends no earlier than this (clock_mono ms) */
	char *event_id;
	char *event_type;    /* may be NULL */
	char *object_id;     /* may be NULL */
	char *content_type;  /* may be NULL */
	unsigned char *body; /* NULL when the body was purged */
	size_t body_len;
	bool probe;	  /* the one call that probes a route whose breaker is open */
	bool unknown;	  /* the last attempt's outcome is unknown (timeout or reset
			   * after sending, or its worker died mid-call) */
	bool reconciling; /* this call asks the route's reconcile_url, not sends */

	/* the result of the call */
	long status;		   /* HTTP status; 0 when none was received */
	bool called;		   /* a call was started (HTTP or SQL handler) */
	bool transport_error;	   /* no usable HTTP answer (timeout, connection...) */
	bool timed_out;		   /* of which: the route's timeout ran out */
	bool permanent;		   /* SQL handler: raised SQLSTATE class ZP, park at once */
	double retry_after_s;	   /* Retry-After in seconds, or -1 */
	char error[JOB_ERROR_MAX]; /* short, never a body or a secret */
	char ref[JOB_REF_MAX];	   /* short response reference */
	int64_t duration_ms;

	/* what record.c writes */
	job_outcome outcome;
	double delay_s; /* JOB_RETRY: seconds until due */
} job;

/* frees j and everything it owns; accepts NULL */
void job_free(job *j);

#endif
