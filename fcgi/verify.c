/*
 * verify.c - provider signature verification over the exact raw body
 *
 * Each scheme follows its provider's official SDK (what is signed, how the
 * header is parsed, which entries count); where the SDK is lax we are
 * stricter: timestamps are checked in both directions, header values and
 * entry counts are bounded, and every comparison is constant-time.
 *
 * Timestamps are parsed strictly (decimal digits only) and the signed
 * content uses the canonical decimal form, as the SDKs do after parseInt.
 */
#include "verify.h"

#include "form.h"
#include "hmac.h"
#include "sign.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_MAX 8192	      /* a longer signature header is malformed */
#define ENTRIES_MAX 64	      /* signature entries examined per header */
#define TIMESTAMP_DIGITS_MAX 12 /* unix seconds well past year 30000 */

/* replay windows of the official SDKs, in seconds */
#define TOLERANCE_STRIPE 300
#define TOLERANCE_SLACK 300
#define TOLERANCE_STANDARD 300
#define TOLERANCE_PADDLE 5

int
verify_http_status(verify_status st)
{
	return st == VERIFY_MALFORMED ? 400 : 401;
}

static int
fail(verify_result *res, verify_status st, const char *reason)
{
	res->has_signed_sha256 = false;
	res->status = st;
	res->secret_index = -1;
	res->reason = reason;
	return -1;
}

static int
pass(verify_result *res, size_t secret_index)
{
	res->has_signed_sha256 = false;
	res->status = VERIFY_OK;
	res->secret_index = (int)secret_index;
	res->reason = "signature verified";
	return 0;
}

/* a span of a header value */
typedef struct span {
	const char *p;
	size_t len;
} span;

static bool
span_eq(span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && memcmp(s.p, lit, n) == 0;
}

/*
 * Look a header up; NULL when absent.  *too_long is set for a value longer
 * than HEADER_MAX, which every caller treats as malformed.
 */
static const char *
header(const request_view *req, const char *name, size_t *len, bool *too_long)
{
	const char *v = req->header(req->ctx, name);

	if (v == NULL)
		return NULL;
	*len = strnlen(v, HEADER_MAX + 1);
	if (*len > HEADER_MAX)
		*too_long = true;
	return v;
}

/* strict unsigned decimal seconds; -1 if not */
static int
parse_timestamp(const char *s, size_t len, int64_t *out)
{
	int64_t v = 0;

	if (len == 0 || len > TIMESTAMP_DIGITS_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static verify_status
check_window(const endpoint_conf *ep, const request_view *req, int64_t ts, int64_t dflt)
{
	int64_t tol = ep->tolerance > 0 ? ep->tolerance : dflt;

	/* ts has at most 12 digits and now is a sane clock: no overflow */
	if (req->now - ts > tol)
		return VERIFY_STALE;
	if (ts - req->now > tol)
		return VERIFY_FUTURE;
	return VERIFY_OK;
}

static int
window_fail(verify_result *res, verify_status st)
{
	return fail(res, st, st == VERIFY_STALE ? "timestamp too old" : "timestamp in the future");
}

/*
 * Split v[0..len) at sep into at most ENTRIES_MAX non-empty spans.
 * Returns the count, or -1 when there are more.
 */
static int
split(const char *v, size_t len, char sep, span out[ENTRIES_MAX])
{
	int n = 0;

	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && v[j] != sep)
			j++;
		if (j > i) {
			if (n == ENTRIES_MAX)
				return -1;
			out[n].p = v + i;
			out[n].len = j - i;
			n++;
		}
		i = j + 1;
	}
	return n;
}

/* split "k=v" (or "k,v") at the first c; false when c is absent */
static bool
split_kv(span s, char c, span *k, span *v)
{
	const char *eq = memchr(s.p, c, s.len);

	if (eq == NULL)
		return false;
	k->p = s.p;
	k->len = (size_t)(eq - s.p);
	v->p = eq + 1;
	v->len = s.len - k->len - 1;
	return true;
}

