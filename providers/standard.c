/* SPDX-License-Identifier: ISC */
/*
 * standard.c - Standard Webhooks, and Svix (the same scheme under svix-*
 * header names), which Clerk and Resend send as it is
 *
 * "webhook-id", "webhook-timestamp", "webhook-signature: v1,<b64> v1a,<b64>
 * ..." (or the svix- names; both families are accepted, as the Svix SDKs
 * do).  v1: HMAC-SHA256 over "<id>.<ts>.<body>" with the key
 * base64-decoded from "whsec_<b64>" (the SDKs decode the secret with or
 * without the prefix; a secret without the prefix that is not valid base64
 * is used as raw bytes).  v1a: Ed25519 over the same content, checked with
 * "whpk_<b64>" public keys (or the public half of a "whsk_<b64>" private
 * key).  300 s window.
 *
 * An HMAC is computed once per secret, whatever the number of v1 entries.
 * Ed25519 hashes the whole body again for every signature it checks (the
 * signature's R is part of the hash), so at most ED25519_TRIES_MAX v1a
 * checks are made per request, the first entries for the first keys: an
 * unsigned request with 64 v1a entries and a 1 MB body cost 36 times one
 * with a single entry (tests/t/89-unauth-cost.t).  Senders sign with one key, two while rotating.
 */
#include "base64.h"
#include "ct.h"
#include "ed25519.h"
#include "fields.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ED25519_TRIES_MAX 4

/* the providers that send the svix-* names (Svix, and senders built on it) */
static bool
svix_names(provider p)
{
	return p == PROVIDER_SVIX || p == PROVIDER_CLERK || p == PROVIDER_RESEND;
}

typedef enum standard_key_kind {
	STANDARD_KEY_NONE,   /* unusable: bad base64 after a prefix, bad length */
	STANDARD_KEY_HMAC,   /* *key is the HMAC key */
	STANDARD_KEY_ED25519 /* *key is a 32-byte Ed25519 public key */
} standard_key_kind;

typedef enum standard_key_use {
	STANDARD_KEY_VERIFY, /* whsk_ private keys give their public half */
	STANDARD_KEY_SIGN    /* whsk_ private keys give their 32-byte seed */
} standard_key_use;

/*
 * Decode one Standard Webhooks secret as the SDKs do: "whsec_<b64>" (or
 * bare base64) is the HMAC key; bare text that is not base64 is used as
 * raw bytes; "whpk_<b64>" is an Ed25519 public key, "whsk_<b64>" a private
 * key (32-byte seed, or seed || public as libsodium stores it).
 * *key is xmalloc'd with *kcap bytes of which the first *klen are the key;
 * the caller wipes *kcap bytes (OPENSSL_cleanse) and frees it.
 */
