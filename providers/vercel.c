/* SPDX-License-Identifier: ISC */
/*
 * vercel.c - Vercel
 *
 * "x-vercel-signature: <hex>", HMAC-SHA1 of the body keyed with the
 * integration's client secret (or the webhook's secret); no timestamp.
 * The event id is in the signed body.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "x-vercel-signature",
	.alg = HMAC_SHA1,
	.enc = HMAC_HEX,
	.id_field = "id",
	.type_field = "type",
	.version_field = "createdAt",
};

static const char *const headers[] = {NULL};

const provider_ops provider_vercel = {
	.name = "vercel",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
