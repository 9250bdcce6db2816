/* SPDX-License-Identifier: ISC */
/*
 * scheme.c - the pieces the providers' signature schemes share
 *
 * Timestamps are parsed strictly (decimal digits only) and the signed
 * content uses the canonical decimal form, as the SDKs do after parseInt.
 */
#include "scheme.h"

#include "base64.h"
#include "ct.h"
#include "decimal.h"
#include "fields.h"
#include "hex.h"
#include "hmac.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

#define TIMESTAMP_DIGITS_MAX 12 /* unix seconds well past year 30000 */

bool
span_eq(span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && memcmp(s.p, lit, n) == 0;
}

int
scheme_fail(verify_result *res, verify_status st, const char *reason)
{
	res->has_signed_sha256 = false;
	res->status = st;
	res->secret_index = -1;
	res->reason = reason;
	return -1;
}

int
scheme_pass(verify_result *res, size_t secret_index)
{
	res->has_signed_sha256 = false;
	res->status = VERIFY_OK;
	res->secret_index = (int)secret_index;
	res->reason = "signature verified";
	return 0;
}

const char *
scheme_header(const request_view *req, const char *name, size_t *len, bool *too_long)
{
	const char *v = req->header(req->ctx, name);

	if (v == NULL)
		return NULL;
	*len = strnlen(v, SCHEME_HEADER_MAX + 1);
	if (*len > SCHEME_HEADER_MAX)
		*too_long = true;
	return v;
}

int
scheme_timestamp(const char *s, size_t len, int64_t *out)
{
	uint64_t v;

	if (len > TIMESTAMP_DIGITS_MAX || decimal_digits(s, len, INT64_MAX, &v) < 0)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int
scheme_timestamp_ms(const char *s, size_t len, int64_t *out)
{
	uint64_t v;

	if (len > TIMESTAMP_DIGITS_MAX + 3 || decimal_digits(s, len, INT64_MAX, &v) < 0)
		return -1;
	*out = (int64_t)v;
	return 0;
}

verify_status
scheme_window(const provider_endpoint *ep, const request_view *req, int64_t ts)
{
	int64_t tol = ep->tolerance > 0 ? ep->tolerance : provider_get(ep->provider)->tolerance;

	/* ts has at most 12 digits and now is a sane clock: no overflow */
	if (req->now - ts > tol)
		return VERIFY_STALE;
	if (ts - req->now > tol)
		return VERIFY_FUTURE;
	return VERIFY_OK;
}

int
scheme_window_fail(verify_result *res, verify_status st)
{
	return scheme_fail(res, st,
			   st == VERIFY_STALE ? "timestamp too old" : "timestamp in the future");
}

int
scheme_split(const char *v, size_t len, char sep, span out[SCHEME_ENTRIES_MAX])
{
	int n = 0;

	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && v[j] != sep)
			j++;
		if (j > i) {
			if (n == SCHEME_ENTRIES_MAX)
				return -1;
			out[n].p = v + i;
			out[n].len = j - i;
			n++;
		}
		i = j + 1;
	}
	return n;
}

bool
scheme_split_kv(span s, char c, span *k, span *v)
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

unsigned char *
scheme_ts_message(const char *ts, size_t tslen, const char *joiner, const unsigned char *body,
		  size_t blen, size_t *len)
{
	size_t jl = strlen(joiner);
	unsigned char *m = xmalloc(tslen + jl + blen + 1);

	memcpy(m, ts, tslen);
	memcpy(m + tslen, joiner, jl);
	if (blen > 0)
		memcpy(m + tslen + jl, body, blen);
	*len = tslen + jl + blen;
	return m;
}

bool
scheme_hex_matches(span s, const unsigned char *mac, size_t maclen)
{
	unsigned char buf[HMAC_MAX_LEN];
	long n = hex_decode(s.p, s.len, buf, sizeof(buf));

	return n >= 0 && ct_equal(buf, (size_t)n, mac, maclen);
}

int
scheme_mac_secret(hmac_alg alg, const provider_endpoint *ep, size_t i, const hmac_part *parts,
		  size_t n, unsigned char mac[HMAC_MAX_LEN])
{
	size_t klen;
	const unsigned char *key = secret_get(ep->secrets, i, &klen);

	return hmac_compute(alg, key, klen, parts, n, mac);
}