static standard_key_kind
standard_key_decode(const unsigned char *s, size_t len, standard_key_use use, unsigned char **key,
		    size_t *klen, size_t *kcap)
{
	const char *c = (const char *)s;
	size_t skip = 0;
	long n;

	*klen = 0;
	*kcap = (len > BASE64_DECODED_MAX(len) ? len : BASE64_DECODED_MAX(len)) + 1;
	*key = xmalloc(*kcap);
	if (len > 5 && (memcmp(c, "whpk_", 5) == 0 || memcmp(c, "whsk_", 5) == 0)) {
		bool priv = c[2] == 's';

		n = base64_decode(c + 5, len - 5, *key, *kcap);
		if (!priv && use == STANDARD_KEY_SIGN)
			return STANDARD_KEY_NONE;
		if (n == ED25519_KEY_LEN || (priv && n == 2 * ED25519_KEY_LEN)) {
			if (priv && use == STANDARD_KEY_VERIFY && ed25519_public(*key, *key) < 0)
				return STANDARD_KEY_NONE;
			*klen = ED25519_KEY_LEN;
			return STANDARD_KEY_ED25519;
		}
		return STANDARD_KEY_NONE;
	}
	if (len > 6 && memcmp(c, "whsec_", 6) == 0)
		skip = 6;
	n = base64_decode(c + skip, len - skip, *key, *kcap);
	if (n > 0) {
		*klen = (size_t)n;
		return STANDARD_KEY_HMAC;
	}
	if (skip > 0)
		return STANDARD_KEY_NONE; /* "whsec_" but not base64 */
	memcpy(*key, s, len);
	*klen = len;
	return STANDARD_KEY_HMAC;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	static const char *const names[2][3] = {
		{"webhook-id", "webhook-timestamp", "webhook-signature"},
		{"svix-id", "svix-timestamp", "svix-signature"},
	};
	int first = svix_names(ep->provider) ? 1 : 0;
	const char *id = NULL, *tsv = NULL, *sig = NULL;
	size_t idlen = 0, tslen = 0, siglen = 0;
	bool too_long = false;
	span ent[SCHEME_ENTRIES_MAX], v1[SCHEME_ENTRIES_MAX], v1a[SCHEME_ENTRIES_MAX];
	int n, n1 = 0, n1a = 0;
	int64_t ts;
	verify_status st;
	char tsbuf[32];
	unsigned char *msg = NULL;
	size_t msglen = 0;
	int ed_tries = 0;
	int rc = -1;

	/* both header families are accepted, as the Svix SDKs do */
	for (int k = 0; k < 2 && id == NULL && tsv == NULL && sig == NULL; k++) {
		const char *const *nm = names[(first + k) % 2];

		id = scheme_header(req, nm[0], &idlen, &too_long);
		tsv = scheme_header(req, nm[1], &tslen, &too_long);
		sig = scheme_header(req, nm[2], &siglen, &too_long);
	}
	if (id == NULL || tsv == NULL || sig == NULL)
		return scheme_fail(
			res, VERIFY_UNSIGNED,
			"missing webhook-id, webhook-timestamp or webhook-signature header");
	if (too_long)
		return scheme_fail(res, VERIFY_MALFORMED, "signature header too long");
	if (idlen == 0)
		return scheme_fail(res, VERIFY_MALFORMED, "empty webhook-id header");
	if (scheme_timestamp(tsv, tslen, &ts) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad webhook-timestamp header");
	if ((n = scheme_split(sig, siglen, ' ', ent)) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "too many signatures");
	for (int i = 0; i < n; i++) {
		span ver, val;

		if (!scheme_split_kv(ent[i], ',', &ver, &val))
			continue;
		if (span_eq(ver, "v1"))
			v1[n1++] = val;
		else if (span_eq(ver, "v1a"))
			v1a[n1a++] = val;
	}
	if (n1 == 0 && n1a == 0)
		return scheme_fail(res, VERIFY_MALFORMED, "no v1 or v1a signature");
	/* the SDKs check the timestamp first */
	if ((st = scheme_window(ep, req, ts)) != VERIFY_OK)
		return scheme_window_fail(res, st);

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
			for (int j = 0; j < n1a && !match && ed_tries < ED25519_TRIES_MAX; j++) {
				unsigned char sigbytes[ED25519_SIG_LEN + 3];

				if (base64_decode(v1a[j].p, v1a[j].len, sigbytes,
						  sizeof(sigbytes)) != ED25519_SIG_LEN)
					continue;
				ed_tries++;
				match = ed25519_verify(key, msg, msglen, sigbytes);
			}
		}
		secure_wipe(key, kcap);
		free(key);
		if (match) {
			rc = scheme_pass(res, i);
			goto out;
		}
	}
	rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
