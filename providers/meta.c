/* SPDX-License-Identifier: ISC */
/*
 * meta.c - Meta (WhatsApp Cloud API, Messenger, Instagram, Graph API
 * webhooks)
 *
 * "X-Hub-Signature-256: sha256=<hex>", HMAC-SHA256 of the body keyed with
 * the app secret; no timestamp.  No event id is sent: the id is the body's
 * hash, which a retry of the same batch repeats.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-Hub-Signature-256",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.prefix = "sha256=",
	.type_field = "object",
};

static const char *const headers[] = {NULL};

const provider_ops provider_meta = {
	.name = "meta",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
