/* SPDX-License-Identifier: ISC */
/*
 * sign.c - the signature headers a provider would send with a body: the
 * dispatcher (each provider signs in providers/<name>.c)
 */
#include "sign.h"

#include "hmac.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
sign_headers(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	const provider_ops *ops;

	out->n = 0;
	out->body = NULL;
	out->body_len = 0;
	if ((unsigned)in->provider >= PROVIDER__COUNT) {
		snprintf(errbuf, errlen, "unknown provider");
		return -1;
	}
	ops = provider_get(in->provider);
	if (ops->sign != NULL)
		return ops->sign(in, out, errbuf, errlen);
	if (ops->body_mac != NULL)
		return scheme_sign_body_mac(ops->body_mac, in, out, errbuf, errlen);
	if (ops->stamp_mac != NULL)
		return scheme_sign_stamp_mac(ops->stamp_mac, in, out, errbuf, errlen);
	if (ops->v0 != NULL)
		return scheme_sign_v0(ops->v0, in, out, errbuf, errlen);
	if (ops->ed25519 != NULL)
		return scheme_sign_ed25519(ops->ed25519, in, out, errbuf, errlen);
	if (ops->token != NULL)
		return scheme_sign_token(ops->token, in, out, errbuf, errlen);
	return scheme_sign_timestamped(ops->timestamped, in, out, errbuf, errlen);
}

int
sign_delivery_headers(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	sign_input std = *in;

	std.provider = PROVIDER_STANDARD;
	return sign_headers(&std, out, errbuf, errlen);
}

void
sign_release(sign_output *out)
{
	for (size_t i = 0; i < out->n; i++) {
		/* a gitlab token is the secret itself */
		secure_wipe(out->h[i].value, strlen(out->h[i].value));
		free(out->h[i].value);
	}
	out->n = 0;
	/* graph's body carries its clientState */
	if (out->body != NULL)
		secure_wipe(out->body, out->body_len);
	free(out->body);
	out->body = NULL;
	out->body_len = 0;
}

char *
sign_json_body_url(provider p, const char *url, const unsigned char *body, size_t len)
{
	const provider_ops *ops = provider_get(p);

	return ops->json_body_url != NULL ? ops->json_body_url(url, body, len) : xstrdup(url);
}

bool
sign_form_bodies(provider p)
{
	return provider_get(p)->form_bodies;
}

bool
sign_id_in_body(provider p)
{
	return provider_get(p)->id_in_body;
}