/* does hex entry s carry mac? (a bad digit or length simply does not match) */
static bool
hex_matches(span s, const unsigned char *mac, size_t maclen)
{
	unsigned char buf[HMAC_MAX_LEN];
	long n = hex_decode(s.p, s.len, buf, sizeof(buf));

	return n >= 0 && ct_equal(buf, (size_t)n, mac, maclen);
}

static int
mac_secret(hmac_alg alg, const endpoint_conf *ep, size_t i, const hmac_part *parts, size_t n,
	   unsigned char mac[HMAC_MAX_LEN])
{
	size_t klen;
	const unsigned char *key = secret_get(ep->secrets, i, &klen);

	return hmac_compute(alg, key, klen, parts, n, mac);
}

/*
 * Try every secret of the endpoint against one decoded signature of
 * wantlen bytes (the MAC length of alg); pass with the matching index, or
 * mismatch.  Constant-time compare; the computed MAC is wiped.
 */
static int
match_secrets(hmac_alg alg, const endpoint_conf *ep, const hmac_part *parts, size_t nparts,
	      const unsigned char *want, size_t wantlen, verify_result *res)
{
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char mac[HMAC_MAX_LEN];
		bool match;

		if (mac_secret(alg, ep, i, parts, nparts, mac) < 0)
			return fail(res, VERIFY_MISMATCH, "signature computation failed");
		match = ct_equal(mac, wantlen, want, wantlen);
		secure_wipe(mac, sizeof(mac));
		if (match)
			return pass(res, i);
	}
	return fail(res, VERIFY_MISMATCH, "signature mismatch");
}

/*
 * Stripe and Paddle sign alike: one header of key=value entries holding a
 * timestamp and one or more hex HMAC-SHA256 signatures of
 * "<timestamp><joiner><body>"; only the names and separators differ.
 *   Stripe: "Stripe-Signature: t=<ts>,v1=<hex>[,v1=...][,v0=...]", joiner
 *           '.', the whole "whsec_..." string as the key, 300 s window.
 *   Paddle: "Paddle-Signature: ts=<ts>;h1=<hex>[;h1=...]", joiner ':',
 *           the SDK's 5 s window.
 */
typedef struct timestamped_scheme {
	const char *header;
	const char *missing; /* reason when the header is absent */
	char sep;	     /* between entries */
	const char *ts_key;
	const char *sig_key;
	const char *no_sig; /* reason when no signature entry is there */
	char joiner;	    /* between timestamp and body in the signed content */
	int64_t tolerance;  /* the SDK's default window */
} timestamped_scheme;

static const timestamped_scheme stripe_scheme = {
	"Stripe-Signature", "missing Stripe-Signature header", ',', "t", "v1",
	"no v1 signature in signature header", '.', TOLERANCE_STRIPE,
};

static const timestamped_scheme paddle_scheme = {
	"Paddle-Signature", "missing Paddle-Signature header", ';', "ts", "h1",
	"no h1 signature in signature header", ':', TOLERANCE_PADDLE,
};

