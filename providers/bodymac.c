/* SPDX-License-Identifier: ISC */
/*
 * bodymac.c - the class of schemes that are one header carrying an HMAC
 * of the body (scheme.h's body_mac): the generic hmac provider and every
 * provider that is only such a row
 */
#include "base64.h"
#include "ct.h"
#include "fields.h"
#include "hex.h"
#include "scheme.h"
#include "template.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* a secret shown as hex is this long at most (Adyen's are 64 bytes) */
#define HEX_KEY_MAX 128

bool
scheme_body_mac_id_signed(const body_mac *m)
{
	char err[128];
	template t;

	if (m->id_header == NULL)
		return true;
	return m->signed_content != NULL &&
	       template_parse(m->signed_content, &t, err, sizeof(err)) == 0 &&
	       template_signs_header(&t, m->id_header);
}

const char *
scheme_body_mac_check(const body_mac *m, const provider_endpoint *ep)
{
	char err[256];
	template t;

	if (m->signed_content == NULL)
		return m->ts_header != NULL
			       ? "timestamp_header needs signed_content with {timestamp}"
			       : NULL;
	/* the configuration refused a bad template at its line already */
	if (template_parse(m->signed_content, &t, err, sizeof(err)) < 0)
		return "signed_content is not a valid template";
	if (template_has(&t, TPL_TIMESTAMP) && m->ts_header == NULL)
		return "signed_content has {timestamp}: set timestamp_header";
	if (!template_has(&t, TPL_TIMESTAMP) && m->ts_header != NULL)
		return "timestamp_header is set but signed_content has no {timestamp} (an unsigned "
		       "timestamp guards nothing)";
	if (template_has(&t, TPL_URL) && ep->public_url == NULL)
		return "signed_content has {url}: set public_url (the URL the provider signs)";
	if (m->header != NULL && template_signs_header(&t, m->header))
		return "signed_content cannot sign the signature header itself";
	return NULL;
}

/* one signature entry: [prefix]<enc>; the decoded MAC in want, or -1 */
static int
decode_entry(const body_mac *m, span s, unsigned char want[HMAC_MAX_LEN + 3])
{
	size_t plen = m->prefix != NULL ? strlen(m->prefix) : 0;
	long n;

	while (m->list_sep != 0 && s.len > 0 && s.p[0] == ' ') {
		s.p++;
		s.len--;
	}
	if (s.len < plen || strncmp(s.p, m->prefix != NULL ? m->prefix : "", plen) != 0)
		return -1;
	if (m->enc == HMAC_HEX)
		n = hex_decode(s.p + plen, s.len - plen, want, HMAC_MAX_LEN + 3);
	else
		n = base64_decode(s.p + plen, s.len - plen, want, HMAC_MAX_LEN + 3);
	return n >= 0 && (size_t)n == hmac_len(m->alg) ? 0 : -1;
}

/* the key of secret i: as it is, or its hex decoded into buf; NULL when not hex */
static const unsigned char *
row_key(const body_mac *m, const unsigned char *s, size_t slen, unsigned char *buf, size_t *klen)
{
	long n;

	if (!m->hex_key) {
		*klen = slen;
		return s;
	}
	n = hex_decode((const char *)s, slen, buf, HEX_KEY_MAX);
	if (n <= 0)
		return NULL;
	*klen = (size_t)n;
	return buf;
}

/* the signatures of one header into want[*nwant...]; -1 when there are too many */
static int
collect(const body_mac *m, const char *v, size_t len, unsigned char want[][HMAC_MAX_LEN + 3],
	int *nwant)
{
	span ent[SCHEME_ENTRIES_MAX];
	int n;

	if (m->list_sep == 0) {
		ent[0] = (span){v, len};
		n = 1;
	} else if ((n = scheme_split(v, len, m->list_sep, ent)) < 0) {
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (*nwant == SCHEME_ENTRIES_MAX)
			return -1;
		if (decode_entry(m, ent[i], want[*nwant]) == 0)
			(*nwant)++;
	}
	return 0;
}

