/* SPDX-License-Identifier: ISC */
/*
 * hmac.c - the generic HMAC scheme for the long tail, configured per
 * endpoint (hmac_conf in conf.h)
 *
 * ep->hmac.header carries [prefix]<hex|base64> of the HMAC (sha1, sha256,
 * sha512) of the body; no timestamp.  Each envelope field comes from a
 * header or a dotted JSON path.  An id read from a header is not signed.
 */
#include "base64.h"
#include "fields.h"
#include "hex.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

static const char *
check(const endpoint_conf *ep)
{
	if (ep->hmac.header == NULL)
		return "provider hmac needs header";
	if (ep->hmac.id_header == NULL && ep->hmac.id_field == NULL)
		return "provider hmac needs id_header or id_field";
	return NULL;
}

static bool
id_signed(const endpoint_conf *ep)
{
	return ep->hmac.id_header == NULL;
}

static bool
sends_version(const endpoint_conf *ep)
{
	return ep->hmac.version_field != NULL;
}

static int
verify(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	const hmac_conf *h = &ep->hmac;
	size_t len, plen = h->prefix != NULL ? strlen(h->prefix) : 0, maclen = hmac_len(h->alg);
	bool too_long = false;
	unsigned char want[HMAC_MAX_LEN + 3];
	long n;
	const char *v;

	if (h->header == NULL)
		return scheme_fail(res, VERIFY_MISMATCH,
				   "endpoint has no signature header configured");
	v = scheme_header(req, h->header, &len, &too_long);
	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing signature header");
	if (too_long)
		return scheme_fail(res, VERIFY_MALFORMED, "signature header too long");
	if (plen > 0) {
		if (len < plen || strncmp(v, h->prefix, plen) != 0)
			return scheme_fail(res, VERIFY_MALFORMED,
					   "signature header lacks the configured prefix");
		v += plen;
		len -= plen;
	}
	if (h->enc == HMAC_HEX)
		n = hex_decode(v, len, want, sizeof(want));
	else
		n = base64_decode(v, len, want, sizeof(want));
	if (n < 0 || (size_t)n != maclen)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	hmac_part part = {req->body, req->body_len};

	return scheme_match_secrets(h->alg, ep, &part, 1, want, maclen, res);
}

static int
extract(const endpoint_conf *ep, const request_view *req, envelope *env, const char **reason)
{
	const hmac_conf *h = &ep->hmac;
	const char *why = NULL;
	jval body = env_no_value;
	const jval *b = &body;
	int rc = 1;

	/* the body is read only when a field comes from it */
	if (h->id_field != NULL || h->type_field != NULL || h->object_field != NULL ||
	    h->version_field != NULL)
		body = env_body(req, env);
	if (h->id_header != NULL)
		rc = env_take_header(&env->event_id, req, h->id_header, &why);
	if (rc > 0 && h->id_field != NULL) {
		if (!b->present)
			return *reason = "body is not a JSON object", -1;
		rc = env_take_json(&env->event_id, env_json_path(b, h->id_field), true, &why);
	}
	if (env_need_id(rc, &why, reason) < 0)
		return -1;
	rc = 1;
	if (h->type_header != NULL)
		rc = env_take_header(&env->event_type, req, h->type_header, &why);
	if (rc > 0 && h->type_field != NULL)
		rc = env_take_json(&env->event_type, env_json_path(b, h->type_field), false, &why);
	env_optional(env, rc, "type", &why);
	if (h->object_field != NULL)
		env_optional(env,
			     env_take_json(&env->object_id, env_json_path(b, h->object_field), true,
					   &why),
			     "object id", &why);
	if (h->version_field != NULL)
		env_optional(env, env_take_version(env, env_json_path(b, h->version_field)),
			     "version", &env_version_why);
	return 0;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	const hmac_conf *h = in->hmac;
	char mac[BASE64_ENCODED_SIZE(HMAC_MAX_LEN) > 2 * HMAC_MAX_LEN + 1
			 ? BASE64_ENCODED_SIZE(HMAC_MAX_LEN)
			 : 2 * HMAC_MAX_LEN + 1];
	hmac_part body = {in->body, in->body_len};
	int rc;

	if (h == NULL || h->header == NULL) {
		snprintf(errbuf, errlen, "hmac signing needs a header name");
		return -1;
	}
	if (h->enc == HMAC_HEX)
		rc = sign_mac_hex(h->alg, in, &body, 1, mac);
	else
		rc = sign_mac_b64(h->alg, in->secret, in->secret_len, &body, 1, mac);
	if (rc < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, h->header, xasprintf("%s%s", h->prefix != NULL ? h->prefix : "", mac));
	sign_add_opt(out, h->id_header, in->event_id);
	sign_add_opt(out, h->type_header, in->event_type);
	return 0;
}

static const char *const headers[] = {NULL};

const provider_ops provider_hmac = {
	.name = "hmac",
	.tolerance = 0,
	.headers = headers,
	.id_signed = id_signed,
	.sends_version = sends_version,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
