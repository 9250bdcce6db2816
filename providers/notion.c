/* SPDX-License-Identifier: ISC */
/*
 * notion.c - Notion
 *
 * "X-Notion-Signature: sha256=<hex>", HMAC-SHA256 of the body keyed with
 * the subscription's verification_token; no timestamp.  The event id is in
 * the signed body.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-Notion-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.prefix = "sha256=",
	.id_field = "id",
	.type_field = "type",
	.object_field = "entity.id",
	.version_field = "timestamp",
};

static const char *const headers[] = {NULL};

const provider_ops provider_notion = {
	.name = "notion",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
