/* SPDX-License-Identifier: ISC */
/*
 * adyen.c - Adyen standard notifications (payments webhooks)
 *
 * A batch: {"live", "notificationItems": [{"NotificationRequestItem":
 * {...}}, ...]}.  Each item carries its own signature in
 * additionalData.hmacSignature: the base64 HMAC-SHA256, keyed with the HMAC
 * key as the Customer Area shows it (hex: the key is its bytes), of
 * "pspReference:originalReference:merchantAccountCode:merchantReference:
 * value:currency:eventCode:success" (amount.value and amount.currency; an
 * absent field is empty), as the library's HmacValidator computes it.
 * Every item must verify, or the request is refused and nothing stored.
 * No timestamp: each item's id is its signed eventCode, pspReference and
 * success, so a replay is a duplicate.  Adyen wants "[accepted]" back.
 */
#include "base64.h"
#include "batch.h"
#include "ct.h"
#include "hex.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 128 /* bytes of a hex-decoded HMAC key */

/*
 * A field as JavaScript's Array.join writes it: a string's text, a
 * number's or boolean's source (integers only: "1e3" would be joined as
 * "1000"), "" when absent or null.  0 (caller frees *out), or -1.
 */
static int
joined(jval v, char **out)
{
	size_t len;

	if (!v.present || v.v.type == JSCAN_NULL) {
		*out = xstrdup("");
		return 0;
	}
	if (v.v.type == JSCAN_STRING)
		return jscan_string(&v.v, out, &len);
	if ((v.v.type == JSCAN_NUMBER && jscan_is_integer(&v.v) &&
	     !(v.v.len == 2 && memcmp(v.v.p, "-0", 2) == 0)) ||
	    v.v.type == JSCAN_TRUE || v.v.type == JSCAN_FALSE) {
		*out = xstrndup(v.v.p, v.v.len);
		return 0;
	}
	return -1;
}

static const char *const signed_fields[] = {
	"pspReference", "originalReference", "merchantAccountCode", "merchantReference",
	"amount.value", "amount.currency",   "eventCode",	    "success",
};
#define N_SIGNED (sizeof(signed_fields) / sizeof(signed_fields[0]))

/* the colon-joined signed fields of item it (caller frees); NULL when one is not a scalar */
static char *
data_to_sign(const jval *it, size_t *len)
{
	char *parts[N_SIGNED], *out = NULL;
	size_t total = 0, n = 0;

	if (!env_json_path(it, "amount").present)
		return NULL; /* the library reads amount.value and throws */
	for (; n < N_SIGNED; n++) {
		if (joined(env_json_path(it, signed_fields[n]), &parts[n]) < 0)
			goto out;
		total += strlen(parts[n]) + 1;
	}
	out = xmalloc(total);
	*len = 0;
	for (size_t i = 0; i < N_SIGNED; i++) {
		size_t l = strlen(parts[i]);

		memcpy(out + *len, parts[i], l);
		*len += l;
		out[(*len)++] = ':';
	}
	out[--(*len)] = '\0';
out:
	for (size_t i = 0; i < n; i++)
		free(parts[i]);
	return out;
}

/* the base64 HMAC of data keyed with hex key k; 0, or -1 when k is not hex */
static int
item_mac(const unsigned char *k, size_t klen, const char *data, size_t len,
	 unsigned char mac[HMAC_MAX_LEN])
{
	unsigned char key[KEY_MAX];
	long n = hex_decode((const char *)k, klen, key, sizeof(key));
	hmac_part part = {data, len};
	int rc;

	if (n <= 0)
		return -1;
	rc = hmac_compute(HMAC_SHA256, key, (size_t)n, &part, 1, mac);
	secure_wipe(key, sizeof(key));
	return rc;
}

static const batch_rows rows;

/* an object with no member: "{}", "{ }" */
static bool
empty_object(const jval *o)
{
	size_t i = 1;

	while (i < o->v.len && strchr(" \t\r\n", o->v.p[i]) != NULL)
		i++;
	return o->v.p[i] == '}';
}

/* the endpoint's keys, hex-decoded once per request (n < 0: not hex, matches nothing) */
typedef struct hexkey {
	unsigned char k[KEY_MAX];
	long n;
} hexkey;

