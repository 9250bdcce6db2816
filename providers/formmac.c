/* SPDX-License-Identifier: ISC */
/*
 * formmac.c - the class of schemes that sign a URL and the sorted form
 * parameters (scheme.h): Twilio, Mandrill
 */
#include "base64.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hmac_part *
scheme_form_parts(const char *url, const form *params, size_t *n)
{
	hmac_part *parts = xcalloc(1 + 2 * params->n, sizeof(*parts));

	parts[0].data = url;
	parts[0].len = strlen(url);
	for (size_t i = 0; i < params->n; i++) {
		parts[1 + 2 * i].data = params->params[i].key;
		parts[1 + 2 * i].len = params->params[i].key_len;
		parts[2 + 2 * i].data = params->params[i].value;
		parts[2 + 2 * i].len = params->params[i].value_len;
	}
	*n = 1 + 2 * params->n;
	return parts;
}

int
sign_form_b64(const sign_input *in, const char *url, bool body_params, char *b64, char *errbuf,
	      size_t errlen)
{
	form params = {NULL, 0};
	hmac_part *parts = NULL;
	size_t n;
	int rc = -1;

	if (body_params) {
		if (form_parse((const char *)in->body, in->body_len, &params) < 0) {
			snprintf(errbuf, errlen, "too many form parameters");
			goto out;
		}
		form_sort_unique(&params);
	}
	parts = scheme_form_parts(url, &params, &n);
	if (sign_mac_b64(HMAC_SHA1, in->secret, in->secret_len, parts, n, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		goto out;
	}
	rc = 0;
out:
	free(parts);
	form_release(&params);
	return rc;
}
