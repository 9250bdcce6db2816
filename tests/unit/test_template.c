/* SPDX-License-Identifier: ISC */
/*
 * test_template.c - provider = hmac with signed_content (template.h): the
 * parser, sign.c -> verify.c round trips with timestamps, headers and the
 * URL, and built-in providers written as hmac endpoints checked against
 * those providers' published vectors
 */
#include "headers.h"
#include "secrets.h"
#include "tap.h"

#include "endpoint.h"
#include "provider.h"
#include "secret.h"
#include "sign.h"
#include "template.h"
#include "verify.h"
#include "xalloc.h"

#include <json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOW ((int64_t)1700000000)
#define PUBLIC_URL "https://hooks.example.com/in/tpl"

/* ---- the parser ---- */

static void
good(const char *s, size_t pieces, const char *what)
{
	char err[256] = "";
	template t;
	int rc = template_parse(s, &t, err, sizeof(err));

	ok(rc == 0 && t.n == pieces, "parse %s: %zu pieces (rc %d, %zu, %s)", what, pieces, rc, t.n,
	   err);
}

static void
bad(const char *s, const char *want, const char *what)
{
	char err[256] = "";
	template t;
	int rc = template_parse(s, &t, err, sizeof(err));

	ok(rc < 0 && strstr(err, want) != NULL, "refuse %s: \"%s\" (got \"%s\")", what, want, err);
}

static void
test_parse(void)
{
	char big[TEMPLATE_MAX + 2], many[256] = "{body}";
	template t;
	char err[256];

	good("{body}", 1, "the body alone");
	good("v0:{timestamp}:{body}", 4, "Slack's");
	good("{method}{url}{body}{timestamp}", 4, "HubSpot's");
	good("{header:X-Delivery-Id}.{timestamp}.{body}", 5, "a header");
	good("{{literal}}{body}", 3, "escaped braces");
	/* a brace joins the text before it, which it follows in the template */
	ok(template_parse("a{{b}}c{body}", &t, err, sizeof(err)) == 0 && t.n == 4 &&
		   t.piece[0].kind == TPL_TEXT && t.piece[0].len == 2 &&
		   memcmp(t.piece[0].p, "a{", 2) == 0 && t.piece[1].len == 2 &&
		   memcmp(t.piece[1].p, "b}", 2) == 0 && t.piece[2].len == 1 &&
		   t.piece[2].p[0] == 'c' && t.piece[3].kind == TPL_BODY,
	   "escapes: a{, b}, c, then {body}");
	bad("{timestamp}", "must sign {body}", "no body");
	bad("{{body}}", "must sign {body}", "an escaped body is text");
	bad("", "must sign {body}", "empty");
	bad("{bdy}", "unknown placeholder {bdy}", "a misspelt placeholder");
	bad("{Body}", "unknown placeholder {Body}", "placeholders are lower case");
	bad("{body", "'{' at byte 1 is not closed", "an open brace");
	bad("{body}}", "'}' at byte 7 closes nothing", "a lone closing brace");
	bad("{header:}{body}", "{header:}", "an empty header name");
	bad("{header:X Y}{body}", "a header name is 1 to 64", "a blank in a header name");
	bad("{header:{body}}", "a header name", "a brace in a header name");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "{body}", 6);
	bad(big, "longer than 512 bytes", "too long");
	for (int i = 0; i < TEMPLATE_PIECES_MAX; i++)
		strcat(many, ".{body}");
	bad(many, "too many pieces", "too many pieces");
	ok(template_parse("{header:X-Id}{body}", &t, err, sizeof(err)) == 0 &&
		   template_signs_header(&t, "x-id") && !template_signs_header(&t, "X-I") &&
		   !template_signs_header(&t, "X-Idx"),
	   "signs_header: case-insensitive, whole names");
}

/* ---- round trips through sign.c and verify.c ---- */

typedef struct tcase {
	hmac_conf h;
	provider_endpoint ep;
	test_headers t;
	const char *body;
	const char *query;
	const char *const *extra; /* the sender's own headers, "Name: value" */
	size_t n_extra;
} tcase;

static char s_header[] = "X-Sig", s_prefix[] = "v1=", s_id[] = "X-Delivery-Id",
	    s_ts[] = "X-Timestamp", s_content[] = "{header:X-Delivery-Id}.{timestamp}.{body}",
	    s_url_content[] = "{method} {url}\n{body}", s_public[] = PUBLIC_URL;

