/* SPDX-License-Identifier: ISC */
/*
 * hmac.c - the generic HMAC scheme for the long tail, configured per
 * endpoint (hmac_conf in endpoint.h)
 *
 * ep->hmac.header carries [prefix]<hex|base64> of the HMAC (sha1, sha256,
 * sha512) of the body, or of what signed_content spells out (template.h):
 * the body with a timestamp header (windowed by the endpoint's tolerance,
 * 300 s by default), other headers, the method or the URL.  Each envelope
 * field comes from a header or a dotted JSON path.  An id read from a
 * header is not signed unless signed_content signs that header.  The
 * configuration is a body_mac row (scheme.h), the class the providers
 * that are only such a row share.
 */
#include "fields.h"
#include "scheme.h"

#include <stdio.h>

static body_mac
row_of(const hmac_conf *h)
{
	return (body_mac){
		.header = h->header,
		.alg = h->alg,
		.enc = h->enc,
		.prefix = h->prefix,
		.id_header = h->id_header,
		.id_field = h->id_field,
		.type_header = h->type_header,
		.type_field = h->type_field,
		.object_field = h->object_field,
		.version_field = h->version_field,
		.signed_content = h->signed_content,
		.ts_header = h->timestamp_header,
		.ts_ms = h->ts_unit == HMAC_MILLISECONDS,
	};
}

static const char *
check(const provider_endpoint *ep)
{
	body_mac m = row_of(&ep->hmac);

	if (ep->hmac.header == NULL)
		return "provider hmac needs header";
	if (ep->hmac.id_header == NULL && ep->hmac.id_field == NULL)
		return "provider hmac needs id_header or id_field";
	return scheme_body_mac_check(&m, ep);
}

static bool
id_signed(const provider_endpoint *ep)
{
	body_mac m = row_of(&ep->hmac);

	return scheme_body_mac_id_signed(&m);
}

static bool
sends_version(const provider_endpoint *ep)
{
	return ep->hmac.version_field != NULL;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	body_mac m = row_of(&ep->hmac);

	return scheme_verify_body_mac(&m, ep, req, res);
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	body_mac m = row_of(&ep->hmac);

	return scheme_extract_body_mac(&m, req, env, reason);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	body_mac m;

	if (in->hmac == NULL) {
		snprintf(errbuf, errlen, "hmac signing needs a header name");
		return -1;
	}
	m = row_of(in->hmac);
	return scheme_sign_body_mac(&m, in, out, errbuf, errlen);
}

static const char *const headers[] = {NULL};

const provider_ops provider_hmac = {
	.name = "hmac",
	.tolerance = 300, /* when signed_content signs {timestamp} */
	.headers = headers,
	.id_signed = id_signed,
	.sends_version = sends_version,
	.replay = REPLAY_BODY,
	.check = check,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
