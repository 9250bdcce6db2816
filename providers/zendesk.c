/* SPDX-License-Identifier: ISC */
/*
 * zendesk.c - Zendesk webhooks
 *
 * "X-Zendesk-Webhook-Signature": base64 HMAC-SHA256 over the
 * "X-Zendesk-Webhook-Signature-Timestamp" header (RFC 3339) followed by the
 * body, keyed with the webhook's signing secret.  Zendesk states no window;
 * 300 s is ours (tolerance = changes it).  The invocation id,
 * x-zendesk-webhook-invocation-id, is not signed but the timestamp bounds
 * its replay.
 */
#include "fields.h"
#include "scheme.h"

static const stamp_mac scheme = {
	.sig_headers = {"X-Zendesk-Webhook-Signature", NULL},
	.ts_header = "X-Zendesk-Webhook-Signature-Timestamp",
	.id_header = "x-zendesk-webhook-invocation-id",
	.layout = "tb",
	.enc = HMAC_BASE64,
	.missing = "missing X-Zendesk-Webhook-Signature or its timestamp header",
};

/* {"type", "detail": {"id", ...}, "time", ...}; the id is the invocation id header */
static const env_body_fields fields = {NULL, "type", "detail.id", "time"};

static const char *const headers[] = {"x-zendesk-webhook-invocation-id",
				      "X-Zendesk-Webhook-Signature-Timestamp", NULL};

const provider_ops provider_zendesk = {
	.name = "zendesk",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed, /* bounded by the signed timestamp */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.stamp_mac = &scheme, /* verifies, signs and, with fields, extracts */
	.fields = &fields,
};
