/* SPDX-License-Identifier: ISC */
/*
 * box.c - Box (webhooks v2)
 *
 * "box-signature-primary" and "box-signature-secondary": base64
 * HMAC-SHA256 over the body followed by the "box-delivery-timestamp"
 * header (RFC 3339), each keyed with one of the app's two keys; the
 * secret file holds both (Box's own rotation: either may match), and the
 * 10-minute window Box's SDKs check.  The delivery id, box-delivery-id, is
 * not signed but the timestamp bounds its replay.
 */
#include "fields.h"
#include "scheme.h"

static const stamp_mac scheme = {
	.sig_headers = {"box-signature-primary", "box-signature-secondary"},
	.ts_header = "box-delivery-timestamp",
	.id_header = "box-delivery-id",
	.layout = "bt",
	.enc = HMAC_BASE64,
	.missing = "missing box-signature-primary or box-delivery-timestamp header",
};

/* {"trigger", "source": {"id", ...}, "created_at", ...}; the id is box-delivery-id */
static const env_body_fields fields = {NULL, "trigger", "source.id", "created_at"};

static const char *const headers[] = {"box-delivery-id", "box-delivery-timestamp", NULL};

const provider_ops provider_box = {
	.name = "box",
	.tolerance = 600,
	.headers = headers,
	.id_signed = provider_id_signed, /* bounded by the signed timestamp */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.stamp_mac = &scheme, /* verifies, signs and, with fields, extracts */
	.fields = &fields,
};
