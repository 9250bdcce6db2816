/* SPDX-License-Identifier: ISC */
/*
 * batchin.c - a verified request that carries several events: split,
 * stored in one transaction, answered once (batchin.h)
 */
#include "batchin.h"

#include "dynbuf.h"
#include "envelope.h"
#include "xalloc.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {"events":[{"id":N,"duplicate":false},...]}: the intake id of each event, in order */
static char *
ids_answer(const store_outcome *out, size_t n)
{
	dynbuf b;
	char one[96];

	dynbuf_init(&b, SIZE_MAX);
	dynbuf_xadd(&b, "{\"events\":[", 11);
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(one, sizeof(one), "%s{\"id\":%" PRId64 ",\"duplicate\":%s%s}",
				   i > 0 ? "," : "", out[i].id, out[i].duplicate ? "true" : "false",
				   out[i].held ? ",\"review\":true" : "");

		dynbuf_xadd(&b, one, (size_t)len);
	}
	dynbuf_xadd(&b, "]}\n", 3);
	return dynbuf_detach(&b, NULL);
}

void
batchin_store(store *st, const endpoint_conf *ep, const request_view *rv, const char *headers_json,
	      batchin_result *r)
{
	envelope_batch b;
	store_delivery *d;
	store_outcome *out;
	size_t fresh = 0, held = 0;
	const char *reason;
	const char *answer = envelope_batch_answer(&ep->pe);

	*r = (batchin_result){.status = 400, .what = "rejected", .first_id = -1};
	if (envelope_split(&ep->pe, rv, &b, &reason) != 0) {
		r->reason = reason;
		envelope_batch_release(&b);
		return;
	}
	d = xcalloc(b.n, sizeof(*d));
	out = xcalloc(b.n, sizeof(*out));
	for (size_t i = 0; i < b.n; i++) {
		const envelope *env = &b.ev[i].env;

		d[i] = (store_delivery){
			.endpoint = ep->name,
			.provider = provider_name(ep->pe.provider),
			.account = ep->account,
			.environment = ep->environment,
			.event_id = env->event_id,
			.event_type = envelope_or_null(env->event_type),
			.object_id = envelope_or_null(env->object_id),
			.version = env->has_version ? &env->version : NULL,
			.headers_json = headers_json,
			.body = b.ev[i].body,
			.body_len = b.ev[i].body_len,
			/* each event's id is in the signed body */
			.body_dedup = !provider_endpoint_id_signed(&ep->pe),
			.note = env->note,
		};
	}
	if (store_accept_many(st, d, b.n, out) != 0) {
		*r = (batchin_result){.status = 503,
				      .what = "error",
				      .reason = "storage unavailable",
				      .first_id = -1};
	} else {
		for (size_t i = 0; i < b.n; i++) {
			fresh += !out[i].duplicate;
			held += out[i].held;
		}
		r->status = 200;
		r->what = held > 0 ? "review" : fresh > 0 ? "accepted" : "duplicate";
		r->reason = NULL;
		r->first_id = out[0].id;
		r->answer = answer != NULL ? xasprintf("%s", answer) : ids_answer(out, b.n);
		/* counts and envelope notes: static texts and numbers, safe to log */
		r->note = xasprintf("batch: %zu events, %zu new%s%s", b.n, fresh,
				    b.ev[0].env.note != NULL ? "; " : "",
				    b.ev[0].env.note != NULL ? b.ev[0].env.note : "");
	}
	free(out);
	free(d);
	envelope_batch_release(&b);
}
