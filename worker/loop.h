/* SPDX-License-Identifier: ISC */
/*
 * loop.h - the worker's engine: fan out, claim, call, record
 *
 * main.c holds the options, the signals and the summary; the engine gets
 * everything it may use in a loop_ctl passed to loop_run(), the way
 * pg_receivewal hands a StreamCtl to ReceiveXlogStream: its configuration,
 * its limits, and the callbacks through which it learns that it should stop
 * or reload.  It owns its database connection and its call engine.
 */
#ifndef HOOKINBOX_LOOP_H
#define HOOKINBOX_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "conf.h"

/* what a run did, for the summary and the metrics file */
typedef struct loop_counters {
	long fanned_out, unrouted, actions, sent, done, retry, parked, stale, lost;
	long renewed;	 /* leases renewed before a call */
	long released;	 /* claims handed back uncalled (stopping, --max-runtime) */
	long reconnects; /* --loop: database connections made again */
	int64_t fanout_us, claim_us, record_us; /* time in the database, by step */
} loop_counters;

typedef struct loop_ctl {
	/* in */
	conf *c;		  /* the configuration; a reload replaces it (out: the caller
				   * frees the one left here) */
	bool loop;		  /* keep polling (--loop); else drain what is due and return */
	long max_runtime_s;	  /* end within this many seconds; 0 = no limit */
	int concurrency;	  /* calls in flight at once; 0 = [worker] concurrency */
	int batch;		  /* rows per fan-out and claim; 0 = [worker] batch */
	const char *metrics_file; /* NULL = [worker] metrics_file */
	bool (*stop_requested)(void *arg);   /* polled: stop claiming, finish, return */
	bool (*reload_requested)(void *arg); /* --loop, between sweeps: load c again */
	void *arg;

	/* out */
	loop_counters n;
} loop_ctl;

/*
 * Run until done (--once), the deadline, or stop_requested.  Writes the
 * metrics file at the end (and every 15 s with --loop).  Returns EX_OK;
 * EX_TEMPFAIL when the database is unavailable (without --loop; a looping
 * worker reconnects with backoff instead); EX_CONFIG when the database
 * refuses the worker for good (role, grants, database name, schema too
 * old), after one line saying so.
 */
int loop_run(loop_ctl *ctl);

#endif
