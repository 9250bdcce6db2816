/* SPDX-License-Identifier: ISC */
/*
 * telnyx.c - Telnyx (API v2 webhooks)
 *
 * "telnyx-signature-ed25519: <base64>" and "telnyx-timestamp": Ed25519
 * over "<timestamp>|<body>", checked with the public key as Mission
 * Control shows it (base64), 300 s window (the SDK's webhooks.verify).
 * The event id is in the signed body.  hookinbox-send signs with the
 * private seed in base64.
 */
#include "fields.h"
#include "scheme.h"

static const ed25519_scheme scheme = {
	.sig_header = "telnyx-signature-ed25519",
	.ts_header = "telnyx-timestamp",
	.missing = "missing telnyx-signature-ed25519 or telnyx-timestamp header",
	.sig_enc = HMAC_BASE64,
	.key_enc = HMAC_BASE64,
	.joiner = "|",
};

/* {"data": {"event_type", "id", "occurred_at", "payload": {"id", ...}}} */
static const env_body_fields fields = {"data.id", "data.event_type", "data.payload.id",
				       "data.occurred_at"};

static const char *const headers[] = {"telnyx-timestamp", NULL};

const provider_ops provider_telnyx = {
	.name = "telnyx",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.ed25519 = &scheme, /* verifies and signs */
	.fields = &fields,
};
