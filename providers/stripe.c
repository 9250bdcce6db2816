/* SPDX-License-Identifier: ISC */
/*
 * stripe.c - Stripe
 *
 * "Stripe-Signature: t=<ts>,v1=<hex>[,v1=...][,v0=...]": HMAC-SHA256 over
 * "<t>.<body>" keyed with the whole "whsec_..." string, 300 s window (the
 * SDK's).  The envelope is in the body.
 */
#include "fields.h"
#include "scheme.h"

static const timestamped_scheme scheme = {
	.header = "Stripe-Signature",
	.missing = "missing Stripe-Signature header",
	.sep = ',',
	.ts_key = "t",
	.sig_key = "v1",
	.no_sig = "no v1 signature in signature header",
	.joiner = '.',
};

/* {"id", "type", "created", "data": {"object": {"id"}}} */
static const env_body_fields fields = {"id", "type", "data.object.id", "created"};

static const char *const headers[] = {NULL};

const provider_ops provider_stripe = {
	.name = "stripe",
	.tolerance = 300,
	.headers = headers,
	.id_in_body = true,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.timestamped = &scheme, /* verifies and signs "t=<ts>,v1=<hex>" */
	.fields = &fields,
};
