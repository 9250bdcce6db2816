/* SPDX-License-Identifier: ISC */
/*
 * plaid.c - Plaid webhooks
 *
 * "Plaid-Verification: <JWT>", ES256, whose header's kid names one of
 * Plaid's webhook verification keys (as /webhook_verification_key/get
 * returns them); its claims hold "iat", no more than 5 minutes old, and
 * "request_body_sha256", the hex SHA-256 of the body as sent.  The keys
 * are the endpoint's secret_file, one JWK a line (`jq -c .key` of Plaid's
 * answer; several lines while Plaid rotates): a key with expired_at set is
 * not used.  The body carries no event id: the id is the body's hash,
 * covered by the token's digest.  hookinbox-send signs with
 * "<kid> <base64 PKCS#8 DER P-256 private key>".
 */
#include "ct.h"
#include "fields.h"
#include "hex.h"
#include "pkey.h"
#include "scheme.h"
#include "sha256.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
claims(const provider_endpoint *ep, const request_view *req, const jws *j, verify_result *res)
{
	unsigned char d[SHA256_LEN];
	char want[2 * SHA256_LEN + 1], *got;
	int64_t iat;
	verify_status st;
	bool same;

	if (jws_int(&j->payload, "iat", &iat) != 0)
		return scheme_fail(res, VERIFY_MALFORMED, "token has no iat");
	if ((st = scheme_window(ep, req, iat)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	if (sha256_digest(req->body, req->body_len, d) != 0)
		return scheme_fail(res, VERIFY_MISMATCH, "digest failed");
	hex_encode(d, sizeof(d), want);
	if ((got = jws_string(&j->payload, "request_body_sha256")) == NULL)
		return scheme_fail(res, VERIFY_MALFORMED, "token has no request_body_sha256");
	same = ct_equal(got, strlen(got), want, strlen(want));
	free(got);
	if (!same)
		return scheme_fail(res, VERIFY_MISMATCH, "body digest mismatch");
	return scheme_pass(res, 0);
}

static const jwt_scheme scheme = {
	.header = "Plaid-Verification",
	.missing = "missing Plaid-Verification header",
	.alg = PKEY_ES256,
	.alg_name = "ES256",
	.claims = claims,
};

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_jwt(&scheme, ep, req, res);
}

static int
load(provider_endpoint *ep, char *errbuf, size_t errlen)
{
	char msg[128];

	ep->keys = pkeys_new();
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t len;
		const unsigned char *s = secret_get(ep->secrets, i, &len);

		if (pkeys_add_jwks(ep->keys, (const char *)s, len, msg, sizeof(msg)) < 0) {
			snprintf(errbuf, errlen, "secret_file line %zu: %s (one JWK a line)", i + 1,
				 msg);
			return -1;
		}
	}
	if (pkeys_count(ep->keys) == 0) {
		snprintf(errbuf, errlen,
			 "secret_file holds no EC P-256 JWK with a kid and no expired_at");
		return -1;
	}
	return 0;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	unsigned char d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1], *payload;
	int rc;

	if (sha256_digest(in->body, in->body_len, d) != 0) {
		snprintf(errbuf, errlen, "could not compute digest");
		return -1;
	}
	hex_encode(d, sizeof(d), hex);
	payload = xasprintf("{\"iat\":%lld,\"request_body_sha256\":\"%s\"}",
			    (long long)in->timestamp, hex);
	rc = scheme_sign_jwt(&scheme, in, payload, out, errbuf, errlen);
	free(payload);
	return rc;
}

/* {"webhook_type", "webhook_code", "item_id", ...}: no event id */
static const env_body_fields fields = {NULL, "webhook_code", "item_id", NULL};

static const char *const headers[] = {NULL};

const provider_ops provider_plaid = {
	.name = "plaid",
	.klass = "ES256 JWT, body digest",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = verify,
	.load = load,
	.fields = &fields,
	.sign = sign,
	.id_in_body = true,
};
