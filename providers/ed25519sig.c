/* SPDX-License-Identifier: ISC */
/*
 * ed25519sig.c - the class of schemes signing "<ts><joiner><body>" with
 * Ed25519, signature and timestamp in two headers (scheme.h's
 * ed25519_scheme: Discord, Telnyx)
 */
#include "base64.h"
#include "ed25519.h"
#include "hex.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s in enc into out (at most cap bytes); the length, or -1 */
static long
decode(hmac_encoding enc, const char *s, size_t len, unsigned char *out, size_t cap)
{
	return enc == HMAC_HEX ? hex_decode(s, len, out, cap) : base64_decode(s, len, out, cap);
}

static void
encode(hmac_encoding enc, const unsigned char *in, size_t len, char *out)
{
	if (enc == HMAC_HEX)
		hex_encode(in, len, out);
	else
		base64_encode(in, len, out);
}

int
scheme_verify_ed25519(const ed25519_scheme *sc, const provider_endpoint *ep,
		      const request_view *req, verify_result *res)
{
	unsigned char sig[ED25519_SIG_LEN + 3], *msg;
	bool too_long = false;
	size_t len, tslen, msglen;
	int64_t ts;
	verify_status st;
	int rc;
	const char *v = scheme_header(req, sc->sig_header, &len, &too_long);
	const char *tsv = scheme_header(req, sc->ts_header, &tslen, &too_long);

	if (v == NULL || tsv == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (too_long || decode(sc->sig_enc, v, len, sig, sizeof(sig)) != ED25519_SIG_LEN)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (scheme_timestamp(tsv, tslen, &ts) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad timestamp header");
	/* a provider without a window (Discord) gets one only from the endpoint */
	if ((ep->tolerance > 0 || provider_get(ep->provider)->tolerance > 0) &&
	    (st = scheme_window(ep, req, ts)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	/* the timestamp as it was sent: it is signed as text */
	msg = scheme_ts_message(tsv, tslen, sc->joiner, req->body, req->body_len, &msglen);
	rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char pub[ED25519_KEY_LEN + 3];
		size_t klen;
		const unsigned char *k = secret_get(ep->secrets, i, &klen);

		if (decode(sc->key_enc, (const char *)k, klen, pub, sizeof(pub)) != ED25519_KEY_LEN)
			continue; /* not a public key: matches nothing */
		if (ed25519_verify(pub, msg, msglen, sig)) {
			rc = scheme_pass(res, i);
			break;
		}
	}
	free(msg);
	return rc;
}

int
scheme_sign_ed25519(const ed25519_scheme *sc, const sign_input *in, sign_output *out, char *errbuf,
		    size_t errlen)
{
	unsigned char seed[2 * ED25519_KEY_LEN + 3], sig[ED25519_SIG_LEN], *msg;
	char ts[32], *text = xmalloc(2 * ED25519_SIG_LEN + 1);
	size_t msglen;
	long n = decode(sc->key_enc, (const char *)in->secret, in->secret_len, seed, sizeof(seed));
	int rc;

	if (n != ED25519_KEY_LEN && n != 2 * ED25519_KEY_LEN) {
		secure_wipe(seed, sizeof(seed));
		free(text);
		snprintf(errbuf, errlen, "the secret is not an Ed25519 private key (%s)",
			 sc->key_enc == HMAC_HEX ? "hex" : "base64");
		return -1;
	}
	snprintf(ts, sizeof(ts), "%lld", (long long)in->timestamp);
	msg = scheme_ts_message(ts, strlen(ts), sc->joiner, in->body, in->body_len, &msglen);
	rc = ed25519_sign(seed, msg, msglen, sig);
	secure_wipe(seed, sizeof(seed));
	free(msg);
	if (rc < 0) {
		free(text);
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	encode(sc->sig_enc, sig, sizeof(sig), text);
	sign_add(out, sc->sig_header, text);
	sign_add(out, sc->ts_header, xstrdup(ts));
	return 0;
}
