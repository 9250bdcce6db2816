/* SPDX-License-Identifier: ISC */
/*
 * calendly.c - Calendly (webhook subscriptions with a signing key)
 *
 * "Calendly-Webhook-Signature: t=<ts>,v1=<hex>": HMAC-SHA256 over
 * "<t>.<body>" keyed with the signing key, 180 s window (Calendly's
 * documented three minutes).  No event id is sent: the id is the body's
 * hash, which a retry of the same event repeats.
 */
#include "fields.h"
#include "scheme.h"

static const timestamped_scheme scheme = {
	.header = "Calendly-Webhook-Signature",
	.missing = "missing Calendly-Webhook-Signature header",
	.sep = ',',
	.ts_key = "t",
	.sig_key = "v1",
	.no_sig = "no v1 signature in signature header",
	.joiner = '.',
};

/* {"event", "created_at", "payload": {"uri", ...}} */
static const env_body_fields fields = {NULL, "event", "payload.uri", "created_at"};

static const char *const headers[] = {NULL};

const provider_ops provider_calendly = {
	.name = "calendly",
	.tolerance = 180,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.timestamped = &scheme, /* verifies and signs "t=<ts>,v1=<hex>" */
	.fields = &fields,
};
