/* SPDX-License-Identifier: ISC */
/*
 * postmark.c - Postmark
 *
 * Postmark signs nothing: the webhook URL carries Basic credentials
 * (https://user:password@host/...), sent as "Authorization: Basic ...",
 * and the secret file holds "user:password" (basicauth.c).  No event id is
 * sent: the id is the body's hash, which a retry repeats.
 */
#include "fields.h"
#include "scheme.h"

/* {"RecordType": "Delivery", "MessageID", "DeliveredAt", ...} */
static const env_body_fields fields = {NULL, "RecordType", "MessageID", NULL};

static const char *const headers[] = {NULL};

const provider_ops provider_postmark = {
	.name = "postmark",
	.klass = "Basic credentials",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned, /* nothing is signed */
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = scheme_verify_basic,
	.fields = &fields,
	.sign = scheme_sign_basic,
};