/* the signatures of the row's header, or of each of its numbered headers */
static int
collect_all(const body_mac *m, const request_view *req, unsigned char want[][HMAC_MAX_LEN + 3],
	    int *nwant, verify_result *res)
{
	size_t nlen = strlen(m->header);
	bool seen = false;

	for (unsigned i = 1; i <= (m->numbered > 0 ? m->numbered : 1); i++) {
		char name[128];
		bool too_long = false;
		size_t len;
		const char *v;

		if (m->numbered > 0 && nlen < sizeof(name) - 8)
			snprintf(name, sizeof(name), "%.*s%u", (int)(nlen - 1), m->header, i);
		else
			snprintf(name, sizeof(name), "%s", m->header);
		/* numbered headers come in order: the first one missing ends them */
		if ((v = scheme_header(req, name, &len, &too_long)) == NULL) {
			if (m->numbered > 0)
				break;
			continue;
		}
		seen = true;
		if (too_long)
			return scheme_fail(res, VERIFY_MALFORMED, "signature header too long");
		if (collect(m, v, len, want, nwant) < 0)
			return scheme_fail(res, VERIFY_MALFORMED, "too many signatures");
	}
	if (!seen)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing signature header");
	return 0;
}

/* a request header for {header:Name}; a value too long is remembered as malformed */
typedef struct header_lookup {
	const request_view *req;
	bool too_long;
} header_lookup;

static bool
request_header(void *ctx, const char *name, hmac_part *value)
{
	header_lookup *hl = ctx;
	size_t len;
	const char *v = scheme_header(hl->req, name, &len, &hl->too_long);

	if (v == NULL)
		return false;
	*value = (hmac_part){v, len};
	return true;
}

/*
 * The signed content of the row's template for req, into parts: 0, or -1
 * with *res filled (a missing header 401, a malformed one 400, a
 * timestamp outside the window 401).  The parts point into the row, the
 * endpoint and the request.
 */
static int
template_content(const body_mac *m, const provider_endpoint *ep, const request_view *req,
		 hmac_part parts[TEMPLATE_PARTS_MAX], size_t *n, verify_result *res)
{
	char err[256], name[TEMPLATE_HEADER_NAME_MAX + 1];
	template t;
	header_lookup hl = {req, false};
	template_values v = {.body = {req->body, req->body_len},
			     .method = "POST", /* the only method verified (fcgi/handler.c) */
			     .header = request_header,
			     .ctx = &hl};

	/* what scheme_body_mac_check refuses at load, refused here too: nothing verifies */
	if (template_parse(m->signed_content, &t, err, sizeof(err)) < 0 ||
	    template_has(&t, TPL_TIMESTAMP) != (m->ts_header != NULL))
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint's signed_content is invalid");
	if (m->ts_header != NULL) {
		bool too_long = false;
		size_t len;
		int64_t ts;
		verify_status st;
		const char *tsv = scheme_header(req, m->ts_header, &len, &too_long);

		if (tsv == NULL)
			return scheme_fail(res, VERIFY_UNSIGNED, "missing timestamp header");
		if (too_long || (m->ts_ms ? scheme_timestamp_ms(tsv, len, &ts)
					  : scheme_timestamp(tsv, len, &ts)) < 0)
			return scheme_fail(res, VERIFY_MALFORMED, "bad timestamp header");
		if ((st = scheme_window(ep, req, m->ts_ms ? ts / 1000 : ts)) != VERIFY_OK)
			return scheme_window_fail(res, st);
		/* signed as sent: strict digits, so that is the number itself */
		v.timestamp = (hmac_part){tsv, len};
	}
	if (template_has(&t, TPL_URL)) {
		if (ep->public_url == NULL)
			return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url");
		v.url = (hmac_part){ep->public_url, strcspn(ep->public_url, "?")};
		if (req->query != NULL && req->query[0] != '\0')
			v.query = (hmac_part){req->query, strlen(req->query)};
	}
	if (template_parts(&t, &v, parts, n, name) < 0)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing signed header");
	if (hl.too_long)
		return scheme_fail(res, VERIFY_MALFORMED, "signed header too long");
	return 0;
}

