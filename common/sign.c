/*
 * sign.c - the signature headers a provider would send with a body
 */
#include "sign.h"

#include "form.h"
#include "hmac.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

standard_key_kind
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

char *
sign_twilio_body_url(const char *url, const unsigned char *body, size_t len)
{
	unsigned char d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];

	if (sha256_digest(body, len, d) < 0)
		abort(); /* only fails when OpenSSL itself is broken */
	hex_encode(d, sizeof(d), hex);
	return xasprintf("%s%cbodySHA256=%s", url, strchr(url, '?') != NULL ? '&' : '?', hex);
}

static void
add(sign_output *out, const char *name, char *value)
{
	/* SIGN_MAX_HEADERS bounds what any provider below adds */
	out->h[out->n].name = name;
	out->h[out->n].value = value;
	out->n++;
}

static void
add_opt(sign_output *out, const char *name, const char *value)
{
	if (name != NULL && value != NULL)
		add(out, name, xstrdup(value));
}

static int
mac_hex(hmac_alg alg, const sign_input *in, const hmac_part *parts, size_t n, char *hex)
{
	unsigned char mac[HMAC_MAX_LEN];

	if (hmac_compute(alg, in->secret, in->secret_len, parts, n, mac) < 0)
		return -1;
	hex_encode(mac, hmac_len(alg), hex);
	secure_wipe(mac, sizeof(mac));
	return 0;
}

static int
mac_b64(hmac_alg alg, const unsigned char *key, size_t klen, const hmac_part *parts, size_t n,
	char *b64)
{
	unsigned char mac[HMAC_MAX_LEN];

	if (hmac_compute(alg, key, klen, parts, n, mac) < 0)
		return -1;
	base64_encode(mac, hmac_len(alg), b64);
	secure_wipe(mac, sizeof(mac));
	return 0;
}

static int
sign_standard(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	bool svix = in->provider == PROVIDER_SVIX;
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
	kind = standard_key_decode(in->secret, in->secret_len, STANDARD_KEY_SIGN, &key, &klen, &kcap);
	if (kind == STANDARD_KEY_HMAC) {
		hmac_part parts[3] = {{in->event_id, strlen(in->event_id)},
				      {tsbuf, strlen(tsbuf)},
				      {in->body, in->body_len}};

		if (mac_b64(HMAC_SHA256, key, klen, parts, 3, b64) < 0) {
			snprintf(errbuf, errlen, "could not compute signature");
			goto out;
		}
		add(out, svix ? "svix-signature" : "webhook-signature", xasprintf("v1,%s", b64));
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
		add(out, svix ? "svix-signature" : "webhook-signature", xasprintf("v1a,%s", b64));
	} else {
		snprintf(errbuf, errlen, "secret is not a usable standard webhooks signing key");
		goto out;
	}
	add_opt(out, svix ? "svix-id" : "webhook-id", in->event_id);
	add(out, svix ? "svix-timestamp" : "webhook-timestamp",
	    xasprintf("%lld", (long long)in->timestamp));
	rc = 0;
out:
	secure_wipe(key, kcap);
	free(key);
	free(msg);
	return rc;
}

static int
sign_twilio(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	form params = {NULL, 0}, query = {NULL, 0};
	const char *q;
	hmac_part *parts = NULL;
	char b64[BASE64_ENCODED_SIZE(20)];
	int rc = -1;

	if (in->url == NULL) {
		snprintf(errbuf, errlen, "twilio signing needs the URL");
		return -1;
	}
	q = strchr(in->url, '?');
	if (q != NULL && form_parse(q + 1, strlen(q + 1), &query) < 0) {
		snprintf(errbuf, errlen, "too many query parameters");
		goto out;
	}
	if (form_get(&query, "bodySHA256") == NULL) {
		if (form_parse((const char *)in->body, in->body_len, &params) < 0) {
			snprintf(errbuf, errlen, "too many form parameters");
			goto out;
		}
		form_sort_unique(&params);
	}
	parts = xcalloc(1 + 2 * params.n, sizeof(*parts));
	parts[0].data = in->url;
	parts[0].len = strlen(in->url);
	for (size_t i = 0; i < params.n; i++) {
		parts[1 + 2 * i].data = params.params[i].key;
		parts[1 + 2 * i].len = params.params[i].key_len;
		parts[2 + 2 * i].data = params.params[i].value;
		parts[2 + 2 * i].len = params.params[i].value_len;
	}
	if (mac_b64(HMAC_SHA1, in->secret, in->secret_len, parts, 1 + 2 * params.n, b64) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		goto out;
	}
	add(out, "X-Twilio-Signature", xstrdup(b64));
	add_opt(out, "I-Twilio-Idempotency-Token", in->event_id);
	rc = 0;
out:
	free(parts);
	form_release(&params);
	form_release(&query);
	return rc;
}

