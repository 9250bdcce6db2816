/* SPDX-License-Identifier: ISC */
/*
 * batchin.h - a verified request that carries several events (Adyen,
 * SendGrid, HubSpot: envelope.h's batches)
 *
 * Each event is stored as its own delivery under its own delivery key, all
 * in one accept_batch() call (one transaction), before the one answer: a
 * redelivered batch is a duplicate event by event, and a batch that
 * overlaps an earlier one stores only its new events.  One event that
 * cannot be stored refuses the whole batch (400) and nothing is stored.
 */
#ifndef HOOKINBOX_BATCHIN_H
#define HOOKINBOX_BATCHIN_H

#include <stdint.h>

#include "conf.h"
#include "store.h"
#include "verify.h"

typedef struct batchin_result {
	int status;	    /* 200, 400 or 503 */
	const char *what;   /* accepted, duplicate, review, rejected or error */
	const char *reason; /* static text for a refusal or an error */
	int64_t first_id;   /* the first event's intake id; -1 when nothing was stored */
	char *answer;	    /* the body of a 200 (the caller frees it) */
	char *note;	    /* "batch: 3 events, 2 new" and envelope notes; caller frees */
} batchin_result;

/*
 * Split the verified request rv of endpoint ep into its events, store them
 * with the kept headers headers_json (one JSON object, shared by every
 * event) and fill *r.
 */
void batchin_store(store *st, const endpoint_conf *ep, const request_view *rv,
		   const char *headers_json, batchin_result *r);

#endif