static bool
sign_case(tcase *c, const char *secret, int64_t ts, const char *id, char *err, size_t errlen)
{
	sign_input in;
	sign_output out = {.n = 0};
	bool okay;

	memset(&in, 0, sizeof(in));
	in.provider = PROVIDER_HMAC;
	in.hmac = &c->h;
	in.secret = (const unsigned char *)secret;
	in.secret_len = strlen(secret);
	in.event_id = id;
	in.timestamp = ts;
	in.body = (const unsigned char *)c->body;
	in.body_len = strlen(c->body);
	in.url = c->query != NULL ? xasprintf("%s?%s", PUBLIC_URL, c->query) : PUBLIC_URL;
	in.headers = c->extra;
	in.n_headers = c->n_extra;
	okay = sign_headers(&in, &out, err, errlen) == 0;
	headers_clear(&c->t);
	for (size_t i = 0; i < out.n; i++)
		headers_set(&c->t, out.h[i].name, out.h[i].value);
	/* what hookinbox-send sends of its --header (the cases add only this one) */
	if (c->n_extra > 0)
		headers_set(&c->t, "X-Tenant", strchr(c->extra[0], ':') + 2);
	if (c->query != NULL)
		free((char *)(uintptr_t)in.url);
	sign_release(&out);
	return okay;
}

static verify_status
verify_case(tcase *c, const char *body, int *index)
{
	request_view rv = {headers_lookup, &c->t,    (const unsigned char *)body,
			   strlen(body),   c->query, NOW};
	verify_result res;

	res.secret_index = -99;
	(void)verify_request(&c->ep, &rv, &res);
	*index = res.secret_index;
	return res.status;
}

static void
expect(tcase *c, const char *body, verify_status want, int want_index, const char *what)
{
	int index;
	verify_status st = verify_case(c, body, &index);

	ok(st == want && (want != VERIFY_OK || index == want_index), "%s (status %d, index %d)",
	   what, (int)st, index);
}

static void
case_init(tcase *c, char *content, const char *secret)
{
	memset(c, 0, sizeof(*c));
	c->h.header = s_header;
	c->h.alg = HMAC_SHA256;
	c->h.enc = HMAC_HEX;
	c->h.prefix = s_prefix;
	c->h.id_header = s_id;
	c->h.signed_content = content;
	c->ep.provider = PROVIDER_HMAC;
	c->ep.secrets = make_secrets(&secret, 1);
	c->body = "{\"id\":\"evt_1\",\"n\":1}";
}

