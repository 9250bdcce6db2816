/* SPDX-License-Identifier: ISC */
/*
 * woocommerce.c - WooCommerce
 *
 * "X-WC-Webhook-Signature: <base64>", HMAC-SHA256 of the body keyed with
 * the webhook's secret; no timestamp.  The delivery id,
 * X-WC-Webhook-Delivery-ID, is not signed.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-WC-Webhook-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_BASE64,
	.id_header = "X-WC-Webhook-Delivery-ID",
	.type_header = "X-WC-Webhook-Topic",
	.object_field = "id",
};

static const char *const headers[] = {"X-WC-Webhook-Delivery-ID",
				      "X-WC-Webhook-Topic",
				      "X-WC-Webhook-Resource",
				      "X-WC-Webhook-Event",
				      "X-WC-Webhook-ID",
				      "X-WC-Webhook-Source",
				      NULL};

const provider_ops provider_woocommerce = {
	.name = "woocommerce",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
