/* SPDX-License-Identifier: ISC */
/*
 * braintree.c - Braintree webhooks
 *
 * A form body: bt_payload, the notification as base64 XML, and
 * bt_signature, "<public key>|<hex HMAC-SHA1 of bt_payload>" (several such
 * pairs joined by '&'), keyed with the SHA-1 of the API private key.  The
 * secret file holds the private key as the Control Panel shows it; every
 * pair is tried with each (the public key only names which key signed).
 * As the SDKs do, a payload with a character outside base64 and '\n' is
 * refused, and a signature of the payload followed by "\n" passes too.
 * No timestamp; the delivery key is "sha256:<hex of bt_payload>" (signed,
 * and the same however the form is encoded); the type is the XML's
 * <kind>, the version its <timestamp>.  Braintree's legacy bt_challenge
 * GET is not answered (it needs the public key).
 */
#include "base64.h"
#include "ct.h"
#include "fields.h"
#include "hex.h"
#include "rfc3339.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"
#include "xmltop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAYLOAD_XML_MAX 65536 /* a decoded notification longer than this is not read */

static bool
payload_chars_ok(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '+' || c == '=' || c == '/' || c == '\n'))
			return false;
	}
	return true;
}

/* HMAC-SHA1 of payload [+ "\n"] keyed with SHA-1(private key) */
static int
bt_mac(const unsigned char *priv, size_t plen, const form_param *payload, bool newline,
       unsigned char mac[HMAC_MAX_LEN])
{
	unsigned char key[20];
	hmac_part parts[2] = {{payload->value, payload->value_len}, {"\n", newline ? 1 : 0}};
	int rc;

	if (hmac_sha1_key(priv, plen, key) < 0)
		return -1;
	rc = hmac_compute(HMAC_SHA1, key, sizeof(key), parts, 2, mac);
	secure_wipe(key, sizeof(key));
	return rc;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	form f = {NULL, 0};
	const form_param *sig, *payload;
	span ent[SCHEME_ENTRIES_MAX];
	unsigned char want[SCHEME_ENTRIES_MAX][20];
	int n, nwant = 0, rc;

	if (form_parse((const char *)req->body, req->body_len, &f) < 0) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "too many form parameters");
		goto out;
	}
	sig = form_get(&f, "bt_signature");
	payload = form_get(&f, "bt_payload");
	if (sig == NULL || payload == NULL) {
		rc = scheme_fail(res, VERIFY_UNSIGNED, "missing bt_signature or bt_payload");
		goto out;
	}
	if (!payload_chars_ok(payload->value, payload->value_len)) {
		rc = scheme_fail(res, VERIFY_MALFORMED,
				 "bt_payload is not base64: no signature checked");
		goto out;
	}
	if (sig->value_len > SCHEME_HEADER_MAX ||
	    (n = scheme_split(sig->value, sig->value_len, '&', ent)) < 0) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "bt_signature too long");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		span k, v;

		if (scheme_split_kv(ent[i], '|', &k, &v) &&
		    hex_decode(v.p, v.len, want[nwant], sizeof(want[nwant])) == 20)
			nwant++;
	}
	if (nwant == 0) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "malformed bt_signature");
		goto out;
	}
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t plen;
		const unsigned char *priv = secret_get(ep->secrets, i, &plen);

		for (int nl = 0; nl < 2; nl++) {
			unsigned char mac[HMAC_MAX_LEN];
			bool match = false;

			if (bt_mac(priv, plen, payload, nl == 1, mac) < 0) {
				rc = scheme_fail(res, VERIFY_MISMATCH,
						 "signature computation failed");
				goto out;
			}
			for (int j = 0; j < nwant && !match; j++)
				match = ct_equal(mac, 20, want[j], 20);
			secure_wipe(mac, sizeof(mac));
			if (match) {
				rc = scheme_pass(res, i);
				goto out;
			}
		}
	}
	rc = scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
out:
	form_release(&f);
	return rc;
}

/* bt_payload is base64 in lines (Ruby's encode64): decoded without its newlines */
static long
decode_payload(const form_param *payload, unsigned char *out, size_t cap)
{
	char *joined = xmalloc(payload->value_len + 1);
	size_t n = 0;
	long rc;

	for (size_t i = 0; i < payload->value_len; i++)
		if (payload->value[i] != '\n')
			joined[n++] = payload->value[i];
	rc = base64_decode(joined, n, out, cap);
	free(joined);
	return rc;
}

/* the text of <name> under <notification> as an envelope field */
static int
xml_field(const char *xml, size_t len, const char *name, envelope_field *out, const char **why)
{
	const char *t;
	size_t tlen;

	if (xml_top_text(xml, len, name, &t, &tlen) < 0)
		return 1;
	return env_take(out, t, tlen, why);
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	form f = {NULL, 0};
	const form_param *payload;
	char *xml = NULL;
	envelope_field ts;
	const char *why = NULL;
	long xlen;
	int rc = -1;

	(void)ep;
	if (form_parse((const char *)req->body, req->body_len, &f) < 0)
		ENV_REFUSE("too many form parameters");
	if ((payload = form_get(&f, "bt_payload")) == NULL)
		ENV_REFUSE("no bt_payload");
	if (env_take_hash(&env->event_id, payload->value, payload->value_len) < 0)
		ENV_REFUSE("could not hash bt_payload");
	rc = 0;
	if (payload->value_len / 4 * 3 > PAYLOAD_XML_MAX) {
		env_note(env, "bt_payload", "over 64 KiB: not read");
		goto out;
	}
	xml = xmalloc(payload->value_len + 3);
	xlen = decode_payload(payload, (unsigned char *)xml, payload->value_len + 3);
	if (xlen < 0) {
		env_note(env, "bt_payload", "not base64");
		goto out;
	}
	env_optional(env, xml_field(xml, (size_t)xlen, "kind", &env->event_type, &why), "kind",
		     &why);
	if (xml_field(xml, (size_t)xlen, "timestamp", &ts, &why) == 0) {
		int64_t us;

		if (rfc3339_us(ts, &us) == 0) {
			env->version = us;
			env->has_version = true;
		} else {
			env_note(env, "timestamp", ENV_WHY_VERSION);
		}
	}
out:
	free(xml);
	form_release(&f);
	return rc;
}

/*
 * The form body with "bt_signature=hookinbox|<hex>" first: the secret is
 * the private key alone, so the public key that names it is made up
 */
static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	form f = {NULL, 0};
	const form_param *payload;
	unsigned char mac[HMAC_MAX_LEN];
	char hex[41], *text;
	int rc = -1;

	if (form_parse((const char *)in->body, in->body_len, &f) < 0 ||
	    (payload = form_get(&f, "bt_payload")) == NULL) {
		snprintf(errbuf, errlen, "braintree signs a form body with bt_payload");
		goto out;
	}
	if (bt_mac(in->secret, in->secret_len, payload, false, mac) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		goto out;
	}
	hex_encode(mac, 20, hex);
	secure_wipe(mac, sizeof(mac));
	/* the signature travels in the body, before the payload as given */
	text = xasprintf("bt_signature=hookinbox%%7C%s&%.*s", hex, (int)in->body_len,
			 (const char *)in->body);
	out->body_len = strlen(text);
	out->body = (unsigned char *)text;
	rc = 0;
out:
	form_release(&f);
	return rc;
}

static const char *const headers[] = {NULL};

const provider_ops provider_braintree = {
	.name = "braintree",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed, /* derived from the signed payload */
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
	.form_bodies = true,
	.id_in_body = true,
};
