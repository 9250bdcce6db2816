/* SPDX-License-Identifier: ISC */
/*
 * basicauth.c - the class of providers that sign nothing and send HTTP
 * Basic credentials (scheme.h's scheme_verify_basic: Postmark, Chargebee)
 */
#include "base64.h"
#include "ct.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* user:password is at most this long once decoded */
#define BASIC_MAX 1024

int
scheme_verify_basic(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	unsigned char cred[BASIC_MAX + 3];
	bool too_long = false, match = false;
	size_t len, at = 0;
	long n;
	const char *v = scheme_header(req, "Authorization", &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing Authorization header");
	if (too_long || len < 6 || strncasecmp(v, "Basic ", 6) != 0)
		return scheme_fail(res, VERIFY_MALFORMED, "Authorization is not Basic");
	while (6 + at < len && v[6 + at] == ' ')
		at++;
	n = base64_decode(v + 6 + at, len - 6 - at, cred, sizeof(cred));
	if (n <= 0 || n > BASIC_MAX || memchr(cred, ':', (size_t)n) == NULL) {
		secure_wipe(cred, sizeof(cred));
		return scheme_fail(res, VERIFY_MALFORMED, "malformed Basic credentials");
	}
	for (size_t i = 0; i < secret_count(ep->secrets) && !match; i++) {
		size_t slen;
		const unsigned char *s = secret_get(ep->secrets, i, &slen);

		if (ct_equal(cred, (size_t)n, s, slen)) {
			match = true;
			at = i;
		}
	}
	secure_wipe(cred, sizeof(cred));
	if (!match)
		return scheme_fail(res, VERIFY_MISMATCH, "credentials mismatch");
	return scheme_pass(res, at);
}

int
scheme_sign_basic(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char *b64;

	if (in->secret_len == 0 || in->secret_len > BASIC_MAX ||
	    memchr(in->secret, ':', in->secret_len) == NULL) {
		snprintf(errbuf, errlen, "the secret is not user:password");
		return -1;
	}
	b64 = xmalloc(6 + BASE64_ENCODED_SIZE(in->secret_len));
	memcpy(b64, "Basic ", 6);
	base64_encode(in->secret, in->secret_len, b64 + 6);
	sign_add(out, "Authorization", b64);
	return 0;
}
