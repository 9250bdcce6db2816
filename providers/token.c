/* SPDX-License-Identifier: ISC */
/*
 * token.c - the class of providers that sign nothing and send the secret
 * itself in one header (scheme.h's token_scheme: GitLab, Okta)
 */
#include "ct.h"
#include "scheme.h"
#include "xalloc.h"

#include <string.h>

int
scheme_verify_token(const token_scheme *sc, const provider_endpoint *ep, const request_view *req,
		    verify_result *res)
{
	bool too_long = false;
	size_t len;
	const char *v = scheme_header(req, sc->header, &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (too_long)
		return scheme_fail(res, VERIFY_MALFORMED, sc->too_long);
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t klen;
		const unsigned char *key = secret_get(ep->secrets, i, &klen);

		if (ct_equal(key, klen, v, len))
			return scheme_pass(res, i);
	}
	return scheme_fail(res, VERIFY_MISMATCH, sc->mismatch);
}

int
scheme_sign_token(const token_scheme *sc, const sign_input *in, sign_output *out, char *errbuf,
		  size_t errlen)
{
	char *tok = xmalloc(in->secret_len + 1);

	(void)errbuf;
	(void)errlen;
	memcpy(tok, in->secret, in->secret_len);
	tok[in->secret_len] = '\0';
	sign_add(out, sc->header, tok);
	sign_add_opt(out, sc->id_header, in->event_id);
	sign_add_opt(out, sc->type_header, in->event_type);
	return 0;
}