int
scheme_verify_body_mac(const body_mac *m, const provider_endpoint *ep, const request_view *req,
		       verify_result *res)
{
	size_t maclen = hmac_len(m->alg);
	unsigned char want[SCHEME_ENTRIES_MAX][HMAC_MAX_LEN + 3];
	int nwant = 0;
	hmac_part parts[TEMPLATE_PARTS_MAX] = {{req->body, req->body_len}};
	size_t nparts = 1;

	if (m->header == NULL)
		return scheme_fail(res, VERIFY_MISMATCH,
				   "endpoint has no signature header configured");
	if (collect_all(m, req, want, &nwant, res) < 0)
		return -1;
	if (nwant == 0)
		return scheme_fail(res, VERIFY_MALFORMED,
				   m->prefix != NULL ? "no signature with the expected prefix"
						     : "malformed signature header");
	if (m->signed_content != NULL) {
		if (template_content(m, ep, req, parts, &nparts, res) < 0)
			return -1;
	} else if (m->url_after) {
		if (ep->public_url == NULL)
			return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no public_url");
		parts[nparts++] = (hmac_part){ep->public_url, strlen(ep->public_url)};
	}
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		unsigned char mac[HMAC_MAX_LEN], buf[HEX_KEY_MAX];
		size_t slen, klen;
		const unsigned char *s = secret_get(ep->secrets, i, &slen);
		const unsigned char *key = row_key(m, s, slen, buf, &klen);
		bool match = false;

		if (key == NULL)
			continue; /* a secret that is not hex matches nothing */
		if (hmac_compute(m->alg, key, klen, parts, nparts, mac) < 0) {
			secure_wipe(buf, sizeof(buf));
			return scheme_fail(res, VERIFY_MISMATCH, "signature computation failed");
		}
		for (int j = 0; j < nwant && !match; j++)
			match = ct_equal(mac, maclen, want[j], maclen);
		secure_wipe(mac, sizeof(mac));
		secure_wipe(buf, sizeof(buf));
		if (match)
			return scheme_pass(res, i);
	}
	return scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
}

int
scheme_extract_body_mac(const body_mac *m, const request_view *req, envelope *env,
			const char **reason)
{
	const char *why = NULL;
	jval body = env_no_value;
	const jval *b = &body;
	int rc = 1;

	/* the body is read only when a field comes from it */
	if (m->id_field != NULL || m->type_field != NULL || m->object_field != NULL ||
	    m->version_field != NULL)
		body = env_body(req, env);
	if (m->id_header == NULL && m->id_field == NULL) {
		if (env_take_body_hash(&env->event_id, req) < 0)
			return *reason = "could not hash the body", -1;
		rc = 0;
	}
	if (m->id_header != NULL)
		rc = env_take_header(&env->event_id, req, m->id_header, &why);
	if (rc > 0 && m->id_field != NULL) {
		if (!b->present)
			return *reason = "body is not a JSON object", -1;
		rc = env_take_json(&env->event_id, env_json_path(b, m->id_field), true, &why);
	}
	if (env_need_id(rc, &why, reason) < 0)
		return -1;
	rc = 1;
	if (m->type_header != NULL)
		rc = env_take_header(&env->event_type, req, m->type_header, &why);
	if (rc > 0 && m->type_field != NULL)
		rc = env_take_json(&env->event_type, env_json_path(b, m->type_field), false, &why);
	env_optional(env, rc, "type", &why);
	if (m->object_field != NULL)
		env_optional(env,
			     env_take_json(&env->object_id, env_json_path(b, m->object_field), true,
					   &why),
			     "object id", &why);
	if (m->version_field != NULL)
		env_optional(env, env_take_version(env, env_json_path(b, m->version_field)),
			     "version", &env_version_why);
	return 0;
}

/* what a sender signs for {header:Name}: its timestamp, id, type or a header it adds */
typedef struct sign_lookup {
	const body_mac *m;
	const sign_input *in;
	const char *ts;
} sign_lookup;

static bool
named(const char *a, const char *b)
{
	return a != NULL && strcasecmp(a, b) == 0;
}