static void
test_timestamped(void)
{
	static const char *const rot[] = {"old-secret", "new-secret"};
	tcase c;
	char err[256];

	case_init(&c, s_content, "new-secret");
	c.h.timestamp_header = s_ts;
	c.ep.hmac = c.h;
	ok(provider_endpoint_check(&c.ep) == NULL, "check: a complete template endpoint");
	ok(provider_endpoint_id_signed(&c.ep), "the delivery id header is signed");

	ok(sign_case(&c, "new-secret", NOW, "dlv_1", err, sizeof(err)), "sign (%s)", err);
	ok(strcmp(headers_lookup(&c.t, "X-Timestamp"), "1700000000") == 0 &&
		   strcmp(headers_lookup(&c.t, "X-Delivery-Id"), "dlv_1") == 0 &&
		   strncmp(headers_lookup(&c.t, "X-Sig"), "v1=", 3) == 0,
	   "the sender adds the timestamp, the id and the prefixed signature");
	expect(&c, c.body, VERIFY_OK, 0, "signed request verifies");
	expect(&c, "{\"id\":\"evt_1\",\"n\":2}", VERIFY_MISMATCH, -1, "tampered body");
	headers_set(&c.t, "X-Delivery-Id", "dlv_2");
	expect(&c, c.body, VERIFY_MISMATCH, -1, "another delivery id: the id is signed");
	headers_set(&c.t, "X-Delivery-Id", "dlv_1");
	headers_set(&c.t, "X-Timestamp", "1700000001");
	expect(&c, c.body, VERIFY_MISMATCH, -1, "another timestamp: the timestamp is signed");
	headers_set(&c.t, "X-Timestamp", "17000x0000");
	expect(&c, c.body, VERIFY_MALFORMED, -1, "a timestamp that is not digits: malformed");
	headers_set(&c.t, "X-Timestamp", "-1700000000");
	expect(&c, c.body, VERIFY_MALFORMED, -1, "a negative timestamp: malformed");

	sign_case(&c, "new-secret", NOW, NULL, err, sizeof(err));
	ok(headers_lookup(&c.t, "X-Delivery-Id") == NULL, "no id: the sender refuses (%s)", err);

	sign_case(&c, "new-secret", NOW, "dlv_1", err, sizeof(err));
	{
		/* without the timestamp header, or the signed id header */
		test_headers keep = c.t;

		c.t.n = 0;
		for (size_t i = 0; i < keep.n; i++)
			if (strcmp(keep.name[i], "X-Timestamp") != 0)
				headers_set(&c.t, keep.name[i], keep.value[i]);
		expect(&c, c.body, VERIFY_UNSIGNED, -1, "missing timestamp header: unsigned");
		headers_clear(&c.t);
		for (size_t i = 0; i < keep.n; i++)
			if (strcmp(keep.name[i], "X-Delivery-Id") != 0)
				headers_set(&c.t, keep.name[i], keep.value[i]);
		expect(&c, c.body, VERIFY_UNSIGNED, -1, "missing signed header: unsigned");
		headers_clear(&c.t);
		c.t = keep;
	}
	{
		char *big = xmalloc(20000);

		memset(big, 'a', 19999);
		big[19999] = '\0';
		headers_set(&c.t, "X-Delivery-Id", big);
		expect(&c, c.body, VERIFY_MALFORMED, -1, "a signed header over 8 KB: malformed");
		free(big);
	}

	sign_case(&c, "new-secret", NOW - 300, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_OK, 0, "300 s old: the default window's edge");
	sign_case(&c, "new-secret", NOW - 301, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_STALE, -1, "301 s old: stale");
	sign_case(&c, "new-secret", NOW + 301, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_FUTURE, -1, "301 s ahead: future");
	c.ep.tolerance = 30;
	sign_case(&c, "new-secret", NOW - 31, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_STALE, -1, "tolerance = 30: 31 s old is stale");
	c.ep.tolerance = 0;

	/* rotation: the endpoint holds (old, new) */
	secret_set_free(c.ep.secrets);
	c.ep.secrets = make_secrets(rot, 2);
	sign_case(&c, "new-secret", NOW, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_OK, 1, "rotation: the new secret, index 1");
	sign_case(&c, "old-secret", NOW, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_OK, 0, "rotation: the old secret, index 0");
	sign_case(&c, "other-secret", NOW, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_MISMATCH, -1, "rotation: a third secret matches neither");

	/* milliseconds */
	c.h.ts_unit = HMAC_MILLISECONDS;
	c.ep.hmac = c.h;
	sign_case(&c, "new-secret", NOW, "dlv_1", err, sizeof(err));
	ok(strcmp(headers_lookup(&c.t, "X-Timestamp"), "1700000000000") == 0,
	   "milliseconds: the sender sends them");
	expect(&c, c.body, VERIFY_OK, 1, "milliseconds: verifies");
	sign_case(&c, "new-secret", NOW - 301, "dlv_1", err, sizeof(err));
	expect(&c, c.body, VERIFY_STALE, -1, "milliseconds: 301 s old is stale");
	headers_clear(&c.t);
	secret_set_free(c.ep.secrets);
}