static int
verify_timestamped(const timestamped_scheme *sc, const endpoint_conf *ep, const request_view *req,
		   verify_result *res)
{
	span ent[ENTRIES_MAX], sigs[ENTRIES_MAX];
	int n, nsig = 0;
	bool have_ts = false, too_long = false;
	int64_t ts = 0;
	size_t len;
	verify_status st;
	char tsbuf[32];
	const char *v = header(req, sc->header, &len, &too_long);

	if (v == NULL)
		return fail(res, VERIFY_UNSIGNED, sc->missing);
	if (too_long || (n = split(v, len, sc->sep, ent)) < 0)
		return fail(res, VERIFY_MALFORMED, "signature header too long");
	for (int i = 0; i < n; i++) {
		span k, val;

		if (!split_kv(ent[i], '=', &k, &val))
			continue;
		if (span_eq(k, sc->ts_key)) {
			if (have_ts || parse_timestamp(val.p, val.len, &ts) < 0)
				return fail(res, VERIFY_MALFORMED, "bad timestamp in signature header");
			have_ts = true;
		} else if (span_eq(k, sc->sig_key)) {
			sigs[nsig++] = val;
		}
	}
	if (!have_ts)
		return fail(res, VERIFY_MALFORMED, "no timestamp in signature header");
	if (nsig == 0)
		return fail(res, VERIFY_MALFORMED, sc->no_sig);
	if ((st = check_window(ep, req, ts, sc->tolerance)) != VERIFY_OK)
		return window_fail(res, st);

	snprintf(tsbuf, sizeof(tsbuf), "%lld%c", (long long)ts, sc->joiner);
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char mac[HMAC_MAX_LEN];
		hmac_part parts[2] = {{tsbuf, strlen(tsbuf)}, {req->body, req->body_len}};

		if (mac_secret(HMAC_SHA256, ep, i, parts, 2, mac) < 0)
			return fail(res, VERIFY_MISMATCH, "signature computation failed");
		for (int j = 0; j < nsig; j++) {
			if (hex_matches(sigs[j], mac, 32)) {
				secure_wipe(mac, sizeof(mac));
				return pass(res, i);
			}
		}
		secure_wipe(mac, sizeof(mac));
	}
	return fail(res, VERIFY_MISMATCH, "signature mismatch");
}

/* GitHub: "X-Hub-Signature-256: sha256=<hex>", HMAC-SHA256 over the body */
static int
verify_github(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	unsigned char want[32];
	bool too_long = false;
	size_t len;
	const char *v = header(req, "X-Hub-Signature-256", &len, &too_long);

	if (v == NULL)
		return fail(res, VERIFY_UNSIGNED, "missing X-Hub-Signature-256 header");
	if (too_long || len != 7 + 64 || strncmp(v, "sha256=", 7) != 0 ||
	    hex_decode(v + 7, 64, want, sizeof(want)) != 32)
		return fail(res, VERIFY_MALFORMED, "malformed signature header");
	hmac_part part = {req->body, req->body_len};

	return match_secrets(HMAC_SHA256, ep, &part, 1, want, 32, res);
}

/*
 * Standard Webhooks (and Svix): "webhook-id", "webhook-timestamp",
 * "webhook-signature: v1,<b64> v1a,<b64> ..." (or the svix- names).
 * v1: HMAC-SHA256 over "<id>.<ts>.<body>" with the key base64-decoded from
 * "whsec_<b64>" (the SDKs decode the secret with or without the prefix;
 * a secret without the prefix that is not valid base64 is used as raw
 * bytes).  v1a: Ed25519 over the same content, checked with "whpk_<b64>"
 * public keys (or the public half of a "whsk_<b64>" private key).
 */
