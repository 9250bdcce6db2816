/* SPDX-License-Identifier: ISC */
/*
 * intercom.c - Intercom
 *
 * "X-Hub-Signature: sha1=<hex>", HMAC-SHA1 of the body keyed with the
 * app's client secret; no timestamp.  The notification id is in the
 * signed body.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-Hub-Signature",
	.alg = HMAC_SHA1,
	.enc = HMAC_HEX,
	.prefix = "sha1=",
	.id_field = "id",
	.type_field = "topic",
	.object_field = "data.item.id",
	.version_field = "created_at",
};

static const char *const headers[] = {NULL};

const provider_ops provider_intercom = {
	.name = "intercom",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
