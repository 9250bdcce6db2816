/* SPDX-License-Identifier: ISC */
/*
 * gocardless.c - GoCardless
 *
 * "Webhook-Signature: <hex>", HMAC-SHA256 of the body keyed with the
 * webhook endpoint's secret; no timestamp.  A webhook is a batch
 * ({"events": [...]}), taken whole as one delivery keyed by the body's
 * hash: a retry of the batch sends the same bytes.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "Webhook-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
};

static const char *const headers[] = {NULL};

const provider_ops provider_gocardless = {
	.name = "gocardless",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
