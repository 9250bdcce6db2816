/* SPDX-License-Identifier: ISC */
/*
 * apple.c - App Store Server Notifications V2
 *
 * The body is {"signedPayload": "<JWS>"}: ES256, its header's x5c the
 * certificate chain (leaf, intermediate, root; base64 DER), checked as
 * @apple/app-store-server-library's SignedDataVerifier does: the chain
 * verifies to Apple Root CA - G3 (ca_file, from apple.com/certificateauthority),
 * the leaf carries Apple's marker extension 1.2.840.113635.100.6.11.1 and
 * the intermediate 1.2.840.113635.100.6.2.1, and the leaf signs the JWS.
 * Any app's notifications verify so, so the payload's bundleId (in data,
 * summary or externalPurchaseToken) must be one of the secret_file's
 * lines: the app's bundle ids.  No window: Apple retries the same signed
 * payload for days.  The delivery key is the signed notificationUUID; the
 * type is notificationType, with ".subtype" when there is one.
 * hookinbox-send signs its payload (the decoded payload, a JSON object)
 * into the body with "<x5c leaf> <x5c intermediate> <x5c root> <base64
 * PKCS#8 DER P-256 key of the leaf>", the certificates as x5c carries them
 * (base64 DER).
 */
#include "base64.h"
#include "fields.h"
#include "pkey.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X5C_LEN 3 /* leaf, intermediate, root: SignedDataVerifier takes no other length */

static const char *const oids[X5C_LEN] = {"1.2.840.113635.100.6.11.1", "1.2.840.113635.100.6.2.1",
					  NULL};

/* the signedPayload JWS of the body; -1 when there is none */
static int
signed_payload(const request_view *req, jws *j)
{
	jval b = env_parse_object(req->body, req->body_len);
	jval v = env_json_path(&b, "signedPayload");
	char *tok;
	size_t len;
	int rc;

	memset(j, 0, sizeof(*j));
	if (!v.present || !env_json_text(v, &tok, &len))
		return -1;
	rc = jws_parse(tok, len, j);
	free(tok);
	return rc;
}

/* the payload's bundleId is one of the endpoint's; its index, or -1 */
static long
bundle(const provider_endpoint *ep, const jws *j)
{
	static const char *const paths[] = {"data.bundleId", "summary.bundleId",
					    "externalPurchaseToken.bundleId"};
	jval p = {.present = true, .v = j->payload};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		jval v = env_json_path(&p, paths[i]);
		char *id;
		size_t len;

		if (!v.present || !env_json_text(v, &id, &len))
			continue;
		for (size_t k = 0; k < secret_count(ep->secrets); k++) {
			size_t kl;
			const unsigned char *s = secret_get(ep->secrets, k, &kl);

			if (kl == len && memcmp(s, id, len) == 0) {
				free(id);
				return (long)k;
			}
		}
		free(id);
		return -1;
	}
	return -1;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char *der[X5C_LEN] = {NULL};
	size_t derlen[X5C_LEN], n = 0;
	jscan_value x5c, el;
	const char *pos = NULL, *why;
	char *alg = NULL;
	long idx;
	jws j;
	int rc;

	if (signed_payload(req, &j) != 0) {
		jws_release(&j);
		return scheme_fail(res, VERIFY_UNSIGNED, "body has no signedPayload JWS");
	}
	alg = jws_string(&j.header, "alg");
	if (alg == NULL || strcmp(alg, "ES256") != 0) {
		rc = scheme_fail(res, VERIFY_MISMATCH, "token algorithm not accepted");
		goto out;
	}
	rc = scheme_fail(res, VERIFY_MALFORMED, "bad x5c certificate chain");
	if (jscan_member(&j.header, "x5c", 3, &x5c) != 0)
		goto out;
	while (jscan_element(&x5c, &pos, &el) == 0) {
		char *b64;
		size_t len;
		long dl;

		if (n == X5C_LEN || jscan_string(&el, &b64, &len) != 0)
			goto out;
		der[n] = xmalloc(BASE64_DECODED_MAX(len) + 1);
		dl = base64_decode(b64, len, der[n], BASE64_DECODED_MAX(len) + 1);
		free(b64);
		if (dl <= 0)
			goto out;
		derlen[n++] = (size_t)dl;
	}
	if (n != X5C_LEN)
		goto out;
	if (pkeys_verify_chain_oids(ep->keys, (const unsigned char *const *)der, derlen, n, oids,
				    req->now, PKEY_ES256, (const unsigned char *)j.signed_part,
				    j.signed_len, j.sig, j.sig_len, &why) != 0) {
		rc = scheme_fail(res, VERIFY_MISMATCH, why);
		goto out;
	}
	if ((idx = bundle(ep, &j)) < 0)
		rc = scheme_fail(res, VERIFY_MISMATCH, "bundleId not in secret_file");
	else
		rc = scheme_pass(res, (size_t)idx);