static int
verify_standard(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	static const char *const names[2][3] = {
		{"webhook-id", "webhook-timestamp", "webhook-signature"},
		{"svix-id", "svix-timestamp", "svix-signature"},
	};
	int first = ep->provider == PROVIDER_SVIX ? 1 : 0;
	const char *id = NULL, *tsv = NULL, *sig = NULL;
	size_t idlen = 0, tslen = 0, siglen = 0;
	bool too_long = false;
	span ent[ENTRIES_MAX], v1[ENTRIES_MAX], v1a[ENTRIES_MAX];
	int n, n1 = 0, n1a = 0;
	int64_t ts;
	verify_status st;
	char tsbuf[32];
	unsigned char *msg = NULL;
	size_t msglen = 0;
	int rc = -1;

	/* both header families are accepted, as the Svix SDKs do */
	for (int k = 0; k < 2 && id == NULL && tsv == NULL && sig == NULL; k++) {
		const char *const *nm = names[(first + k) % 2];

		id = header(req, nm[0], &idlen, &too_long);
		tsv = header(req, nm[1], &tslen, &too_long);
		sig = header(req, nm[2], &siglen, &too_long);
	}
	if (id == NULL || tsv == NULL || sig == NULL)
		return fail(res, VERIFY_UNSIGNED, "missing webhook-id, webhook-timestamp or webhook-signature header");
	if (too_long)
		return fail(res, VERIFY_MALFORMED, "signature header too long");
	if (idlen == 0)
		return fail(res, VERIFY_MALFORMED, "empty webhook-id header");
	if (parse_timestamp(tsv, tslen, &ts) < 0)
		return fail(res, VERIFY_MALFORMED, "bad webhook-timestamp header");
	if ((n = split(sig, siglen, ' ', ent)) < 0)
		return fail(res, VERIFY_MALFORMED, "too many signatures");
	for (int i = 0; i < n; i++) {
		span ver, val;

		if (!split_kv(ent[i], ',', &ver, &val))
			continue;
		if (span_eq(ver, "v1"))
			v1[n1++] = val;
		else if (span_eq(ver, "v1a"))
			v1a[n1a++] = val;
	}
	if (n1 == 0 && n1a == 0)
		return fail(res, VERIFY_MALFORMED, "no v1 or v1a signature");
	/* the SDKs check the timestamp first */
	if ((st = check_window(ep, req, ts, TOLERANCE_STANDARD)) != VERIFY_OK)
		return window_fail(res, st);

	snprintf(tsbuf, sizeof(tsbuf), ".%lld.", (long long)ts);
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t slen, klen, kcap;
		const unsigned char *s = secret_get(ep->secrets, i, &slen);
		unsigned char *key;
		standard_key_kind kind =
			standard_key_decode(s, slen, STANDARD_KEY_VERIFY, &key, &klen, &kcap);
		bool match = false;

		if (kind == STANDARD_KEY_HMAC && n1 > 0) {
			unsigned char mac[HMAC_MAX_LEN];
			char b64[BASE64_ENCODED_SIZE(32)];
			hmac_part parts[3] = {
				{id, idlen}, {tsbuf, strlen(tsbuf)}, {req->body, req->body_len}};

			if (hmac_compute(HMAC_SHA256, key, klen, parts, 3, mac) == 0) {
				base64_encode(mac, 32, b64);
				/* the SDKs compare the base64 text */
				for (int j = 0; j < n1 && !match; j++)
					match = ct_equal(v1[j].p, v1[j].len, b64, strlen(b64));
			}
			secure_wipe(mac, sizeof(mac));
			secure_wipe(b64, sizeof(b64));
		} else if (kind == STANDARD_KEY_ED25519 && n1a > 0) {
			if (msg == NULL) {
				size_t tl = strlen(tsbuf);

				msglen = idlen + tl + req->body_len;
				msg = xmalloc(msglen + 1);
				memcpy(msg, id, idlen);
				memcpy(msg + idlen, tsbuf, tl);
				if (req->body_len > 0)
					memcpy(msg + idlen + tl, req->body, req->body_len);
			}
			for (int j = 0; j < n1a && !match; j++) {
				unsigned char sigbytes[ED25519_SIG_LEN + 3];

				if (base64_decode(v1a[j].p, v1a[j].len, sigbytes, sizeof(sigbytes)) ==
				    ED25519_SIG_LEN)
					match = ed25519_verify(key, msg, msglen, sigbytes);
			}
		}
		secure_wipe(key, kcap);
		free(key);
		if (match) {
			rc = pass(res, i);
			goto out;
		}
	}
	rc = fail(res, VERIFY_MISMATCH, "signature mismatch");
out:
	free(msg);
	return rc;
}

/*
 * Generic HMAC: ep->hmac.header carries [prefix]<hex|base64> of the
 * HMAC (sha1/sha256/sha512) of the body.
 */