/* does item it carry a valid signature by one of keys[0..nkeys)?  -1 no, else the index */
static long
item_key(const jval *it, const hexkey *keys, size_t nkeys, const char **why, verify_status *st)
{
	jval sigv = env_json_path(it, "additionalData.hmacSignature");
	unsigned char want[HMAC_MAX_LEN + 3];
	char *sig = NULL, *data;
	size_t siglen = 0, dlen = 0;
	long wlen, found = -1;

	*st = VERIFY_MALFORMED;
	if (!sigv.present) {
		*st = VERIFY_UNSIGNED;
		*why = "missing additionalData.hmacSignature in an item";
		return -1;
	}
	if (!env_json_text(sigv, &sig, &siglen)) {
		*why = "malformed hmacSignature";
		return -1;
	}
	wlen = base64_decode(sig, siglen, want, sizeof(want));
	free(sig);
	if (wlen != 32) {
		*why = "malformed hmacSignature";
		return -1;
	}
	data = data_to_sign(it, &dlen);
	if (data == NULL) {
		*why = "an item's signed fields are not text";
		return -1;
	}
	for (size_t i = 0; i < nkeys && found < 0; i++) {
		unsigned char mac[HMAC_MAX_LEN];
		hmac_part part = {data, dlen};

		if (keys[i].n > 0 &&
		    hmac_compute(HMAC_SHA256, keys[i].k, (size_t)keys[i].n, &part, 1, mac) == 0 &&
		    ct_equal(mac, 32, want, 32))
			found = (long)i;
		secure_wipe(mac, sizeof(mac));
	}
	free(data);
	if (found < 0) {
		*st = VERIFY_MISMATCH;
		*why = "signature mismatch";
	}
	return found;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	jval body = env_parse_object(req->body, req->body_len);
	jval items = batch_items(&rows, &body), it;
	const char *pos = NULL, *why = NULL;
	size_t count = 0, nkeys = secret_count(ep->secrets);
	hexkey *keys;
	long first = -1, k;
	verify_status st = VERIFY_OK;
	int rc;

	if (!items.present)
		return scheme_fail(res, VERIFY_MALFORMED,
				   "body is not a batch of notification items");
	keys = xcalloc(nkeys, sizeof(*keys));
	for (size_t i = 0; i < nkeys; i++) {
		size_t klen;
		const unsigned char *s = secret_get(ep->secrets, i, &klen);

		keys[i].n = hex_decode((const char *)s, klen, keys[i].k, sizeof(keys[i].k));
	}
	while ((rc = batch_next_event(&rows, &items, &pos, &it)) == 0) {
		if (++count > ENVELOPE_BATCH_MAX) {
			st = VERIFY_MALFORMED;
			why = "too many notification items";
			break;
		}
		if ((k = item_key(&it, keys, nkeys, &why, &st)) < 0)
			break;
		if (first < 0)
			first = k;
	}
	secure_wipe(keys, nkeys * sizeof(*keys));
	free(keys);
	if (first < 0 || why != NULL) {
		if (why == NULL && rc < 0)
			return scheme_fail(res, VERIFY_MALFORMED,
					   "an item is not a NotificationRequestItem");
		if (why == NULL)
			return scheme_fail(res, VERIFY_MALFORMED, "no notification items");
		return scheme_fail(res, st, why);
	}
	if (rc < 0)
		return scheme_fail(res, VERIFY_MALFORMED,
				   "an item is not a NotificationRequestItem");
	return scheme_pass(res, (size_t)first);
}

