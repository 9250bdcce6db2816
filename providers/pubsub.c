/* SPDX-License-Identifier: ISC */
/*
 * pubsub.c - Google Cloud Pub/Sub push subscriptions with authentication
 *
 * "Authorization: Bearer <JWT>", an RS256 OIDC token Google signs for the
 * subscription's service account, checked as google-auth-library's
 * verifyIdToken does: a kid of Google's keys (key_file: the JWKS of
 * https://www.googleapis.com/oauth2/v3/certs, refreshed off the request
 * path), iss accounts.google.com, aud the endpoint's audience, iat and exp
 * with 5 minutes of clock skew.  Anyone can create a push subscription
 * whose token names any URL as audience, so the token's email (with
 * email_verified) must be one of the secret_file's lines: the service
 * accounts allowed to push.  The token does not cover the body: the
 * message id (message.messageId) is deduplicated on the body too.
 * hookinbox-send signs with "<kid> <email> <base64 PKCS#8 DER RSA key>",
 * the URL as audience.
 */
#include "ct.h"
#include "fields.h"
#include "pkey.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
claims(const provider_endpoint *ep, const request_view *req, const jws *j, verify_result *res)
{
	int64_t iat, exp, skew = ep->tolerance > 0 ? ep->tolerance : 300;
	char *iss = jws_string(&j->payload, "iss"), *aud = jws_string(&j->payload, "aud");
	char *email = jws_string(&j->payload, "email");
	jscan_value ev;
	int rc = scheme_fail(res, VERIFY_MISMATCH, "token email not allowed");

	if (jws_int(&j->payload, "iat", &iat) != 0 || jws_int(&j->payload, "exp", &exp) != 0) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "token has no iat or exp");
		goto out;
	}
	/* google-auth-library's maxExpiry: no token lives longer than a day */
	if (exp < iat || exp - iat > 86400) {
		rc = scheme_fail(res, VERIFY_MISMATCH, "token lifetime over a day");
		goto out;
	}
	if (req->now > exp + skew) {
		rc = scheme_fail(res, VERIFY_STALE, "token expired");
		goto out;
	}
	if (iat > req->now + skew) {
		rc = scheme_fail(res, VERIFY_FUTURE, "token issued in the future");
		goto out;
	}
	if (iss == NULL || (strcmp(iss, "https://accounts.google.com") != 0 &&
			    strcmp(iss, "accounts.google.com") != 0)) {
		rc = scheme_fail(res, VERIFY_MISMATCH, "token issuer is not Google");
		goto out;
	}
	if (aud == NULL || ep->audience == NULL || strcmp(aud, ep->audience) != 0) {
		rc = scheme_fail(res, VERIFY_MISMATCH, "token audience mismatch");
		goto out;
	}
	if (email == NULL || jscan_member(&j->payload, "email_verified", 14, &ev) != 0 ||
	    ev.type != JSCAN_TRUE)
		goto out;
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t len;
		const unsigned char *s = secret_get(ep->secrets, i, &len);

		if (ct_equal(s, len, email, strlen(email))) {
			rc = scheme_pass(res, i);
			break;
		}
	}
out:
	free(iss);
	free(aud);
	free(email);
	return rc;
}

static const jwt_scheme scheme = {
	.header = "Authorization",
	.prefix = "Bearer ",
	.missing = "missing Authorization header",
	.alg = PKEY_RS256,
	.alg_name = "RS256",
	.claims = claims,
};

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	return scheme_verify_jwt(&scheme, ep, req, res);
}

static const char *
check(const provider_endpoint *ep)
{
	if (ep->key_file == NULL || ep->audience == NULL)
		return "provider pubsub needs key_file (Google's JWKS) and audience";
	return NULL;
}

static int
load(provider_endpoint *ep, char *errbuf, size_t errlen)
{
	ep->keys = pkeys_new();
	return pkeys_load_jwks_file(ep->keys, ep->key_file, errbuf, errlen);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	pkey_secret ps;
	char *aud, *email, *payload;
	int rc;

	if (pkey_secret_parse(in->secret, in->secret_len, &ps, errbuf, errlen) < 0)
		return -1;
	if (ps.words[1] == NULL || in->url == NULL) {
		pkey_secret_release(&ps);
		snprintf(errbuf, errlen,
			 "the secret is not \"<kid> <email> <base64 PKCS#8 DER key>\" or no URL");
		return -1;
	}
	aud = env_json_quote(in->url);
	email = env_json_quote(ps.words[1]);
	pkey_secret_release(&ps);
	payload = xasprintf("{\"aud\":%s,\"azp\":\"1\",\"email\":%s,\"email_verified\":true,"
			    "\"exp\":%lld,\"iat\":%lld,\"iss\":\"https://accounts.google.com\","
			    "\"sub\":\"1\"}",
			    aud, email, (long long)in->timestamp + 3600, (long long)in->timestamp);
	rc = scheme_sign_jwt(&scheme, in, payload, out, errbuf, errlen);
	free(aud);
	free(email);
	free(payload);
	return rc;
}

/* {"message": {"data", "messageId", "publishTime", "attributes"}, "subscription"} */
static const env_body_fields fields = {"message.messageId", "subscription", NULL, NULL};

static const char *const headers[] = {NULL};

const provider_ops provider_pubsub = {
	.name = "pubsub",
	.klass = "RS256 bearer JWT",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.load = load,
	.fields = &fields,
	.sign = sign,
	.id_in_body = true,
};
