/* SPDX-License-Identifier: ISC */
/*
 * dropbox.c - Dropbox (webhooks of a Dropbox app)
 *
 * "X-Dropbox-Signature: <hex>", HMAC-SHA256 of the body keyed with the
 * app secret; no timestamp.  A notification only lists the accounts that
 * changed ({"list_folder": {"accounts": [...]}, "delta": {"users": [...]}})
 * and carries no id: the id is the body's hash, which a retry repeats.
 * The verification GET (?challenge=…) is answered with the challenge as
 * text/plain, before any signature (it has none), and nothing is stored.
 */
#include "fields.h"
#include "scheme.h"

#include <string.h>

static const body_mac row = {
	.header = "X-Dropbox-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
};

static int
greeting(const provider_endpoint *ep, const request_view *req, const char *method,
	 handshake_answer *ans, const char **reason)
{
	(void)ep;
	if (strcmp(method, "GET") != 0)
		return 0;
	return scheme_echo_query(req, "challenge", ans, reason);
}

static const char *const headers[] = {NULL};

const provider_ops provider_dropbox = {
	.name = "dropbox",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.greeting = greeting,
	.body_mac = &row, /* verifies, extracts and signs */
};