static void
test_url_and_headers(void)
{
	static const char *const extra[] = {"X-Tenant: acme"};
	static char content[] = "{header:X-Tenant}|{method} {url}\n{body}";
	tcase c;
	char err[256];

	case_init(&c, s_url_content, "s3cret");
	c.ep.hmac = c.h;
	ok(provider_endpoint_check(&c.ep) != NULL &&
		   strstr(provider_endpoint_check(&c.ep), "public_url") != NULL,
	   "check: {url} needs public_url");
	c.ep.public_url = s_public;
	ok(provider_endpoint_check(&c.ep) == NULL, "check: {url} with public_url");
	ok(!provider_endpoint_id_signed(&c.ep), "an id header the template does not sign");

	c.query = "a=1&b=two";
	ok(sign_case(&c, "s3cret", NOW, "dlv_1", err, sizeof(err)), "sign with a query (%s)", err);
	expect(&c, c.body, VERIFY_OK, 0, "public_url ? query verifies");
	c.query = "a=1&b=tw0";
	expect(&c, c.body, VERIFY_MISMATCH, -1, "another query: mismatch");
	c.query = NULL;
	expect(&c, c.body, VERIFY_MISMATCH, -1, "no query: mismatch");
	ok(sign_case(&c, "s3cret", NOW, "dlv_1", err, sizeof(err)), "sign without a query");
	expect(&c, c.body, VERIFY_OK, 0, "public_url alone verifies");

	/* a header the sender adds itself */
	c.h.signed_content = content;
	c.ep.hmac = c.h;
	ok(!sign_case(&c, "s3cret", NOW, "dlv_1", err, sizeof(err)) &&
		   strstr(err, "X-Tenant") != NULL,
	   "a signed header the sender lacks: refused (%s)", err);
	c.extra = extra;
	c.n_extra = 1;
	ok(sign_case(&c, "s3cret", NOW, "dlv_1", err, sizeof(err)), "sign with --header (%s)", err);
	expect(&c, c.body, VERIFY_OK, 0, "the added header is signed");
	headers_set(&c.t, "X-Tenant", "evil");
	expect(&c, c.body, VERIFY_MISMATCH, -1, "another value of it: mismatch");
	headers_clear(&c.t);
	secret_set_free(c.ep.secrets);
}

static void
test_check(void)
{
	static char ts_only[] = "{body}", sig_self[] = "{header:X-Sig}{body}",
		    with_ts[] = "{timestamp}.{body}";
	tcase c;
	const char *why;

	case_init(&c, NULL, "x");
	c.h.timestamp_header = s_ts;
	c.ep.hmac = c.h;
	why = provider_endpoint_check(&c.ep);
	ok(why != NULL && strstr(why, "timestamp_header needs signed_content") != NULL,
	   "check: timestamp_header without signed_content (%s)", why);
	c.h.signed_content = ts_only;
	c.ep.hmac = c.h;
	why = provider_endpoint_check(&c.ep);
	ok(why != NULL && strstr(why, "no {timestamp}") != NULL,
	   "check: timestamp_header, no {timestamp} (%s)", why);
	c.h.timestamp_header = NULL;
	c.h.signed_content = with_ts;
	c.ep.hmac = c.h;
	why = provider_endpoint_check(&c.ep);
	ok(why != NULL && strstr(why, "set timestamp_header") != NULL,
	   "check: {timestamp} without timestamp_header (%s)", why);
	c.h.signed_content = sig_self;
	c.ep.hmac = c.h;
	why = provider_endpoint_check(&c.ep);
	ok(why != NULL && strstr(why, "signature header itself") != NULL,
	   "check: the signature header signed (%s)", why);
	/* refused at load; were such an endpoint reached, nothing would verify or sign */
	c.h.signed_content = with_ts;
	c.ep.hmac = c.h;
	{
		char err[256] = "";

		ok(!sign_case(&c, "x", NOW, "dlv_1", err, sizeof(err)) &&
			   strstr(err, "{timestamp}") != NULL,
		   "sign: {timestamp} without its header refused (%s)", err);
		headers_set(&c.t, "X-Sig",
			    "v1=0000000000000000000000000000000000000000000000000000000000000000");
		expect(&c, c.body, VERIFY_MISMATCH, -1, "verify: {timestamp} without its header");
		headers_clear(&c.t);
	}
	c.h.signed_content = NULL;
	c.ep.hmac = c.h;
	ok(provider_endpoint_check(&c.ep) == NULL, "check: no template, today's endpoint");
	secret_set_free(c.ep.secrets);
}

/* ---- built-in providers as hmac endpoints, against their vectors ---- */

typedef struct equivalent {
	const char *file, *provider;
	hmac_conf h;
} equivalent;

static char e_slack_sig[] = "X-Slack-Signature", e_slack_ts[] = "X-Slack-Request-Timestamp",
	    e_v0[] = "v0=", e_slack_content[] = "v0:{timestamp}:{body}",
	    e_zoom_sig[] = "x-zm-signature", e_zoom_ts[] = "x-zm-request-timestamp",
	    e_wf_sig[] = "x-webflow-signature", e_wf_ts[] = "x-webflow-timestamp",
	    e_wf_content[] = "{timestamp}:{body}", e_hs_sig[] = "X-HubSpot-Signature-v3",
	    e_hs_ts[] = "X-HubSpot-Request-Timestamp",
	    e_hs_content[] = "{method}{url}{body}{timestamp}", e_any[] = "id";