int
scheme_match_secrets(hmac_alg alg, const provider_endpoint *ep, const hmac_part *parts,
		     size_t nparts, const unsigned char *want, size_t wantlen, verify_result *res)
{
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char mac[HMAC_MAX_LEN];
		bool match;

		if (scheme_mac_secret(alg, ep, i, parts, nparts, mac) < 0)
			return scheme_fail(res, VERIFY_MISMATCH, "signature computation failed");
		match = ct_equal(mac, wantlen, want, wantlen);
		secure_wipe(mac, sizeof(mac));
		if (match)
			return scheme_pass(res, i);
	}
	return scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
}

int
scheme_verify_timestamped(const timestamped_scheme *sc, const provider_endpoint *ep,
			  const request_view *req, verify_result *res)
{
	span ent[SCHEME_ENTRIES_MAX], sigs[SCHEME_ENTRIES_MAX];
	int n, nsig = 0;
	bool have_ts = false, too_long = false;
	int64_t ts = 0;
	size_t len;
	verify_status st;
	char tsbuf[32];
	const char *v = scheme_header(req, sc->header, &len, &too_long);

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (too_long || (n = scheme_split(v, len, sc->sep, ent)) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "signature header too long");
	for (int i = 0; i < n; i++) {
		span k, val;

		while (sc->spaced && ent[i].len > 0 && ent[i].p[0] == ' ') {
			ent[i].p++;
			ent[i].len--;
		}
		if (!scheme_split_kv(ent[i], '=', &k, &val))
			continue;
		if (span_eq(k, sc->ts_key)) {
			if (have_ts || (sc->ms ? scheme_timestamp_ms(val.p, val.len, &ts)
					       : scheme_timestamp(val.p, val.len, &ts)) < 0)
				return scheme_fail(res, VERIFY_MALFORMED,
						   "bad timestamp in signature header");
			have_ts = true;
		} else if (span_eq(k, sc->sig_key)) {
			sigs[nsig++] = val;
		}
	}
	if (!have_ts)
		return scheme_fail(res, VERIFY_MALFORMED, "no timestamp in signature header");
	if (nsig == 0)
		return scheme_fail(res, VERIFY_MALFORMED, sc->no_sig);
	if ((st = scheme_window(ep, req, sc->ms ? ts / 1000 : ts)) != VERIFY_OK)
		return scheme_window_fail(res, st);

	snprintf(tsbuf, sizeof(tsbuf), "%lld%c", (long long)ts, sc->joiner);
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char mac[HMAC_MAX_LEN];
		hmac_part parts[2] = {{tsbuf, strlen(tsbuf)}, {req->body, req->body_len}};

		if (scheme_mac_secret(HMAC_SHA256, ep, i, parts, 2, mac) < 0)
			return scheme_fail(res, VERIFY_MISMATCH, "signature computation failed");
		for (int j = 0; j < nsig; j++) {
			if (scheme_hex_matches(sigs[j], mac, 32)) {
				secure_wipe(mac, sizeof(mac));
				return scheme_pass(res, i);
			}
		}
		secure_wipe(mac, sizeof(mac));
	}
	return scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
}

int
scheme_verify_base64_body(const provider_endpoint *ep, const request_view *req, verify_result *res,
			  const char *header, const char *missing, const char *prefix)
{
	unsigned char want[32 + 3];
	bool too_long = false;
	size_t len;
	const char *v = scheme_header(req, header, &len, &too_long);
	hmac_part parts[2] = {{prefix, strlen(prefix)}, {req->body, req->body_len}};

	if (v == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, missing);
	if (too_long || base64_decode(v, len, want, sizeof(want)) != 32)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	return scheme_match_secrets(HMAC_SHA256, ep, parts, 2, want, 32, res);
}

int
scheme_greet_head(const provider_endpoint *ep, const request_view *req, const char *method,
		  handshake_answer *ans, const char **reason)
{
	(void)ep;
	(void)req;
	(void)ans; /* 200, no body */
	(void)reason;
	return strcmp(method, "HEAD") == 0 ? 1 : 0;
}

int
scheme_echo_query(const request_view *req, const char *name, handshake_answer *ans,
		  const char **reason)
{
	switch (env_query_param(req, name, &ans->body)) {
	case 0:
		ans->content_type = "text/plain";
		return 1;
	case 1:
		*reason = "no challenge";
		return -1;
	default:
		*reason = "bad challenge";
		return -1;
	}
}

void
sign_add(sign_output *out, const char *name, char *value)
{
	/* SIGN_MAX_HEADERS bounds what any provider adds */
	out->h[out->n].name = name;
	out->h[out->n].value = value;
	out->n++;
}

