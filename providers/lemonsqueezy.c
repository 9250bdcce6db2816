/* SPDX-License-Identifier: ISC */
/*
 * lemonsqueezy.c - Lemon Squeezy
 *
 * "X-Signature: <hex>", HMAC-SHA256 of the body keyed with the webhook's
 * signing secret; no timestamp.  No event id is sent: the id is the
 * body's hash, which a retry of the same event repeats.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.type_header = "X-Event-Name",
	.object_field = "data.id",
};

static const char *const headers[] = {"X-Event-Name", NULL};

const provider_ops provider_lemonsqueezy = {
	.name = "lemonsqueezy",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
