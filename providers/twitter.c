/* SPDX-License-Identifier: ISC */
/*
 * twitter.c - X (Twitter) Account Activity API
 *
 * "x-twitter-webhooks-signature: sha256=<base64>", HMAC-SHA256 of the body
 * keyed with the app's consumer secret; no timestamp.  An activity body
 * ({"for_user_id", "<kind>_events": [...]}) carries no id of its own: the
 * id is the body's hash, which a retry repeats.
 *
 * The challenge-response check (CRC), a GET with ?crc_token=…, is answered
 * {"response_token":"sha256=<base64 HMAC-SHA256 of crc_token>"} keyed with
 * the first secret of the file (the current consumer secret), and nothing
 * is stored.  It proves the key, not the request: anyone may ask.
 */
#include "base64.h"
#include "fields.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static const body_mac row = {
	.header = "x-twitter-webhooks-signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_BASE64,
	.prefix = "sha256=",
};

static int
greeting(const provider_endpoint *ep, const request_view *req, const char *method,
	 handshake_answer *ans, const char **reason)
{
	char *token = NULL;
	unsigned char mac[HMAC_MAX_LEN];
	char b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)];
	int rc;

	if (strcmp(method, "GET") != 0)
		return 0;
	if ((rc = env_query_param(req, "crc_token", &token)) != 0) {
		*reason = rc > 0 ? "no crc_token" : "bad crc_token";
		return -1;
	}
	hmac_part part = {token, strlen(token)};

	rc = scheme_mac_secret(HMAC_SHA256, ep, 0, &part, 1, mac);
	free(token);
	if (rc < 0) {
		*reason = "could not compute response_token";
		return -1;
	}
	base64_encode(mac, 32, b64);
	secure_wipe(mac, sizeof(mac));
	ans->body = xasprintf("{\"response_token\":\"sha256=%s\"}\n", b64);
	return 1;
}

static const char *const headers[] = {NULL};

const provider_ops provider_twitter = {
	.name = "twitter",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.greeting = greeting,
	.body_mac = &row, /* verifies, extracts and signs */
};
