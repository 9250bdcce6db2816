/* SPDX-License-Identifier: ISC */
/*
 * typeform.c - Typeform
 *
 * "Typeform-Signature: sha256=<base64>", HMAC-SHA256 of the body keyed
 * with the webhook's secret; no timestamp.  The event id is in the signed
 * body.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "Typeform-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_BASE64,
	.prefix = "sha256=",
	.id_field = "event_id",
	.type_field = "event_type",
	.object_field = "form_response.form_id",
	.version_field = "form_response.submitted_at",
};

static const char *const headers[] = {NULL};

const provider_ops provider_typeform = {
	.name = "typeform",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