out:
	for (size_t i = 0; i < X5C_LEN; i++)
		free(der[i]);
	free(alg);
	jws_release(&j);
	return rc;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	envelope_field type = "", sub = "";
	jval p;
	jws j;
	int rc = -1;

	(void)ep;
	if (signed_payload(req, &j) != 0)
		ENV_REFUSE("body has no signedPayload JWS");
	p = (jval){.present = true, .v = j.payload};
	if (env_need_id(env_take_json(&env->event_id, env_json_path(&p, "notificationUUID"), false,
				      &why),
			&why, reason) < 0)
		goto out;
	if (env_take_json(&type, env_json_path(&p, "notificationType"), false, &why) == 0 &&
	    env_take_json(&sub, env_json_path(&p, "subtype"), false, &why) == 0) {
		char *t = xasprintf("%s.%s", type, sub);

		env_optional(env, env_take(&env->event_type, t, strlen(t), &why), "type", &why);
		free(t);
	} else if (type[0] != '\0') {
		env_set(&env->event_type, type);
	}
	rc = 0;
out:
	jws_release(&j);
	return rc;
}

static const char *
check(const provider_endpoint *ep)
{
	if (ep->ca_file == NULL)
		return "provider apple needs ca_file (Apple Root CA - G3, PEM)";
	return NULL;
}

static int
load(provider_endpoint *ep, char *errbuf, size_t errlen)
{
	ep->keys = pkeys_new();
	return pkeys_load_ca_file(ep->keys, ep->ca_file, errbuf, errlen);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	pkey_secret ps;
	char *x5c = NULL, *header, *payload, *tok;
	size_t n;

	if (!env_parse_object(in->body, in->body_len).present) {
		snprintf(errbuf, errlen, "the App Store's payload must be a JSON object");
		return -1;
	}
	if (pkey_secret_parse(in->secret, in->secret_len, &ps, errbuf, errlen) < 0)
		return -1;
	for (n = 0; n < X5C_LEN && ps.words[n] != NULL; n++) {
		char *q = env_json_quote(ps.words[n]);
		char *list = xasprintf("%s%s%s", x5c != NULL ? x5c : "", x5c != NULL ? "," : "", q);

		free(q);
		free(x5c);
		x5c = list;
	}
	if (n != X5C_LEN || ps.words[n] != NULL) {
		free(x5c);
		pkey_secret_release(&ps);
		snprintf(errbuf, errlen,
			 "the secret is not \"<x5c leaf> <x5c intermediate> <x5c root> <base64 "
			 "PKCS#8 DER key>\"");
		return -1;
	}
	header = xasprintf("{\"alg\":\"ES256\",\"x5c\":[%s]}", x5c);
	free(x5c);
	payload = xmalloc(in->body_len + 1);
	memcpy(payload, in->body, in->body_len);
	payload[in->body_len] = '\0';
	tok = jws_sign(&ps, PKEY_ES256, header, payload, errbuf, errlen);
	free(header);
	free(payload);
	pkey_secret_release(&ps);
	if (tok == NULL)
		return -1;
	out->body = (unsigned char *)xasprintf("{\"signedPayload\":\"%s\"}", tok);
	out->body_len = strlen((const char *)out->body);
	free(tok);
	return 0;
}

static const char *const headers[] = {NULL};

const provider_ops provider_apple = {
	.name = "apple",
	.klass = "ES256 JWS with an x5c chain to a root",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.load = load,
	.extract = extract,
	.sign = sign,
	.id_in_body = true,
};
