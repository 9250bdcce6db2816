/* SPDX-License-Identifier: ISC */
/*
 * webflow.c - Webflow (webhooks created through the API or an app)
 *
 * "x-webflow-signature: <hex>" and "x-webflow-timestamp" (milliseconds),
 * HMAC-SHA256 over "<ts>:<body>" keyed with the webhook's secret (the v0
 * class, bare), 300 s window as Webflow documents.  No event id is sent:
 * the id is the body's hash, which a retry repeats.
 */
#include "fields.h"
#include "scheme.h"

static const v0_scheme scheme = {
	.sig_header = "x-webflow-signature",
	.ts_header = "x-webflow-timestamp",
	.missing = "missing x-webflow-signature or x-webflow-timestamp header",
	.bare = true,
	.ms = true,
};

/* {"triggerType": "form_submission", "payload": {"id", ...}} */
static const env_body_fields fields = {NULL, "triggerType", "payload.id", NULL};

static const char *const headers[] = {"x-webflow-timestamp", NULL};

const provider_ops provider_webflow = {
	.name = "webflow",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.v0 = &scheme, /* verifies and signs */
	.fields = &fields,
};
