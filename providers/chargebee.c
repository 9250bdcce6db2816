/* SPDX-License-Identifier: ISC */
/*
 * chargebee.c - Chargebee
 *
 * Chargebee signs nothing: the webhook is configured with Basic
 * credentials, sent as "Authorization: Basic ...", and the secret file
 * holds "user:password" (basicauth.c).  The event id is in the body.
 */
#include "fields.h"
#include "scheme.h"

/* {"id": "ev_...", "occurred_at", "event_type", "content": {...}} */
static const env_body_fields fields = {"id", "event_type", NULL, "occurred_at"};

static const char *const headers[] = {NULL};

const provider_ops provider_chargebee = {
	.name = "chargebee",
	.klass = "Basic credentials",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned, /* nothing is signed */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = scheme_verify_basic,
	.fields = &fields,
	.sign = scheme_sign_basic,
};