/* "<eventCode>:<pspReference>:<success>": Adyen's identity of a notification */
static int
extract(const jval *it, envelope *env, const char **reason)
{
	char *code = NULL, *psp = NULL, *ok = NULL, *id = NULL, *orig = NULL;
	const char *why = NULL;
	int rc = -1;

	if (joined(env_json_path(it, "eventCode"), &code) < 0 ||
	    joined(env_json_path(it, "pspReference"), &psp) < 0 ||
	    joined(env_json_path(it, "success"), &ok) < 0 || *code == '\0' || *psp == '\0')
		ENV_REFUSE("no event id");
	id = xasprintf("%s:%s:%s", code, psp, ok);
	if (env_need_id(env_take(&env->event_id, id, strlen(id), &why), &why, reason) < 0)
		goto out;
	env_optional(env, env_take(&env->event_type, code, strlen(code), &why), "type", &why);
	/* the payment: a modification's originalReference, else the pspReference */
	if (joined(env_json_path(it, "originalReference"), &orig) == 0 && *orig != '\0')
		env_optional(env, env_take(&env->object_id, orig, strlen(orig), &why), "object id",
			     &why);
	else
		env_optional(env, env_take(&env->object_id, psp, strlen(psp), &why), "object id",
			     &why);
	env_optional(env, env_take_version(env, env_json_path(it, "eventDate")), "eventDate",
		     &env_version_why);
	rc = 0;
out:
	free(code);
	free(psp);
	free(ok);
	free(id);
	free(orig);
	return rc;
}

static const batch_rows rows = {
	.items = "notificationItems",
	.item = "NotificationRequestItem",
	.extract = extract,
	.answer = "[accepted]",
};

/*
 * hookinbox-send: the payload's items signed in place, each getting (or
 * replacing) additionalData.hmacSignature; the rest of the bytes as they are.
 */
static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	jval body = env_parse_object(in->body, in->body_len);
	jval items = batch_items(&rows, &body), it;
	const char *pos = NULL, *src = (const char *)in->body;
	size_t cap = in->body_len + 1, used = 0, from = 0;
	char *dst;
	int rc;

	if (!items.present) {
		snprintf(errbuf, errlen, "adyen: the payload has no notificationItems array");
		return -1;
	}
	dst = xmalloc(cap);
	while ((rc = batch_next_event(&rows, &items, &pos, &it)) == 0) {
		jval ad = env_json_path(&it, "additionalData"), old;
		unsigned char mac[HMAC_MAX_LEN];
		char b64[BASE64_ENCODED_SIZE(32)], *ins, *data;
		size_t at, skip = 0, dlen = 0;

		data = data_to_sign(&it, &dlen);
		if (data == NULL || item_mac(in->secret, in->secret_len, data, dlen, mac) < 0) {
			free(data);
			free(dst);
			snprintf(
				errbuf, errlen,
				"adyen: an item's signed fields are not text, or the key is not hex");
			return -1;
		}
		free(data);
		base64_encode(mac, 32, b64);
		secure_wipe(mac, sizeof(mac));
		if (ad.present && ad.v.type == JSCAN_OBJECT) {
			old = env_json_path(&ad, "hmacSignature");
			if (old.present) {
				at = (size_t)(old.v.p - src);
				skip = old.v.len;
				ins = xasprintf("\"%s\"", b64);
			} else {
				at = (size_t)(ad.v.p - src) + 1;
				ins = xasprintf("\"hmacSignature\":\"%s\"%s", b64,
						empty_object(&ad) ? "" : ",");
			}
		} else {
			at = (size_t)(it.v.p - src) + 1;
			ins = xasprintf("\"additionalData\":{\"hmacSignature\":\"%s\"}%s", b64,
					empty_object(&it) ? "" : ",");
		}
		cap += strlen(ins);
		dst = xrealloc(dst, cap);
		memcpy(dst + used, src + from, at - from);
		used += at - from;
		memcpy(dst + used, ins, strlen(ins));
		used += strlen(ins);
		from = at + skip;
		free(ins);
	}
	if (rc < 0) {
		free(dst);
		snprintf(errbuf, errlen, "adyen: an item is not a NotificationRequestItem object");
		return -1;
	}
	memcpy(dst + used, src + from, in->body_len - from);
	used += in->body_len - from;
	out->body = (unsigned char *)dst;
	out->body_len = used;
	return 0;
}

static const char *const headers[] = {NULL};

const provider_ops provider_adyen = {
	.name = "adyen",
	.klass = "batch: HMAC of each item's fields",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_always,
	.replay = REPLAY_BODY,
	.verify = verify,
	.sign = sign,
	.id_in_body = true,
	.batch = &rows,
};
