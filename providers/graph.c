/* SPDX-License-Identifier: ISC */
/*
 * graph.c - Microsoft Graph change notifications (and lifecycle
 * notifications)
 *
 * Graph signs nothing: each notification of the body's "value" array
 * carries the subscription's clientState, the secret the subscriber chose,
 * compared in constant time with each line of secret_file; every item of
 * a batch must carry one.  Creating or renewing a subscription, Graph
 * POSTs "?validationToken=<token>" with an empty body and expects the
 * decoded token back as text/plain within 10 s: answered, nothing stored
 * (a token of 1 to 1024 printable characters; no secret is involved, so
 * anyone can have a token echoed, as text/plain).  A batch is stored as
 * one row, keyed by the body's hash (a retry repeats the bytes): the type
 * and object are the first item's changeType and resourceData.id.  The
 * clientState does not cover the body: it is deduplicated on the body too.
 * Rich notifications' validationTokens (JWTs on encrypted content) are not
 * checked.  hookinbox-send puts the secret into the payload as each
 * notification's clientState: the payload is one notification or a
 * {"value": [...]} batch; an empty payload is sent as it is, to rehearse
 * the validationToken handshake.
 */
#include "ct.h"
#include "dynbuf.h"
#include "fields.h"
#include "form.h"
#include "scheme.h"
#include "wipe.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX 1024

/* the decoded validationToken of the query (caller frees); NULL when none or unfit */
static char *
validation_token(const request_view *req)
{
	const form_param *p;
	char *tok = NULL;
	form f;

	if (req->query == NULL || form_parse(req->query, strlen(req->query), &f) != 0)
		return NULL;
	p = form_get(&f, "validationToken");
	if (p != NULL && p->value_len > 0 && p->value_len <= TOKEN_MAX) {
		size_t i;

		for (i = 0; i < p->value_len; i++)
			if ((unsigned char)p->value[i] < 0x20 || (unsigned char)p->value[i] > 0x7e)
				break;
		if (i == p->value_len)
			tok = xstrdup(p->value);
	}
	form_release(&f);
	return tok;
}

/* which secret item's clientState is, or -1 */
static long
client_state(const provider_endpoint *ep, const jscan_value *item)
{
	jscan_value v;
	char *s;
	size_t len;
	long found = -1;

	if (jscan_member(item, "clientState", 11, &v) != 0 || jscan_string(&v, &s, &len) != 0)
		return -1;
	for (size_t i = 0; i < secret_count(ep->secrets); i++) {
		size_t kl;
		const unsigned char *k = secret_get(ep->secrets, i, &kl);

		if (ct_equal(k, kl, s, len) && found < 0)
			found = (long)i;
	}
	free(s);
	return found;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	jval b;
	jscan_value value, item;
	const char *pos = NULL;
	long first = -1;
	size_t n = 0;

	if (req->body_len == 0) {
		char *tok = validation_token(req);

		if (tok == NULL)
			return scheme_fail(res, VERIFY_UNSIGNED, "no validationToken and no body");
		free(tok);
		return scheme_pass(res, 0); /* the handshake answers it; nothing is stored */
	}
	b = env_parse_object(req->body, req->body_len);
	if (!b.present || jscan_member(&b.v, "value", 5, &value) != 0 || value.type != JSCAN_ARRAY)
		return scheme_fail(res, VERIFY_MALFORMED, "body is not a Graph notification");
	while (jscan_element(&value, &pos, &item) == 0) {
		long i = item.type == JSCAN_OBJECT ? client_state(ep, &item) : -1;

		if (i < 0)
			return scheme_fail(res, VERIFY_MISMATCH, "clientState mismatch");
		if (first < 0)
			first = i;
		n++;
	}
	if (n == 0)
		return scheme_fail(res, VERIFY_MALFORMED, "no notification in value");
	return scheme_pass(res, (size_t)first);
}

static int
handshake(const provider_endpoint *ep, const request_view *req, size_t secret_index,
	  handshake_answer *ans, const char **reason)
{
	(void)ep;
	(void)secret_index;
	(void)reason;
	if (req->body_len != 0 || (ans->body = validation_token(req)) == NULL)
		return 0;
	ans->content_type = "text/plain; charset=utf-8";
	return 1;
}