static int
verify_hmac(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	const hmac_conf *h = &ep->hmac;
	size_t len, plen = h->prefix != NULL ? strlen(h->prefix) : 0, maclen = hmac_len(h->alg);
	bool too_long = false;
	unsigned char want[HMAC_MAX_LEN + 3];
	long n;
	const char *v;

	if (h->header == NULL)
		return fail(res, VERIFY_MISMATCH, "endpoint has no signature header configured");
	v = header(req, h->header, &len, &too_long);
	if (v == NULL)
		return fail(res, VERIFY_UNSIGNED, "missing signature header");
	if (too_long)
		return fail(res, VERIFY_MALFORMED, "signature header too long");
	if (plen > 0) {
		if (len < plen || strncmp(v, h->prefix, plen) != 0)
			return fail(res, VERIFY_MALFORMED, "signature header lacks the configured prefix");
		v += plen;
		len -= plen;
	}
	if (h->enc == HMAC_HEX)
		n = hex_decode(v, len, want, sizeof(want));
	else
		n = base64_decode(v, len, want, sizeof(want));
	if (n < 0 || (size_t)n != maclen)
		return fail(res, VERIFY_MALFORMED, "malformed signature header");
	hmac_part part = {req->body, req->body_len};

	return match_secrets(h->alg, ep, &part, 1, want, maclen, res);
}

/* Shopify: "X-Shopify-Hmac-Sha256: <base64>", HMAC-SHA256 over the body */
static int
verify_shopify(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	unsigned char want[32 + 3];
	bool too_long = false;
	size_t len;
	const char *v = header(req, "X-Shopify-Hmac-Sha256", &len, &too_long);

	if (v == NULL)
		return fail(res, VERIFY_UNSIGNED, "missing X-Shopify-Hmac-Sha256 header");
	if (too_long || base64_decode(v, len, want, sizeof(want)) != 32)
		return fail(res, VERIFY_MALFORMED, "malformed signature header");
	hmac_part part = {req->body, req->body_len};

	return match_secrets(HMAC_SHA256, ep, &part, 1, want, 32, res);
}

/*
 * Slack: "X-Slack-Signature: v0=<hex>" and "X-Slack-Request-Timestamp",
 * HMAC-SHA256 over "v0:<ts>:<body>".
 */
static int
verify_slack(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	unsigned char want[32];
	bool too_long = false;
	size_t len, tslen;
	int64_t ts;
	verify_status st;
	char base[48];
	const char *v = header(req, "X-Slack-Signature", &len, &too_long);
	const char *tsv = header(req, "X-Slack-Request-Timestamp", &tslen, &too_long);

	if (v == NULL || tsv == NULL)
		return fail(res, VERIFY_UNSIGNED,
			    "missing X-Slack-Signature or X-Slack-Request-Timestamp header");
	if (too_long || len != 3 + 64 || strncmp(v, "v0=", 3) != 0 ||
	    hex_decode(v + 3, 64, want, sizeof(want)) != 32)
		return fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (parse_timestamp(tsv, tslen, &ts) < 0)
		return fail(res, VERIFY_MALFORMED, "bad X-Slack-Request-Timestamp header");
	if ((st = check_window(ep, req, ts, TOLERANCE_SLACK)) != VERIFY_OK)
		return window_fail(res, st);
	snprintf(base, sizeof(base), "v0:%lld:", (long long)ts);
	hmac_part parts[2] = {{base, strlen(base)}, {req->body, req->body_len}};

	return match_secrets(HMAC_SHA256, ep, parts, 2, want, 32, res);
}

/*
 * Twilio: "X-Twilio-Signature: <base64>", HMAC-SHA1 keyed with the auth
 * token over the full URL Twilio requested followed, for form bodies, by
 * every parameter's name and value, sorted by name (repeated names: values
 * de-duplicated and sorted), as twilio-node's validateRequest does.  When
 * the query carries bodySHA256 (JSON bodies, validateRequestWithBody) no
 * parameters are appended and bodySHA256 must equal hex(SHA-256(body)).
 *
 * The URL is ep->public_url up to any '?', then "?" + the request's query
 * string when there is one.  Like the SDK we try it as configured and with
 * its port toggled: the default port added when it has none, the port
 * removed when it has one.
 */