int
sign_headers(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	char hex[2 * HMAC_MAX_LEN + 1], b64[BASE64_ENCODED_SIZE(HMAC_MAX_LEN)], pre[48];
	hmac_part body = {in->body, in->body_len};

	out->n = 0;
	switch (in->provider) {
	case PROVIDER_STRIPE: {
		hmac_part parts[2] = {{pre, 0}, body};

		snprintf(pre, sizeof(pre), "%lld.", (long long)in->timestamp);
		parts[0].len = strlen(pre);
		if (mac_hex(HMAC_SHA256, in, parts, 2, hex) < 0)
			break;
		add(out, "Stripe-Signature", xasprintf("t=%lld,v1=%s", (long long)in->timestamp, hex));
		return 0;
	}
	case PROVIDER_GITHUB:
		if (mac_hex(HMAC_SHA256, in, &body, 1, hex) < 0)
			break;
		add(out, "X-Hub-Signature-256", xasprintf("sha256=%s", hex));
		add_opt(out, "X-GitHub-Delivery", in->event_id);
		add_opt(out, "X-GitHub-Event", in->event_type);
		return 0;
	case PROVIDER_STANDARD:
	case PROVIDER_SVIX:
		return sign_standard(in, out, errbuf, errlen);
	case PROVIDER_HMAC: {
		const hmac_conf *h = in->hmac;

		if (h == NULL || h->header == NULL) {
			snprintf(errbuf, errlen, "hmac signing needs a header name");
			return -1;
		}
		if (h->enc == HMAC_HEX) {
			if (mac_hex(h->alg, in, &body, 1, hex) < 0)
				break;
		} else {
			if (mac_b64(h->alg, in->secret, in->secret_len, &body, 1, hex) < 0)
				break;
		}
		add(out, h->header, xasprintf("%s%s", h->prefix != NULL ? h->prefix : "", hex));
		add_opt(out, h->id_header, in->event_id);
		add_opt(out, h->type_header, in->event_type);
		return 0;
	}
	case PROVIDER_SHOPIFY:
		if (mac_b64(HMAC_SHA256, in->secret, in->secret_len, &body, 1, b64) < 0)
			break;
		add(out, "X-Shopify-Hmac-Sha256", xstrdup(b64));
		add_opt(out, "X-Shopify-Webhook-Id", in->event_id);
		add_opt(out, "X-Shopify-Topic", in->event_type);
		return 0;
	case PROVIDER_SLACK: {
		hmac_part parts[2] = {{pre, 0}, body};

		snprintf(pre, sizeof(pre), "v0:%lld:", (long long)in->timestamp);
		parts[0].len = strlen(pre);
		if (mac_hex(HMAC_SHA256, in, parts, 2, hex) < 0)
			break;
		add(out, "X-Slack-Request-Timestamp", xasprintf("%lld", (long long)in->timestamp));
		add(out, "X-Slack-Signature", xasprintf("v0=%s", hex));
		return 0;
	}
	case PROVIDER_PADDLE: {
		hmac_part parts[2] = {{pre, 0}, body};

		snprintf(pre, sizeof(pre), "%lld:", (long long)in->timestamp);
		parts[0].len = strlen(pre);
		if (mac_hex(HMAC_SHA256, in, parts, 2, hex) < 0)
			break;
		add(out, "Paddle-Signature", xasprintf("ts=%lld;h1=%s", (long long)in->timestamp, hex));
		return 0;
	}
	case PROVIDER_TWILIO:
		return sign_twilio(in, out, errbuf, errlen);
	case PROVIDER_GITLAB: {
		char *tok = xmalloc(in->secret_len + 1);

		memcpy(tok, in->secret, in->secret_len);
		tok[in->secret_len] = '\0';
		add(out, "X-Gitlab-Token", tok);
		add_opt(out, "X-Gitlab-Event-UUID", in->event_id);
		add_opt(out, "X-Gitlab-Event", in->event_type);
		return 0;
	}
	case PROVIDER__COUNT:
		snprintf(errbuf, errlen, "unknown provider");
		return -1;
	}
	snprintf(errbuf, errlen, "could not compute signature");
	return -1;
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
}
