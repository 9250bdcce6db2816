/* SPDX-License-Identifier: ISC */
/*
 * paypal.c - PayPal REST webhooks
 *
 * PAYPAL-TRANSMISSION-SIG, base64 SHA256withRSA (PAYPAL-AUTH-ALGO) over
 * "<transmission id>|<transmission time>|<webhook id>|<CRC32 of the body,
 * unsigned decimal>", checked with the certificate at PAYPAL-CERT-URL, as
 * PayPal's SDKs verify offline.  The webhook id (the dashboard's "Webhook
 * ID") is the secret: secret_file holds it, several lines while two
 * webhooks overlap.  The certificate must be on api.paypal.com,
 * api-m.paypal.com or their sandbox hosts under /v1/notifications/certs/,
 * cached in cert_cache and chained to ca_file (pkey.h's cert_scheme).
 * CRC32 is no cryptographic digest: a captured signature covers any body
 * of the same CRC32, so the transmission time must be within 5 minutes
 * (each retry is a new transmission, signed anew) and the event id (body
 * "id") is deduplicated on the body too.  hookinbox-send signs with
 * "<cert URL> <webhook id> <base64 PKCS#8 DER RSA key>".
 */
#include "base64.h"
#include "fields.h"
#include "pkey.h"
#include "rfc3339.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* IEEE 802.3 CRC-32, as zlib's crc32() */
static uint32_t
crc32_of(const unsigned char *p, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;

	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
	}
	return c ^ 0xFFFFFFFFu;
}

static const char *const hosts[] = {"api.paypal.com", "api-m.paypal.com", "api.sandbox.paypal.com",
				    "api-m.sandbox.paypal.com", NULL};

static bool
url_ok(const char *url, size_t len)
{
	return cert_url_pinned(url, len, hosts, "/v1/notifications/certs/");
}

static const cert_scheme certs = {.url_ok = url_ok};

/* "<id>|<time>|<webhook id>|<crc32>", malloc'd */
static char *
message(const char *id, size_t idlen, const char *tm, size_t tmlen, const unsigned char *wh,
	size_t whlen, const unsigned char *body, size_t blen)
{
	return xasprintf("%.*s|%.*s|%.*s|%lu", (int)idlen, id, (int)tmlen, tm, (int)whlen,
			 (const char *)wh, (unsigned long)crc32_of(body, blen));
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	bool too_long = false;
	size_t idlen, tmlen, siglen, urllen, alglen;
	const char *id = scheme_header(req, "PAYPAL-TRANSMISSION-ID", &idlen, &too_long);
	const char *tm = scheme_header(req, "PAYPAL-TRANSMISSION-TIME", &tmlen, &too_long);
	const char *sigv = scheme_header(req, "PAYPAL-TRANSMISSION-SIG", &siglen, &too_long);
	const char *url = scheme_header(req, "PAYPAL-CERT-URL", &urllen, &too_long);
	const char *alg = scheme_header(req, "PAYPAL-AUTH-ALGO", &alglen, &too_long);
	unsigned char sig[1024];
	char tmbuf[64];
	int64_t us;
	long n;
	verify_status st;
	int rc;

	if (id == NULL || tm == NULL || sigv == NULL || url == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing PAYPAL-TRANSMISSION-* header");
	if (too_long || tmlen >= sizeof(tmbuf) ||
	    (n = base64_decode(sigv, siglen, sig, sizeof(sig))) < 256)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (alg != NULL && !(alglen == 13 && memcmp(alg, "SHA256withRSA", 13) == 0))
		return scheme_fail(res, VERIFY_MISMATCH, "PAYPAL-AUTH-ALGO not SHA256withRSA");
	memcpy(tmbuf, tm, tmlen);
	tmbuf[tmlen] = '\0';
	if (rfc3339_us(tmbuf, &us) != 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad PAYPAL-TRANSMISSION-TIME header");
	if ((st = scheme_window(ep, req, us / 1000000)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t whlen;
		const unsigned char *wh = secret_get(ep->secrets, i, &whlen);
		char *msg = message(id, idlen, tm, tmlen, wh, whlen, req->body, req->body_len);

		rc = scheme_verify_cert(&certs, ep, req, url, urllen, PKEY_RS256,
					(const unsigned char *)msg, strlen(msg), sig, (size_t)n, i,
					res);
		free(msg);
		/* a pass, or an answer that no other webhook id changes */
		if (rc == 0 || res->status != VERIFY_MISMATCH ||
		    strcmp(res->reason, "signature mismatch") != 0)
			break;
	}
	return rc;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	pkey_secret ps;
	char tm[32], *id, *msg, *b64;
	unsigned char *sig;
	size_t siglen;
	time_t t = (time_t)in->timestamp;
	struct tm g;

	if (pkey_secret_parse(in->secret, in->secret_len, &ps, errbuf, errlen) < 0)
		return -1;
	if (ps.words[1] == NULL) {
		pkey_secret_release(&ps);
		snprintf(errbuf, errlen,
			 "the secret is not \"<cert URL> <webhook id> <base64 PKCS#8 DER key>\"");
		return -1;
	}
	gmtime_r(&t, &g);
	strftime(tm, sizeof(tm), "%Y-%m-%dT%H:%M:%SZ", &g);
	id = in->event_id != NULL ? xstrdup(in->event_id)
				  : xasprintf("hookinbox-send-%lld", (long long)in->timestamp);
	msg = message(id, strlen(id), tm, strlen(tm), (const unsigned char *)ps.words[1],
		      strlen(ps.words[1]), in->body, in->body_len);
	if (pkey_sign(&ps, PKEY_RS256, (const unsigned char *)msg, strlen(msg), &sig, &siglen,
		      errbuf, errlen) < 0) {
		free(msg);
		free(id);
		pkey_secret_release(&ps);
		return -1;
	}
	free(msg);
	b64 = xmalloc(BASE64_ENCODED_SIZE(siglen));
	base64_encode(sig, siglen, b64);
	free(sig);
	sign_add(out, "PAYPAL-TRANSMISSION-ID", id);
	sign_add(out, "PAYPAL-TRANSMISSION-TIME", xstrdup(tm));
	sign_add(out, "PAYPAL-TRANSMISSION-SIG", b64);
	sign_add(out, "PAYPAL-CERT-URL", xstrdup(ps.words[0]));
	sign_add(out, "PAYPAL-AUTH-ALGO", xstrdup("SHA256withRSA"));
	pkey_secret_release(&ps);
	return 0;
}

/* {"id": "WH-…", "event_type", "resource": {"id"}, "create_time"} */
static const env_body_fields fields = {"id", "event_type", "resource.id", NULL};

static const char *const headers[] = {"PAYPAL-TRANSMISSION-ID", "PAYPAL-TRANSMISSION-TIME", NULL};

const provider_ops provider_paypal = {
	.name = "paypal",
	.klass = "RSA with a cached certificate",
	.tolerance = 300,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.check = scheme_check_cert,
	.verify = verify,
	.load = scheme_load_cert,
	.fields = &fields,
	.sign = sign,
	.id_in_body = true,
};
