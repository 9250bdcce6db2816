/* SPDX-License-Identifier: ISC */
/*
 * bitbucket.c - Bitbucket Cloud
 *
 * "X-Hub-Signature: sha256=<hex>", HMAC-SHA256 of the body keyed with the
 * webhook's secret; no timestamp.  The delivery id, X-Request-UUID, is not
 * signed.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "X-Hub-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.prefix = "sha256=",
	.id_header = "X-Request-UUID",
	.type_header = "X-Event-Key",
};

static const char *const headers[] = {"X-Request-UUID", "X-Event-Key", "X-Hook-UUID",
				      "X-Attempt-Number", NULL};

const provider_ops provider_bitbucket = {
	.name = "bitbucket",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