static const equivalent equivalents[] = {
	{"provider-vectors.json",
	 "slack",
	 {.header = e_slack_sig,
	  .alg = HMAC_SHA256,
	  .prefix = e_v0,
	  .id_field = e_any,
	  .signed_content = e_slack_content,
	  .timestamp_header = e_slack_ts}},
	{"provider-vectors-more.json",
	 "zoom",
	 {.header = e_zoom_sig,
	  .alg = HMAC_SHA256,
	  .prefix = e_v0,
	  .id_field = e_any,
	  .signed_content = e_slack_content,
	  .timestamp_header = e_zoom_ts}},
	{"provider-vectors-more.json",
	 "webflow",
	 {.header = e_wf_sig,
	  .alg = HMAC_SHA256,
	  .id_field = e_any,
	  .signed_content = e_wf_content,
	  .timestamp_header = e_wf_ts,
	  .ts_unit = HMAC_MILLISECONDS}},
	{"provider-vectors-batch.json",
	 "hubspot",
	 {.header = e_hs_sig,
	  .alg = HMAC_SHA256,
	  .enc = HMAC_BASE64,
	  .id_field = e_any,
	  .signed_content = e_hs_content,
	  .timestamp_header = e_hs_ts,
	  .ts_unit = HMAC_MILLISECONDS}},
};

static const char *
jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static void
test_equivalent(const equivalent *e)
{
	const char *top = getenv("HOOKINBOX_TOP");
	char *path =
		xasprintf("%s/tests/data/%s", top != NULL && *top != '\0' ? top : ".", e->file);
	json_object *root = json_object_from_file(path), *vecs;
	size_t seen = 0;

	free(path);
	if (root == NULL || !json_object_object_get_ex(root, "vectors", &vecs)) {
		ok(0, "%s: vectors in %s", e->provider, e->file);
		json_object_put(root);
		return;
	}
	for (size_t i = 0; i < json_object_array_length(vecs); i++) {
		json_object *v = json_object_array_get_idx(vecs, i), *vv, *hdrs, *x;
		const char *body, *secret;
		provider_endpoint ep;
		test_headers t = {{0}, {0}, 0};
		char *public_url = NULL, *query = NULL;
		verify_result res;
		bool want;

		if (strcmp(jstr(v, "provider"), e->provider) != 0)
			continue;
		seen++;
		want = strcmp(jstr(v, "expect"), "accept") == 0;
		json_object_object_get_ex(v, "verify", &vv);
		json_object_object_get_ex(vv, "headers", &hdrs);
		json_object_object_foreach(hdrs, hk, hv)
			headers_set(&t, hk, json_object_get_string(hv));
		body = jstr(vv, "body");
		secret = jstr(vv, "secret");
		memset(&ep, 0, sizeof(ep));
		ep.provider = PROVIDER_HMAC;
		ep.hmac = e->h;
		ep.secrets = make_secrets(&secret, 1);
		if (json_object_object_get_ex(vv, "url", &x)) {
			const char *url = json_object_get_string(x), *q = strchr(url, '?');

			public_url = q != NULL ? xstrndup(url, (size_t)(q - url)) : xstrdup(url);
			query = q != NULL ? xstrdup(q + 1) : NULL;
			ep.public_url = public_url;
		}
		json_object_object_get_ex(vv, "now", &x);
		{
			request_view rv = {headers_lookup, &t,	  (const unsigned char *)body,
					   strlen(body),   query, json_object_get_int64(x)};

			(void)verify_request(&ep, &rv, &res);
		}
		ok((res.status == VERIFY_OK) == want, "%s as provider = hmac: %s %s (%s)",
		   e->provider, jstr(v, "id"), want ? "accepted" : "refused", res.reason);
		secret_set_free(ep.secrets);
		free(public_url);
		free(query);
		headers_clear(&t);
	}
	ok(seen >= 2, "%s: %zu vectors", e->provider, seen);
	json_object_put(root);
}

int main(void);

int
main(void)
{
	test_parse();
	test_timestamped();
	test_url_and_headers();
	test_check();
	for (size_t i = 0; i < sizeof(equivalents) / sizeof(equivalents[0]); i++)
		test_equivalent(&equivalents[i]);
	return done_testing();
}
