/* SPDX-License-Identifier: ISC */
/*
 * batch.h - the class of providers that send several events in one
 * request (Adyen's notificationItems, SendGrid's and HubSpot's arrays)
 *
 * For providers/<name>.c only.  The request is verified whole by the
 * provider's own verify; this row says where its events are and how each
 * is read.  envelope.h's envelope_split dispatches to it.
 */
#ifndef HOOKINBOX_BATCH_H
#define HOOKINBOX_BATCH_H

#include "envelope.h"
#include "fields.h"
#include "verify.h"

typedef struct batch_rows {
	/* the events' array: a dotted path in the body object, or NULL when the body is it */
	const char *items;
	/* the member of each element that is the event (Adyen's "NotificationRequestItem"); NULL:
	 * the element */
	const char *item;
	/* each event's envelope, at paths of the event (fields.h), ... */
	const env_body_fields *fields;
	/* ... or read by the provider (an id made of several fields): 0, or -1 and a static *reason
	 */
	int (*extract)(const jval *ev, envelope *env, const char **reason);
	/* the 2xx body the provider requires; NULL: any, and the intake ids are answered */
	const char *answer;
} batch_rows;

/* envelope_split for row r */
int scheme_split_batch(const batch_rows *r, const request_view *req, envelope_batch *b,
		       const char **reason);

/*
 * The events of row r in the body, one at a time, for a verifier that
 * checks each (Adyen): *pos NULL for the first call.  0 and *ev set, 1
 * after the last, -1 when an element is not an object (or lacks r->item).
 */
int batch_next_event(const batch_rows *r, const jval *items, const char **pos, jval *ev);
/* the array of events of row r in the parsed body; !present when there is none */
jval batch_items(const batch_rows *r, const jval *body);

#endif
