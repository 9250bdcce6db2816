/* SPDX-License-Identifier: ISC */
/*
 * mailgun.c - Mailgun webhooks (JSON event webhooks)
 *
 * The signature is in the body: {"signature": {"timestamp", "token",
 * "signature"[, "parent-signature"]}, "event-data": {...}}, the hex
 * HMAC-SHA256 of "<timestamp><token>" keyed with the Webhook Signing Key
 * (a subaccount's event carries its parent account's too: either may
 * match any key of the secret file).  The event data is not signed:
 * Mailgun's own defence is a cache of tokens, each honoured once.  Here
 * that cache is the delivery key: the event id is the token, so a request
 * replayed with a used token, whatever event data it carries, is answered
 * as a duplicate of the first and stores nothing, for as long as the inbox
 * and then the ledger remember the key.  No window by default (Mailgun
 * warns that deliveries can be late; tolerance = adds one).
 */
#include "ct.h"
#include "fields.h"
#include "hex.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "timestamp" as it was signed: a string of digits (or a bare integer) */
static int
timestamp_text(jval v, char **out, size_t *len)
{
	if (v.present && v.v.type == JSCAN_NUMBER && jscan_is_integer(&v.v)) {
		*out = xstrndup(v.v.p, v.v.len);
		*len = v.v.len;
		return 0;
	}
	return env_json_text(v, out, len) ? 0 : -1;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	jval body = env_parse_object(req->body, req->body_len);
	jval sigobj = env_json_path(&body, "signature");
	char *ts = NULL, *token = NULL, *hex[2] = {NULL, NULL};
	size_t tslen = 0, toklen = 0, hexlen[2] = {0, 0};
	unsigned char want[2][HMAC_MAX_LEN + 3];
	bool have[2] = {false, false};
	int64_t t;
	verify_status st;
	int rc;

	if (!sigobj.present)
		return scheme_fail(res, VERIFY_UNSIGNED, "missing signature in the body");
	if (sigobj.v.type != JSCAN_OBJECT ||
	    timestamp_text(env_json_path(&sigobj, "timestamp"), &ts, &tslen) < 0 ||
	    !env_json_text(env_json_path(&sigobj, "token"), &token, &toklen)) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "malformed signature object");
		goto out;
	}
	if (scheme_timestamp(ts, tslen, &t) < 0 || toklen == 0 || toklen > ENVELOPE_FIELD_MAX ||
	    strlen(token) != toklen) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "malformed signature object");
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		jval s = env_json_path(&sigobj, k == 0 ? "signature" : "parent-signature");

		if (s.present && env_json_text(s, &hex[k], &hexlen[k]))
			have[k] = hex_decode(hex[k], hexlen[k], want[k], sizeof(want[k])) == 32;
	}
	if (!have[0] && !have[1]) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "malformed signature");
		goto out;
	}
	if (ep->tolerance > 0 && (st = scheme_window(ep, req, t)) != VERIFY_OK) {
		rc = scheme_window_fail(res, st);
		goto out;
	}
	{
		hmac_part parts[2] = {{ts, tslen}, {token, toklen}};

		rc = -1;
		for (int k = 0; k < 2 && rc != 0; k++)
			if (have[k])
				rc = scheme_match_secrets(HMAC_SHA256, ep, parts, 2, want[k], 32,
							  res);
	}
out:
	free(ts);
	free(token);
	free(hex[0]);
	free(hex[1]);
	return rc;
}

/* the token is the delivery key: each is honoured once */
static int
extract(const provider_endpoint *ep, const request_view *req, envelope *env, const char **reason)
{
	jval body = env_body(req, env);
	jval data = env_json_path(&body, "event-data");
	const char *why = NULL;

	(void)ep;
	if (env_need_id(env_take_json(&env->event_id, env_json_path(&body, "signature.token"),
				      false, &why),
			&why, reason) < 0)
		return -1;
	env_optional(env,
		     env_take_json(&env->event_type, env_json_path(&data, "event"), false, &why),
		     "type", &why);
	env_optional(env,
		     env_take_json(&env->object_id,
				   env_json_path(&data, "message.headers.message-id"), false, &why),
		     "object id", &why);
	return 0;
}

/*
 * hookinbox-send: the payload is the event data (or a body with an
 * "event-data" member, whose value is taken); it is sent inside a body
 * signed with a fresh token, the --event-id.
 */
static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	jval body = env_parse_object(in->body, in->body_len);
	jval data = env_json_path(&body, "event-data");
	char ts[32], hex[2 * HMAC_MAX_LEN + 1], *text;

	if (in->event_id == NULL || !body.present) {
		snprintf(errbuf, errlen,
			 "mailgun signing needs a token (the event id) and a JSON "
			 "object payload");
		return -1;
	}
	if (!data.present)
		data = body;
	snprintf(ts, sizeof(ts), "%lld", (long long)in->timestamp);
	hmac_part parts[2] = {{ts, strlen(ts)}, {in->event_id, strlen(in->event_id)}};

	if (sign_mac_hex(HMAC_SHA256, in, parts, 2, hex) < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	{
		char *tok = env_json_quote(in->event_id);

		text = xasprintf("{\"signature\":{\"timestamp\":\"%s\",\"token\":%s,"
				 "\"signature\":\"%s\"},\"event-data\":%.*s}",
				 ts, tok, hex, (int)data.v.len, data.v.p);
		free(tok);
	}
	out->body = (unsigned char *)text;
	out->body_len = strlen(text);
	return 0;
}

static const char *const headers[] = {NULL};

const provider_ops provider_mailgun = {
	.name = "mailgun",
	.klass = "HMAC of <ts><token> in the body",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.verify = verify,
	.extract = extract,
	.sign = sign,
};
