/* SPDX-License-Identifier: ISC */
/*
 * checkout.c - Checkout.com
 *
 * "Cko-Signature: <hex>", HMAC-SHA256 of the body keyed with the webhook's
 * secret key; no timestamp.  The event id is in the signed body.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "Cko-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.id_field = "id",
	.type_field = "type",
	.object_field = "data.id",
	.version_field = "created_on",
};

static const char *const headers[] = {NULL};

const provider_ops provider_checkout = {
	.name = "checkout",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
