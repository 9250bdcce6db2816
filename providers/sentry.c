/* SPDX-License-Identifier: ISC */
/*
 * sentry.c - Sentry integration platform
 *
 * "Sentry-Hook-Signature: <hex>", HMAC-SHA256 of the body keyed with the
 * integration's client secret; no timestamp.  The delivery id, Request-ID,
 * is not signed.
 */
#include "scheme.h"

static const body_mac row = {
	.header = "Sentry-Hook-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.id_header = "Request-ID",
	.type_header = "Sentry-Hook-Resource",
};

static const char *const headers[] = {"Request-ID", "Sentry-Hook-Resource", "Sentry-Hook-Timestamp",
				      NULL};

const provider_ops provider_sentry = {
	.name = "sentry",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.body_mac = &row, /* verifies, extracts and signs */
};
