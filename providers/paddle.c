/* SPDX-License-Identifier: ISC */
/*
 * paddle.c - Paddle Billing
 *
 * "Paddle-Signature: ts=<ts>;h1=<hex>[;h1=...]": HMAC-SHA256 over
 * "<ts>:<body>", the SDK's 5 s window.  The envelope is in the body.
 */
#include "fields.h"
#include "scheme.h"

static const timestamped_scheme scheme = {
	.header = "Paddle-Signature",
	.missing = "missing Paddle-Signature header",
	.sep = ';',
	.ts_key = "ts",
	.sig_key = "h1",
	.no_sig = "no h1 signature in signature header",
	.joiner = ':',
};

/* {"event_id", "event_type", "occurred_at", "data": {"id"}} */
static const env_body_fields fields = {"event_id", "event_type", "data.id", "occurred_at"};

static const char *const headers[] = {"Paddle-Version", NULL};

const provider_ops provider_paddle = {
	.name = "paddle",
	.tolerance = 5,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.timestamped = &scheme, /* verifies and signs "ts=<ts>;h1=<hex>" */
	.fields = &fields,
};