void
sign_add_opt(sign_output *out, const char *name, const char *value)
{
	if (name != NULL && value != NULL)
		sign_add(out, name, xstrdup(value));
}

int
sign_mac_hex(hmac_alg alg, const sign_input *in, const hmac_part *parts, size_t n, char *hex)
{
	unsigned char mac[HMAC_MAX_LEN];

	if (hmac_compute(alg, in->secret, in->secret_len, parts, n, mac) < 0)
		return -1;
	hex_encode(mac, hmac_len(alg), hex);
	secure_wipe(mac, sizeof(mac));
	return 0;
}

int
sign_mac_b64(hmac_alg alg, const unsigned char *key, size_t klen, const hmac_part *parts, size_t n,
	     char *b64)
{
	unsigned char mac[HMAC_MAX_LEN];

	if (hmac_compute(alg, key, klen, parts, n, mac) < 0)
		return -1;
	base64_encode(mac, hmac_len(alg), b64);
	secure_wipe(mac, sizeof(mac));
	return 0;
}

int
sign_body_hex(const sign_input *in, const char *prefix, char *hex, char *errbuf, size_t errlen)
{
	hmac_part parts[2] = {{prefix, strlen(prefix)}, {in->body, in->body_len}};

	if (sign_mac_hex(HMAC_SHA256, in, parts, 2, hex) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	return 0;
}

int
scheme_sign_timestamped(const timestamped_scheme *sc, const sign_input *in, sign_output *out,
			char *errbuf, size_t errlen)
{
	char hex[2 * HMAC_MAX_LEN + 1], pre[48];
	long long ts = (long long)in->timestamp * (sc->ms ? 1000 : 1);

	snprintf(pre, sizeof(pre), "%lld%c", ts, sc->joiner);
	if (sign_body_hex(in, pre, hex, errbuf, errlen) < 0)
		return -1;
	sign_add(out, sc->header,
		 xasprintf("%s=%lld%c%s%s=%s", sc->ts_key, ts, sc->sep, sc->spaced ? " " : "",
			   sc->sig_key, hex));
	return 0;
}

int
sign_body_b64(const sign_input *in, const char *prefix, char *b64, char *errbuf, size_t errlen)
{
	hmac_part parts[2] = {{prefix, strlen(prefix)}, {in->body, in->body_len}};

	if (sign_mac_b64(HMAC_SHA256, in->secret, in->secret_len, parts, 2, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	return 0;
}

int
scheme_verify_v0(const v0_scheme *sc, const provider_endpoint *ep, const request_view *req,
		 verify_result *res)
{
	unsigned char want[32];
	bool too_long = false;
	size_t len, tslen;
	int64_t ts;
	verify_status st;
	char base[48];
	const char *v = scheme_header(req, sc->sig_header, &len, &too_long);
	const char *tsv = scheme_header(req, sc->ts_header, &tslen, &too_long);

	size_t pre = sc->bare ? 0 : 3;

	if (v == NULL || tsv == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (too_long || len != pre + 64 || strncmp(v, "v0=", pre) != 0 ||
	    hex_decode(v + pre, 64, want, sizeof(want)) != 32)
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if ((sc->ms ? scheme_timestamp_ms(tsv, tslen, &ts) : scheme_timestamp(tsv, tslen, &ts)) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad timestamp header");
	if ((st = scheme_window(ep, req, sc->ms ? ts / 1000 : ts)) != VERIFY_OK)
		return scheme_window_fail(res, st);
	snprintf(base, sizeof(base), "%s%lld:", sc->bare ? "" : "v0:", (long long)ts);
	hmac_part parts[2] = {{base, strlen(base)}, {req->body, req->body_len}};

	return scheme_match_secrets(HMAC_SHA256, ep, parts, 2, want, 32, res);
}

int
scheme_sign_v0(const v0_scheme *sc, const sign_input *in, sign_output *out, char *errbuf,
	       size_t errlen)
{
	char hex[2 * HMAC_MAX_LEN + 1], pre[48];
	long long ts = (long long)in->timestamp * (sc->ms ? 1000 : 1);

	snprintf(pre, sizeof(pre), "%s%lld:", sc->bare ? "" : "v0:", ts);
	if (sign_body_hex(in, pre, hex, errbuf, errlen) < 0)
		return -1;
	sign_add(out, sc->ts_header, xasprintf("%lld", ts));
	sign_add(out, sc->sig_header, xasprintf("%s%s", sc->bare ? "" : "v0=", hex));
	return 0;
}
