/* SPDX-License-Identifier: ISC */
/*
 * mux.c - Mux
 *
 * "Mux-Signature: t=<ts>,v1=<hex>": HMAC-SHA256 over "<t>.<body>" keyed
 * with the webhook's signing secret, 300 s window (the SDK's
 * webhooks.verifySignature).  The envelope is in the body.
 */
#include "fields.h"
#include "scheme.h"

static const timestamped_scheme scheme = {
	.header = "Mux-Signature",
	.missing = "missing Mux-Signature header",
	.sep = ',',
	.ts_key = "t",
	.sig_key = "v1",
	.no_sig = "no v1 signature in signature header",
	.joiner = '.',
};

/* {"id", "type", "object": {"type", "id"}, "created_at", "data"} */
static const env_body_fields fields = {"id", "type", "object.id", "created_at"};

static const char *const headers[] = {NULL};

const provider_ops provider_mux = {
	.name = "mux",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.timestamped = &scheme, /* verifies and signs "t=<ts>,v1=<hex>" */
	.fields = &fields,
};
