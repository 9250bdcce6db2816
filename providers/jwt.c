/* SPDX-License-Identifier: ISC */
/*
 * jwt.c - the class of schemes sending a signed JWT in a header, checked
 * with the provider's published keys (pkey.h's jwt_scheme: Plaid's
 * Plaid-Verification, Pub/Sub's Authorization: Bearer)
 */
#include "fields.h"
#include "pkey.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
scheme_verify_jwt(const jwt_scheme *sc, const provider_endpoint *ep, const request_view *req,
		  verify_result *res)
{
	bool too_long = false;
	size_t len, plen = sc->prefix != NULL ? strlen(sc->prefix) : 0;
	const char *v = scheme_header(req, sc->header, &len, &too_long);
	char *alg;
	bool alg_ok;
	jws j;
	int rc;

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (too_long || len < plen || (plen > 0 && strncasecmp(v, sc->prefix, plen) != 0))
		return scheme_fail(res, VERIFY_MALFORMED, "malformed token");
	if (jws_parse(v + plen, len - plen, &j) != 0) {
		jws_release(&j);
		return scheme_fail(res, VERIFY_MALFORMED, "malformed token");
	}
	/* the alg is the scheme's, never the token's choice ("none", HS256) */
	alg = jws_string(&j.header, "alg");
	alg_ok = alg != NULL && strcmp(alg, sc->alg_name) == 0;
	free(alg);
	if (!alg_ok)
		rc = scheme_fail(res, VERIFY_MISMATCH, "token algorithm not accepted");
	else if (!jws_verify_kid(ep->keys, &j, sc->alg))
		rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
	else
		rc = sc->claims(ep, req, &j, res);
	jws_release(&j);
	return rc;
}

int
scheme_sign_jwt(const jwt_scheme *sc, const sign_input *in, const char *payload, sign_output *out,
		char *errbuf, size_t errlen)
{
	pkey_secret ps;
	char *header, *tok, *kid;

	if (pkey_secret_parse(in->secret, in->secret_len, &ps, errbuf, errlen) < 0)
		return -1;
	if (ps.words[0] == NULL) {
		pkey_secret_release(&ps);
		snprintf(errbuf, errlen, "the secret is not \"<kid> <base64 PKCS#8 DER key>\"");
		return -1;
	}
	kid = env_json_quote(ps.words[0]);
	header = xasprintf("{\"alg\":\"%s\",\"kid\":%s,\"typ\":\"JWT\"}", sc->alg_name, kid);
	free(kid);
	tok = jws_sign(&ps, sc->alg, header, payload, errbuf, errlen);
	free(header);
	pkey_secret_release(&ps);
	if (tok == NULL)
		return -1;
	if (sc->prefix != NULL) {
		char *t = xasprintf("%s%s", sc->prefix, tok);

		free(tok);
		tok = t;
	}
	sign_add(out, sc->header, tok);
	return 0;
}