static size_t
twilio_urls(const char *public_url, const char *query, char *urls[2])
{
	size_t blen = strcspn(public_url, "?#"), n = 0;
	const char *q = query != NULL && *query != '\0' ? query : NULL;
	const char *scheme_end = strstr(public_url, "://");
	char *base = xstrndup(public_url, blen);

	urls[n++] = q != NULL ? xasprintf("%s?%s", base, q) : xstrdup(base);
	if (scheme_end != NULL && (size_t)(scheme_end - public_url) < blen) {
		const char *auth = scheme_end + 3;
		size_t alen = strcspn(auth, "/?#"), hoststart = 0, colon = 0;
		bool has_port = false;

		for (size_t i = 0; i < alen; i++) {
			if (auth[i] == '@')
				hoststart = i + 1;
		}
		for (size_t i = hoststart; i < alen; i++) {
			if (auth[i] == ']')
				has_port = false;
			else if (auth[i] == ':') {
				has_port = true;
				colon = i;
			}
		}
		if (has_port) {
			/* drop ":port" */
			size_t pre = (size_t)(auth - public_url) + colon;
			size_t post = (size_t)(auth - public_url) + alen;

			urls[n++] = xasprintf("%.*s%.*s%s%s", (int)pre, base, (int)(blen - post),
					      base + post, q != NULL ? "?" : "", q != NULL ? q : "");
		} else {
			const char *port = NULL;
			size_t at = (size_t)(auth - public_url) + alen;

			if (strncmp(public_url, "https://", 8) == 0)
				port = ":443";
			else if (strncmp(public_url, "http://", 7) == 0)
				port = ":80";
			if (port != NULL)
				urls[n++] = xasprintf("%.*s%s%.*s%s%s", (int)at, base, port,
						      (int)(blen - at), base + at, q != NULL ? "?" : "",
						      q != NULL ? q : "");
		}
	}
	free(base);
	return n;
}

