/* SPDX-License-Identifier: ISC */
/*
 * asana.c - Asana webhooks
 *
 * "X-Hook-Signature: <hex>", HMAC-SHA256 of the body keyed with the
 * webhook's secret; no timestamp.  A delivery is a batch
 * ({"events": [...]}) with no id: the id is the body's hash, which a retry
 * repeats.
 *
 * When the webhook is created Asana POSTs a handshake carrying
 * X-Hook-Secret and expects it echoed back in the answer's X-Hook-Secret
 * header.  That request is signed by nothing, so it is answered before any
 * body is read, stores nothing and never sets a key: the operator copies
 * the secret into secret_file (docs/providers.md), and only deliveries
 * signed with a secret of that file are stored.
 */
#include "fields.h"
#include "scheme.h"
#include "xalloc.h"

#include <string.h>

static const body_mac row = {
	.header = "X-Hook-Signature",
	.alg = HMAC_SHA256,
	.enc = HMAC_HEX,
};

static int
greeting(const provider_endpoint *ep, const request_view *req, const char *method,
	 handshake_answer *ans, const char **reason)
{
	bool too_long = false;
	size_t len;
	const char *v = scheme_header(req, "X-Hook-Secret", &len, &too_long);

	(void)ep;
	if (strcmp(method, "POST") != 0 || v == NULL)
		return 0;
	if (too_long || len == 0) {
		*reason = "bad X-Hook-Secret";
		return -1;
	}
	ans->echo_header = "X-Hook-Secret";
	ans->echo_value = xstrdup(v);
	return 1;
}

static const char *const headers[] = {NULL};

const provider_ops provider_asana = {
	.name = "asana",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.greeting = greeting,
	.body_mac = &row, /* verifies, extracts and signs */
};