out:
	free(msg);
	return rc;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *first = svix_names(ep->provider) ? "svix-id" : "webhook-id";
	const char *second = svix_names(ep->provider) ? "webhook-id" : "svix-id";
	const char *why = NULL;
	jval body = env_body(req, env);
	const jval *b = &body;
	int rc = env_take_header(&env->event_id, req, first, &why);

	if (rc > 0)
		rc = env_take_header(&env->event_id, req, second, &why);
	if (env_need_id(rc, &why, reason) < 0)
		return -1;
	env_optional(env, env_take_json(&env->event_type, env_json_path(b, "type"), false, &why),
		     "type", &why);
	/* data.id is free-form in the spec: other types are ignored (and no object id kept) */
	(void)env_take_json(&env->object_id, env_json_path(b, "data.id"), false, &why);
	env_optional(env, env_take_version(env, env_json_path(b, "timestamp")), "timestamp",
		     &env_version_why);
	return 0;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	bool svix = svix_names(in->provider);
	unsigned char *key = NULL, *msg = NULL;
	size_t klen, kcap, msglen;
	char tsbuf[32], b64[BASE64_ENCODED_SIZE(ED25519_SIG_LEN)];
	int rc = -1;
	standard_key_kind kind;

	if (in->event_id == NULL || in->event_id[0] == '\0') {
		snprintf(errbuf, errlen, "standard webhooks signing needs an event id");
		return -1;
	}
	snprintf(tsbuf, sizeof(tsbuf), ".%lld.", (long long)in->timestamp);
	kind = standard_key_decode(in->secret, in->secret_len, STANDARD_KEY_SIGN, &key, &klen,
				   &kcap);
	if (kind == STANDARD_KEY_HMAC) {
		hmac_part parts[3] = {{in->event_id, strlen(in->event_id)},
				      {tsbuf, strlen(tsbuf)},
				      {in->body, in->body_len}};

		if (sign_mac_b64(HMAC_SHA256, key, klen, parts, 3, b64) < 0) {
			snprintf(errbuf, errlen, "could not compute signature");
			goto out;
		}
		sign_add(out, svix ? "svix-signature" : "webhook-signature",
			 xasprintf("v1,%s", b64));
	} else if (kind == STANDARD_KEY_ED25519) {
		unsigned char sig[ED25519_SIG_LEN];
		size_t idlen = strlen(in->event_id), tl = strlen(tsbuf);

		msglen = idlen + tl + in->body_len;
		msg = xmalloc(msglen + 1);
		memcpy(msg, in->event_id, idlen);
		memcpy(msg + idlen, tsbuf, tl);
		if (in->body_len > 0)
			memcpy(msg + idlen + tl, in->body, in->body_len);
		if (ed25519_sign(key, msg, msglen, sig) < 0) {
			snprintf(errbuf, errlen, "could not compute signature");
			goto out;
		}
		base64_encode(sig, sizeof(sig), b64);
		sign_add(out, svix ? "svix-signature" : "webhook-signature",
			 xasprintf("v1a,%s", b64));
	} else {
		snprintf(errbuf, errlen, "secret is not a usable standard webhooks signing key");
		goto out;
	}
	sign_add_opt(out, svix ? "svix-id" : "webhook-id", in->event_id);
	sign_add(out, svix ? "svix-timestamp" : "webhook-timestamp",
		 xasprintf("%lld", (long long)in->timestamp));
	rc = 0;
out:
	secure_wipe(key, kcap);
	free(key);
	free(msg);
	return rc;
}

/* both families: either can arrive at either provider's endpoint */
static const char *const headers[] = {"webhook-id", "webhook-timestamp", "svix-id",
				      "svix-timestamp", NULL};

/* rows alike but for the name: verify and sign read the id for the header names */
#define STANDARD_ROW(n)                                                                            \
	{                                                                                          \
		.name = (n), .tolerance = 300, .headers = headers,                                 \
		.id_signed = provider_id_signed, .sends_version = provider_always,                 \
		.replay = REPLAY_BODY, .verify = verify, .extract = extract, .sign = sign,         \
		.klass = "Standard Webhooks (HMAC of <id>.<ts>.<body>)"                            \
	}

const provider_ops provider_standard = STANDARD_ROW("standard");
const provider_ops provider_svix = STANDARD_ROW("svix");
const provider_ops provider_clerk = STANDARD_ROW("clerk");
const provider_ops provider_resend = STANDARD_ROW("resend");
