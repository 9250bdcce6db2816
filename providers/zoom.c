/* SPDX-License-Identifier: ISC */
/*
 * zoom.c - Zoom (Marketplace app event subscriptions)
 *
 * "x-zm-signature: v0=<hex>" and "x-zm-request-timestamp", HMAC-SHA256
 * over "v0:<ts>:<body>" keyed with the app's secret token (Slack's class),
 * 300 s window.  endpoint.url_validation is answered with its plainToken
 * and encryptedToken, the hex HMAC-SHA256 of plainToken keyed with the
 * secret that verified it, and not stored.  No event id is sent: the id is
 * the body's hash, which a retry of the same event repeats.
 */
#include "fields.h"
#include "hex.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static const v0_scheme scheme = {
	.sig_header = "x-zm-signature",
	.ts_header = "x-zm-request-timestamp",
	.missing = "missing x-zm-signature or x-zm-request-timestamp header",
};

static int
handshake(const provider_endpoint *ep, const request_view *req, size_t secret_index,
	  handshake_answer *ans, const char **reason)
{
	jval body = env_parse_object(req->body, req->body_len);
	envelope_field token;
	char *q;
	const char *why = NULL;
	unsigned char mac[HMAC_MAX_LEN];
	char hex[2 * HMAC_MAX_LEN + 1];

	if (!env_json_is(env_json_path(&body, "event"), "endpoint.url_validation"))
		return 0;
	if (env_take_json(&token, env_json_path(&body, "payload.plainToken"), false, &why) != 0) {
		*reason = "bad plainToken";
		return -1;
	}
	hmac_part part = {token, strlen(token)};

	if (scheme_mac_secret(HMAC_SHA256, ep, secret_index, &part, 1, mac) < 0) {
		*reason = "could not compute encryptedToken";
		return -1;
	}
	hex_encode(mac, 32, hex);
	secure_wipe(mac, sizeof(mac));
	q = env_json_quote(token);
	ans->body = xasprintf("{\"plainToken\":%s,\"encryptedToken\":\"%s\"}\n", q, hex);
	free(q);
	return 1;
}

/* {"event", "event_ts" (ms), "payload": {"account_id", "object": {"id", ...}}} */
static const env_body_fields fields = {NULL, "event", "payload.object.id", "event_ts"};

static const char *const headers[] = {"x-zm-trackingid", "x-zm-request-timestamp", NULL};

const provider_ops provider_zoom = {
	.name = "zoom",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.v0 = &scheme, /* verifies and signs */
	.handshake = handshake,
	.fields = &fields,
};
