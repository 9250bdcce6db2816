/* SPDX-License-Identifier: ISC */
/*
 * pagerduty.c - PagerDuty (v3 webhooks)
 *
 * "X-PagerDuty-Signature: v1=<hex>[,v1=<hex>...]" (one per secret during
 * rotation), HMAC-SHA256 of the body; no timestamp.  The event id is in the
 * signed body.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-PagerDuty-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.prefix = "v1=",
	.list_sep = ',',
	.id_field = "event.id",
	.type_field = "event.event_type",
	.object_field = "event.data.id",
	.version_field = "event.occurred_at",
};

static const char *const headers[] = {"X-Webhook-Id", "X-Webhook-Subscription", NULL};

const provider_ops provider_pagerduty = {
	.name = "pagerduty",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
