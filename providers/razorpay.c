/* SPDX-License-Identifier: ISC */
/*
 * razorpay.c - Razorpay
 *
 * "X-Razorpay-Signature: <hex>", HMAC-SHA256 of the body keyed with the
 * webhook secret (the SDK's validateWebhookSignature); no timestamp.  The
 * delivery id, x-razorpay-event-id, is not signed.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-Razorpay-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.id_header = "X-Razorpay-Event-Id",
	.type_field = "event",
	.version_field = "created_at",
};

static const char *const headers[] = {"X-Razorpay-Event-Id", NULL};

const provider_ops provider_razorpay = {
	.name = "razorpay",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
