/* SPDX-License-Identifier: ISC */
/*
 * adyen_platform.c - Adyen for Platforms (balance platform, transfers, management webhooks)
 *
 * "HmacSignature: <base64>", HMAC-SHA256 of the body keyed with the HMAC
 * key as the Customer Area shows it, hex (the key is its bytes: the
 * library's HmacValidator.validateHMACSignature); no timestamp.  These
 * webhooks carry no event id: the id is the body's hash, which Adyen's
 * retry of the same notification repeats.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "HmacSignature",
	.alg = HMAC_SHA256,
	.enc = HMAC_BASE64,
	.hex_key = true,
	.type_field = "type",
	.object_field = "data.id",
	.version_field = "timestamp",
};

static const char *const headers[] = {NULL};

const provider_ops provider_adyen_platform = {
	.name = "adyen_platform",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
