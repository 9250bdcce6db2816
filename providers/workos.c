/* SPDX-License-Identifier: ISC */
/*
 * workos.c - WorkOS
 *
 * "WorkOS-Signature: t=<ms>, v1=<hex>": HMAC-SHA256 over "<t>.<body>" with
 * t in **milliseconds**, keyed with the endpoint's secret, 180 s window
 * (the SDK's webhooks.constructEvent default).  The envelope is in the
 * body.
 */
#include "fields.h"
#include "scheme.h"

static const timestamped_scheme scheme = {
	.header = "WorkOS-Signature",
	.missing = "missing WorkOS-Signature header",
	.sep = ',',
	.ts_key = "t",
	.sig_key = "v1",
	.no_sig = "no v1 signature in signature header",
	.joiner = '.',
	.ms = true,
	.spaced = true,
};

/* {"id", "event", "data": {"id"}, "created_at"} */
static const env_body_fields fields = {"id", "event", "data.id", "created_at"};

static const char *const headers[] = {NULL};

const provider_ops provider_workos = {
	.name = "workos",
	.tolerance = 180,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.timestamped = &scheme, /* verifies and signs "t=<ms>, v1=<hex>" */
	.fields = &fields,
};
