/* SPDX-License-Identifier: ISC */
/*
 * deliver.h - the downstream calls, concurrently over libcurl multi
 *
 * The only module that includes libcurl.  A call POSTs the event's exact
 * stored body with its Idempotency-Key, event type and id, the attempt
 * number and, when the route has a secret, Standard Webhooks signature
 * headers.  Only http and https, no redirects, peer verification on, the
 * route's timeout, the response kept to a short reference (the header
 * response_ref_header names, by default X-Request-Id).  A job marked
 * reconciling instead GETs the route's reconcile_url with the idempotency
 * key in it: does the downstream have the effect?
 */
#ifndef HOOKINBOX_DELIVER_H
#define HOOKINBOX_DELIVER_H

#include <stddef.h>

#include "job.h"

typedef struct deliver deliver;

/* curl_global_init; once at start, before any thread (0 or -1) */
int deliver_global_init(void);
void deliver_global_cleanup(void);

/* an engine running at most concurrency calls at a time; free with deliver_free */
deliver *deliver_new(int concurrency);
/* aborts the calls still running and frees their jobs; accepts NULL */
void deliver_free(deliver *d);

/*
 * Start the call for j, whose route has a url.  The engine owns j until
 * deliver_poll hands it back.  Returns 0, or -1 when the call could not
 * even be set up: then j is still the caller's, with j->error set.
 */
int deliver_start(deliver *d, job *j);

size_t deliver_inflight(const deliver *d);

/*
 * Run the calls, waiting at most timeout_ms for activity, and hand back up
 * to cap finished jobs in done[] with status, retry_after_s, error, ref and
 * duration_ms filled.  Returns how many.
 */
size_t deliver_poll(deliver *d, int timeout_ms, job **done, size_t cap);

/*
 * Wait up to timeout_ms for progress on the calls or for fd (the database
 * socket) to become readable, and move the calls along; collect finished
 * ones with deliver_poll(d, 0, ...).
 */
void deliver_wait(deliver *d, int fd, int timeout_ms);

#endif
