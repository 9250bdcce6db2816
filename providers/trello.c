/* SPDX-License-Identifier: ISC */
/*
 * trello.c - Trello webhooks
 *
 * "X-Trello-Webhook: <base64>", HMAC-SHA1 keyed with the application's
 * secret over the body followed by the callbackURL the webhook was created
 * with (the endpoint's public_url, exactly); no timestamp.  The action id
 * is in the signed body.  The HEAD request Trello sends when the webhook
 * is created is answered 200, and nothing is stored.
 *
 * Body: {"action": {"id", "type", "date", ...}, "model": {"id", ...}}
 */
#include "fields.h"
#include "scheme.h"

static const body_mac row = {
	.header = "X-Trello-Webhook",
	.alg = HMAC_SHA1,
	.enc = HMAC_BASE64,
	.url_after = true,
	.id_field = "action.id",
	.type_field = "action.type",
	.object_field = "model.id",
	.version_field = "action.date",
};

static const char *
check(const provider_endpoint *ep)
{
	return ep->public_url == NULL ? "provider trello needs public_url (the callbackURL Trello "
					"signs)"
				      : NULL;
}

static const char *const headers[] = {NULL};

const provider_ops provider_trello = {
	.name = "trello",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.check = check,
	.greeting = scheme_greet_head, /* the HEAD of webhook creation */
	.body_mac = &row,	       /* verifies, extracts and signs */
	.id_in_body = true,
};