static bool
sent_header(void *ctx, const char *name, hmac_part *value)
{
	const sign_lookup *sl = ctx;
	const char *v = NULL;
	size_t nlen = strlen(name);

	if (named(sl->m->ts_header, name))
		v = sl->ts;
	else if (named(sl->m->id_header, name))
		v = sl->in->event_id;
	else if (named(sl->m->type_header, name))
		v = sl->in->event_type;
	for (size_t i = 0; v == NULL && i < sl->in->n_headers; i++) {
		const char *h = sl->in->headers[i];

		if (strncasecmp(h, name, nlen) == 0 && h[nlen] == ':')
			for (v = h + nlen + 1; *v == ' ' || *v == '\t'; v++)
				;
	}
	if (v == NULL)
		return false;
	*value = (hmac_part){v, strlen(v)};
	return true;
}

/* the content a sender signs with the row's template, into parts */
static int
template_sent(const body_mac *m, const sign_input *in, const char *ts,
	      hmac_part parts[TEMPLATE_PARTS_MAX], size_t *n, char *errbuf, size_t errlen)
{
	char name[TEMPLATE_HEADER_NAME_MAX + 1];
	template t;
	sign_lookup sl = {m, in, ts};
	template_values v = {.body = {in->body, in->body_len},
			     .timestamp = {ts, strlen(ts)},
			     .method = "POST",
			     .header = sent_header,
			     .ctx = &sl};

	if (template_parse(m->signed_content, &t, errbuf, errlen) < 0)
		return -1;
	if (template_has(&t, TPL_TIMESTAMP) && m->ts_header == NULL) {
		snprintf(errbuf, errlen, "signed_content signs {timestamp}: give its header");
		return -1;
	}
	if (template_has(&t, TPL_URL)) {
		if (in->url == NULL) {
			snprintf(errbuf, errlen, "signed_content signs the URL: give it");
			return -1;
		}
		/* the URL requested is public_url and the query as the intake sees them */
		v.url = (hmac_part){in->url, strlen(in->url)};
	}
	if (template_parts(&t, &v, parts, n, name) < 0) {
		snprintf(errbuf, errlen, "signed_content signs header %s: give it (--header)",
			 name);
		return -1;
	}
	return 0;
}

int
scheme_sign_body_mac(const body_mac *m, const sign_input *in, sign_output *out, char *errbuf,
		     size_t errlen)
{
	char mac[BASE64_ENCODED_SIZE(HMAC_MAX_LEN) > 2 * HMAC_MAX_LEN + 1
			 ? BASE64_ENCODED_SIZE(HMAC_MAX_LEN)
			 : 2 * HMAC_MAX_LEN + 1];
	char ts[32];
	unsigned char buf[HEX_KEY_MAX];
	size_t klen;
	const unsigned char *key = row_key(m, in->secret, in->secret_len, buf, &klen);
	hmac_part parts[TEMPLATE_PARTS_MAX] = {{in->body, in->body_len},
					       {in->url, in->url ? strlen(in->url) : 0}};
	size_t nparts = m->url_after ? 2 : 1;
	sign_input keyed = *in;
	int rc;

	snprintf(ts, sizeof(ts), "%lld", (long long)in->timestamp * (m->ts_ms ? 1000 : 1));
	if (m->header == NULL) {
		snprintf(errbuf, errlen, "hmac signing needs a header name");
		goto fail;
	}
	if (m->signed_content != NULL) {
		if (template_sent(m, in, ts, parts, &nparts, errbuf, errlen) < 0)
			goto fail;
	} else if (m->url_after && in->url == NULL) {
		snprintf(errbuf, errlen, "this provider signs the URL: give it");
		goto fail;
	}
	if (key == NULL) {
		snprintf(errbuf, errlen, "the secret is not hex");
		goto fail;
	}
	keyed.secret = key;
	keyed.secret_len = klen;
	if (m->enc == HMAC_HEX)
		rc = sign_mac_hex(m->alg, &keyed, parts, nparts, mac);
	else
		rc = sign_mac_b64(m->alg, key, klen, parts, nparts, mac);
	secure_wipe(buf, sizeof(buf));
	if (rc < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, m->header, xasprintf("%s%s", m->prefix != NULL ? m->prefix : "", mac));
	if (m->ts_header != NULL)
		sign_add(out, m->ts_header, xstrdup(ts));
	sign_add_opt(out, m->id_header, in->event_id);
	sign_add_opt(out, m->type_header, in->event_type);
	return 0;
fail:
	secure_wipe(buf, sizeof(buf));
	return -1;
}