static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	const char *why = NULL;
	jval b = env_body(req, env);
	jval first = env_json_path(&b, "value");
	jscan_value item;
	const char *pos = NULL;

	(void)ep;
	if (env_take_body_hash(&env->event_id, req) != 0)
		ENV_REFUSE("no event id");
	if (first.present && jscan_element(&first.v, &pos, &item) == 0) {
		jval it = {.present = true, .v = item};

		env_optional(env,
			     env_take_json(&env->event_type, env_json_path(&it, "changeType"),
					   false, &why),
			     "type", &why);
		if (env->event_type[0] == '\0')
			env_optional(env,
				     env_take_json(&env->event_type,
						   env_json_path(&it, "lifecycleEvent"), false,
						   &why),
				     "type", &why);
		env_optional(env,
			     env_take_json(&env->object_id, env_json_path(&it, "resourceData.id"),
					   false, &why),
			     "object", &why);
	}
	return 0;
out:
	return -1;
}

/* item with q as its clientState (replaced, or added first), appended to *b */
static void
put_item(dynbuf *b, const jscan_value *item, const char *q)
{
	jscan_value cs;
	size_t i = 1;

	if (jscan_member(item, "clientState", 11, &cs) == 0) {
		size_t at = (size_t)(cs.p - item->p);

		dynbuf_xadd(b, item->p, at);
		dynbuf_xadd(b, q, strlen(q));
		dynbuf_xadd(b, cs.p + cs.len, item->len - at - cs.len);
		return;
	}
	while (item->p[i] == ' ' || item->p[i] == '\t' || item->p[i] == '\r' || item->p[i] == '\n')
		i++;
	dynbuf_xadd(b, "{\"clientState\":", 15);
	dynbuf_xadd(b, q, strlen(q));
	if (item->p[i] != '}')
		dynbuf_xadd(b, ",", 1);
	dynbuf_xadd(b, item->p + 1, item->len - 1);
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	jval b = env_parse_object(in->body, in->body_len);
	jscan_value value, item;
	const char *pos = NULL;
	char *secret, *q;
	dynbuf d;
	size_t n = 0;

	(void)out;
	if (in->body_len == 0)
		return 0; /* the validationToken handshake: sent as it is */
	if (!b.present) {
		snprintf(errbuf, errlen,
			 "Graph's payload must be a notification or a "
			 "{\"value\": [...]} batch of them");
		return -1;
	}
	if (memchr(in->secret, '\0', in->secret_len) != NULL) {
		snprintf(errbuf, errlen, "the clientState holds a NUL byte");
		return -1;
	}
	secret = xmalloc(in->secret_len + 1);
	memcpy(secret, in->secret, in->secret_len);
	secret[in->secret_len] = '\0';
	q = env_json_quote(secret);
	secure_wipe(secret, in->secret_len);
	free(secret);
	/* each item is 2 bytes at least, and gains at most a member of q */
	dynbuf_init(&d, in->body_len + 16 + (in->body_len / 2 + 1) * (strlen(q) + 17));
	dynbuf_xadd(&d, "{\"value\":[", 10);
	if (jscan_member(&b.v, "value", 5, &value) != 0) {
		put_item(&d, &b.v, q);
		n = 1;
	} else if (value.type == JSCAN_ARRAY) {
		while (jscan_element(&value, &pos, &item) == 0) {
			if (item.type != JSCAN_OBJECT) {
				n = SIZE_MAX; /* an item that is not a notification */
				break;
			}
			if (n++ > 0)
				dynbuf_xadd(&d, ",", 1);
			put_item(&d, &item, q);
		}
	}
	secure_wipe(q, strlen(q));
	free(q);
	dynbuf_xadd(&d, "]}", 2);
	if (n == 0 || n == SIZE_MAX) {
		secure_wipe(d.buf, d.len);
		dynbuf_release(&d);
		snprintf(errbuf, errlen,
			 "Graph's batch must be a non-empty array of notifications");
		return -1;
	}
	out->body = (unsigned char *)dynbuf_detach(&d, &out->body_len);
	return 0;
}

static const char *const headers[] = {NULL};

const provider_ops provider_graph = {
	.name = "graph",
	.klass = "clientState in the body",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_unsigned,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = verify,
	.handshake = handshake,
	.extract = extract,
	.sign = sign,
	.id_in_body = true,
};
