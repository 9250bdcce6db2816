/* SPDX-License-Identifier: ISC */
/*
 * batch.c - splitting a verified batch into its events (batch.h)
 *
 * Each event keeps its exact bytes (the slice of the body that holds it)
 * and its own envelope.  A batch is taken whole or not at all: one event
 * without a usable id refuses the request, so that a provider's retry, or
 * its dashboard, shows the problem instead of part of a batch vanishing.
 */
#include "batch.h"

#include "xalloc.h"

#include <string.h>

jval
batch_items(const batch_rows *r, const jval *body)
{
	jval items = r->items != NULL ? env_json_path(body, r->items) : *body;

	if (!items.present || items.v.type != JSCAN_ARRAY)
		return env_no_value;
	return items;
}

int
batch_next_event(const batch_rows *r, const jval *items, const char **pos, jval *ev)
{
	jval el = {.present = true};

	if (jscan_element(&items->v, pos, &el.v) != 0)
		return 1;
	if (r->item != NULL) {
		el = env_json_path(&el, r->item);
		if (!el.present)
			return -1;
	}
	if (el.v.type != JSCAN_OBJECT)
		return -1;
	*ev = el;
	return 0;
}

int
scheme_split_batch(const batch_rows *r, const request_view *req, envelope_batch *b,
		   const char **reason)
{
	jval body = env_parse_json(req->body, req->body_len);
	jval items = batch_items(r, &body), ev;
	const char *pos = NULL;
	int rc;

	if (!items.present)
		return *reason = "body is not a batch of events", -1;
	while ((rc = batch_next_event(r, &items, &pos, &ev)) == 0) {
		batch_event *e;

		if (b->n == ENVELOPE_BATCH_MAX)
			return *reason = "too many events in one batch", -1;
		if (b->n == b->cap) {
			b->cap = b->cap == 0 ? 8 : 2 * b->cap;
			b->ev = xrealloc(b->ev, b->cap * sizeof(*b->ev));
		}
		e = &b->ev[b->n++];
		memset(e, 0, sizeof(*e));
		e->body = (const unsigned char *)ev.v.p;
		e->body_len = ev.v.len;
		if (r->extract != NULL ? r->extract(&ev, &e->env, reason) != 0
				       : env_extract_object(&ev, e->body, e->body_len, r->fields,
							    &e->env, reason) != 0)
			return -1;
	}
	if (rc < 0)
		return *reason = "an event of the batch is not an object", -1;
	if (b->n == 0)
		return *reason = "empty batch", -1;
	return 0;
}
