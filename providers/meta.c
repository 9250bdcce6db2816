/* SPDX-License-Identifier: ISC */
/*
 * meta.c - Meta (WhatsApp Cloud API, Messenger, Instagram, Graph API
 * webhooks)
 *
 * "X-Hub-Signature-256: sha256=<hex>", HMAC-SHA256 of the body keyed with
 * the app secret; no timestamp.  No event id is sent: the id is the body's
 * hash, which a retry of the same batch repeats.
 *
 * The subscription's verification, a GET with hub.mode=subscribe and
 * hub.challenge, is answered with the challenge as text/plain and nothing
 * is stored.  hub.verify_token is not checked: an answer gives nothing
 * away, and another app's deliveries would not verify with this app's
 * secret.
 */
#include "fields.h"
#include "scheme.h"

#include <stdlib.h>
#include <string.h>

static const body_mac row = {
	.header = "X-Hub-Signature-256",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
	.prefix = "sha256=",
	.type_field = "object",
};

static int
greeting(const provider_endpoint *ep, const request_view *req, const char *method,
	 handshake_answer *ans, const char **reason)
{
	char *mode = NULL;
	bool subscribe;

	(void)ep;
	if (strcmp(method, "GET") != 0)
		return 0;
	subscribe = env_query_param(req, "hub.mode", &mode) == 0 && strcmp(mode, "subscribe") == 0;
	free(mode);
	if (!subscribe) {
		*reason = "not hub.mode=subscribe";
		return -1;
	}
	return scheme_echo_query(req, "hub.challenge", ans, reason);
}

static const char *const headers[] = {NULL};

const provider_ops provider_meta = {
	.name = "meta",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.greeting = greeting,
	.body_mac = &row, /* verifies, extracts and signs */
};