static int
verify_twilio(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	bool too_long = false, body_hash = false;
	size_t len, nurls = 0, nparts = 0;
	char *urls[2] = {NULL, NULL};
	form params = {NULL, 0}, query = {NULL, 0};
	hmac_part *parts = NULL;
	const form_param *bh = NULL;
	int rc = -1;
	const char *v = header(req, "X-Twilio-Signature", &len, &too_long);

	if (v == NULL)
		return fail(res, VERIFY_UNSIGNED, "missing X-Twilio-Signature header");
	if (too_long || len != BASE64_ENCODED_SIZE(20) - 1)
		return fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (ep->public_url == NULL)
		return fail(res, VERIFY_MISMATCH, "endpoint has no public_url for twilio");

	if (req->query != NULL) {
		if (form_parse(req->query, strlen(req->query), &query) < 0) {
			rc = fail(res, VERIFY_MALFORMED, "too many query parameters");
			goto out;
		}
		bh = form_get(&query, "bodySHA256");
		body_hash = bh != NULL;
	}
	if (!body_hash) {
		/* no bodySHA256: the body must be form parameters, all signed */
		if (form_parse((const char *)req->body, req->body_len, &params) < 0) {
			rc = fail(res, VERIFY_MALFORMED, "too many form parameters");
			goto out;
		}
		form_sort_unique(&params);
	}

	nurls = twilio_urls(ep->public_url, req->query, urls);
	parts = xcalloc(1 + 2 * params.n, sizeof(*parts));
	for (size_t i = 0; i < params.n; i++) {
		parts[1 + 2 * i].data = params.params[i].key;
		parts[1 + 2 * i].len = params.params[i].key_len;
		parts[2 + 2 * i].data = params.params[i].value;
		parts[2 + 2 * i].len = params.params[i].value_len;
	}
	nparts = 1 + 2 * params.n;

	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		for (size_t u = 0; u < nurls; u++) {
			unsigned char mac[HMAC_MAX_LEN];
			char b64[BASE64_ENCODED_SIZE(20)];
			bool match;

			parts[0].data = urls[u];
			parts[0].len = strlen(urls[u]);
			if (mac_secret(HMAC_SHA1, ep, i, parts, nparts, mac) < 0) {
				rc = fail(res, VERIFY_MISMATCH, "signature computation failed");
				goto out;
			}
			base64_encode(mac, 20, b64);
			match = ct_equal(b64, strlen(b64), v, len);
			secure_wipe(mac, sizeof(mac));
			if (!match)
				continue;
			if (body_hash) {
				unsigned char d[SHA256_LEN];
				char hex[2 * SHA256_LEN + 1];

				if (sha256_digest(req->body, req->body_len, d) < 0) {
					rc = fail(res, VERIFY_MISMATCH, "signature computation failed");
					goto out;
				}
				hex_encode(d, sizeof(d), hex);
				if (!ct_equal(hex, strlen(hex), bh->value, bh->value_len)) {
					rc = fail(res, VERIFY_MISMATCH, "body hash mismatch");
					goto out;
				}
			}
			rc = pass(res, i);
			if (!body_hash) {
				/* what was signed, with the URL as configured (not the port variant) */
				parts[0].data = urls[0];
				parts[0].len = strlen(urls[0]);
				if (sha256_parts(parts, nparts, res->signed_sha256) < 0) {
					rc = fail(res, VERIFY_MISMATCH, "signature computation failed");
					goto out;
				}
				res->has_signed_sha256 = true;
			}
			goto out;
		}
	}
	rc = fail(res, VERIFY_MISMATCH, "signature mismatch");
out:
	free(parts);
	for (size_t u = 0; u < 2; u++)
		free(urls[u]);
	form_release(&params);
	form_release(&query);
	return rc;
}

/* GitLab: "X-Gitlab-Token" is the shared token itself, not a signature */
static int
verify_gitlab(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	bool too_long = false;
	size_t len;
	const char *v = header(req, "X-Gitlab-Token", &len, &too_long);

	if (v == NULL)
		return fail(res, VERIFY_UNSIGNED, "missing X-Gitlab-Token header");
	if (too_long)
		return fail(res, VERIFY_MALFORMED, "token header too long");
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t klen;
		const unsigned char *key = secret_get(ep->secrets, i, &klen);

		if (ct_equal(key, klen, v, len))
			return pass(res, i);
	}
	return fail(res, VERIFY_MISMATCH, "token mismatch");
}

int
verify_request(const endpoint_conf *ep, const request_view *req, verify_result *res)
{
	if (ep->secrets == NULL || secret_count(ep->secrets) == 0)
		return fail(res, VERIFY_MISMATCH, "endpoint has no secret");
	switch (ep->provider) {
	case PROVIDER_STRIPE:
		return verify_timestamped(&stripe_scheme, ep, req, res);
	case PROVIDER_GITHUB:
		return verify_github(ep, req, res);
	case PROVIDER_STANDARD:
	case PROVIDER_SVIX:
		return verify_standard(ep, req, res);
	case PROVIDER_HMAC:
		return verify_hmac(ep, req, res);
	case PROVIDER_SHOPIFY:
		return verify_shopify(ep, req, res);
	case PROVIDER_SLACK:
		return verify_slack(ep, req, res);
	case PROVIDER_PADDLE:
		return verify_timestamped(&paddle_scheme, ep, req, res);
	case PROVIDER_TWILIO:
		return verify_twilio(ep, req, res);
	case PROVIDER_GITLAB:
		return verify_gitlab(ep, req, res);
	case PROVIDER__COUNT:
		break;
	}
	return fail(res, VERIFY_MISMATCH, "unknown provider");
}
