/* SPDX-License-Identifier: ISC */
/*
 * discord.c - Discord interactions (the Interactions Endpoint URL)
 *
 * "X-Signature-Ed25519: <hex>" and "X-Signature-Timestamp": Ed25519 over
 * "<timestamp><body>", checked with the application's public key as the
 * Developer Portal shows it (64 hex digits), as the discord-interactions
 * verifyKey does; a bad signature is 401, which Discord's own checks of
 * the endpoint require.  No window (none in the SDK): the interaction id
 * is in the signed body.  A PING (type 1) is answered {"type":1} and not
 * stored.  hookinbox-send signs with the private seed in hex.
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <string.h>

static const ed25519_scheme scheme = {
	.sig_header = "X-Signature-Ed25519",
	.ts_header = "X-Signature-Timestamp",
	.missing = "missing X-Signature-Ed25519 or X-Signature-Timestamp header",
	.sig_enc = HMAC_HEX,
	.key_enc = HMAC_HEX,
	.joiner = "",
};

static int
handshake(const provider_endpoint *ep, const request_view *req, size_t secret_index,
	  handshake_answer *ans, const char **reason)
{
	jval body = env_parse_object(req->body, req->body_len);
	jval type = env_json_path(&body, "type");

	(void)ep;
	(void)secret_index;
	(void)reason;
	if (!type.present || type.v.type != JSCAN_NUMBER || type.v.len != 1 || type.v.p[0] != '1')
		return 0;
	ans->body = xstrdup("{\"type\":1}\n");
	return 1;
}

/* {"id", "type", "data": {"id", "name"}, ...}: the id is the interaction's */
static const env_body_fields fields = {"id", "data.name", "data.id", NULL};

static const char *const headers[] = {NULL};

const provider_ops provider_discord = {
	.name = "discord",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.ed25519 = &scheme, /* verifies and signs */
	.handshake = handshake,
	.fields = &fields,
};
