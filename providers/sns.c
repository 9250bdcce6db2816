/* SPDX-License-Identifier: ISC */
/*
 * sns.c - Amazon SNS HTTP/HTTPS subscriptions
 *
 * The JSON body carries its own signature: "Signature", base64 RSA over
 * the canonical string of the message's fields ("Name\nvalue\n" in the
 * order AWS documents, Subject only when present), SHA1withRSA for
 * SignatureVersion 1 and SHA256withRSA for 2, checked with the certificate
 * at "SigningCertURL", as the AWS SDKs' message validators do.  The
 * certificate must be https://sns.<region>.amazonaws.com[.cn]/
 * SimpleNotificationService-<id>.pem, cached in cert_cache and chained to
 * ca_file (pkey.h's cert_scheme).  Anyone can publish to a topic of their
 * own and subscribe any URL, so "TopicArn" must be one of the secret_file's
 * lines.  No window (the SDKs have none); MessageId is signed.
 *
 * A SubscriptionConfirmation (or UnsubscribeConfirmation), once verified,
 * is stored as an event of that type like any other: nothing is fetched on
 * the request path.  The operator, or a route, confirms the subscription
 * by requesting its SubscribeURL (docs/providers.md).  hookinbox-send
 * sends its payload as the Message of a Notification (or, with --type, of
 * a SubscriptionConfirmation or UnsubscribeConfirmation), signed inside the
 * body with "<SigningCertURL> <TopicArn> <base64 PKCS#8 DER RSA key>".
 */
#include "base64.h"
#include "fields.h"
#include "hex.h"
#include "pkey.h"
#include "scheme.h"
#include "sha256.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool
url_ok(const char *url, size_t len)
{
	static const char *const suffixes[] = {".amazonaws.com/", ".amazonaws.com.cn/", NULL};
	const char *p = url + 12, *end = url + len, *tail;
	size_t region = 0;

	if (len > 512 || len < 12 || strncmp(url, "https://sns.", 12) != 0)
		return false;
	while (p + region < end && ((p[region] >= 'a' && p[region] <= 'z') ||
				    (p[region] >= '0' && p[region] <= '9') || p[region] == '-'))
		region++;
	if (region < 3)
		return false;
	p += region;
	for (size_t i = 0; suffixes[i] != NULL; i++) {
		size_t sl = strlen(suffixes[i]);

		if ((size_t)(end - p) > sl && memcmp(p, suffixes[i], sl) == 0) {
			p += sl;
			break;
		}
		if (suffixes[i + 1] == NULL)
			return false;
	}
	if ((size_t)(end - p) < 31 || memcmp(p, "SimpleNotificationService-", 26) != 0 ||
	    memcmp(end - 4, ".pem", 4) != 0)
		return false;
	tail = p + 26;
	if (tail == end - 4)
		return false;
	for (; tail < end - 4; tail++)
		if (!((*tail >= 'a' && *tail <= 'z') || (*tail >= 'A' && *tail <= 'Z') ||
		      (*tail >= '0' && *tail <= '9')))
			return false;
	return true;
}

static const cert_scheme certs = {.url_ok = url_ok};

/* the names signed, in order, per message type; "Subject" only when present */
static const char *const notification[] = {"Message",  "MessageId", "Subject", "Timestamp",
					   "TopicArn", "Type",	    NULL};
static const char *const confirmation[] = {"Message", "MessageId", "SubscribeURL", "Timestamp",
					   "Token",   "TopicArn",  "Type",	   NULL};

/* a string member, unescaped; NULL when absent or not a string */
static char *
member(const jscan_value *o, const char *name, size_t *len)
{
	jscan_value v;
	char *s;

	if (jscan_member(o, name, strlen(name), &v) != 0 || jscan_string(&v, &s, len) != 0)
		return NULL;
	return s;
}

/* the canonical string of o (malloc'd, *len), or NULL when a field is missing */
static char *
canonical(const jscan_value *o, const char *const *names, size_t *len)
{
	char *out = NULL;
	size_t used = 0;

	for (size_t i = 0; names[i] != NULL; i++) {
		size_t vl, nl = strlen(names[i]);
		char *v = member(o, names[i], &vl);

		if (v == NULL) {
			if (strcmp(names[i], "Subject") == 0)
				continue;
			free(out);
			return NULL;
		}
		out = xrealloc(out, used + nl + vl + 3);
		memcpy(out + used, names[i], nl);
		out[used + nl] = '\n';
		memcpy(out + used + nl + 1, v, vl);
		out[used + nl + 1 + vl] = '\n';
		used += nl + vl + 2;
		free(v);
	}
	*len = used;
	return out;
}

int
sns_canonical(const unsigned char *body, size_t blen, char **out, size_t *len)
{
	jval b = env_parse_object(body, blen);
	char *type;
	size_t tl;

	*out = NULL;
	if (!b.present || (type = member(&b.v, "Type", &tl)) == NULL)
		return -1;
	if (strcmp(type, "Notification") == 0)
		*out = canonical(&b.v, notification, len);
	else if (strcmp(type, "SubscriptionConfirmation") == 0 ||
		 strcmp(type, "UnsubscribeConfirmation") == 0)
		*out = canonical(&b.v, confirmation, len);
	free(type);
	return *out != NULL ? 0 : -1;
}

static int
verify(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	jval b = env_parse_object(req->body, req->body_len);
	char *ver = NULL, *sigv = NULL, *url = NULL, *topic = NULL, *msg = NULL;
	unsigned char sig[1024];
	size_t vl, sl, ul, tl, ml;
	long n;
	size_t idx = 0;
	int rc;

	if (!b.present)
		return scheme_fail(res, VERIFY_MALFORMED, "body is not an SNS message");
	sigv = member(&b.v, "Signature", &sl);
	url = member(&b.v, "SigningCertURL", &ul);
	ver = member(&b.v, "SignatureVersion", &vl);
	topic = member(&b.v, "TopicArn", &tl);
	if (sigv == NULL || url == NULL || ver == NULL) {
		rc = scheme_fail(res, VERIFY_UNSIGNED, "SNS message without Signature");
		goto out;
	}
	if ((strcmp(ver, "1") != 0 && strcmp(ver, "2") != 0) ||
	    (n = base64_decode(sigv, sl, sig, sizeof(sig))) < 256 ||
	    sns_canonical(req->body, req->body_len, &msg, &ml) != 0) {
		rc = scheme_fail(res, VERIFY_MALFORMED, "malformed SNS message");
		goto out;
	}
	rc = scheme_fail(res, VERIFY_MISMATCH, "TopicArn not in secret_file");
	for (idx = 0; idx < secret_count(ep->secrets); idx++) {
		size_t kl;
		const unsigned char *k = secret_get(ep->secrets, idx, &kl);

		if (kl == tl && memcmp(k, topic, tl) == 0)
			break;
	}
	if (topic == NULL || idx == secret_count(ep->secrets))
		goto out;
	rc = scheme_verify_cert(&certs, ep, req, url, ul, ver[0] == '1' ? PKEY_RS1 : PKEY_RS256,
				(const unsigned char *)msg, ml, sig, (size_t)n, idx, res);
out:
	free(ver);
	free(sigv);
	free(url);
	free(topic);
	free(msg);
	return rc;
}

/* the message types hookinbox-send signs (--type; the first by default) */
static const char *const send_types[] = {"Notification", "SubscriptionConfirmation",
					 "UnsubscribeConfirmation", NULL};

/*
 * A confirmation's Token and SubscribeURL members, ending in a comma
 * (malloc'd): the token is the hex SHA-256 of the MessageId, the URL on the
 * host of the certificate's, as SNS sends them; NULL and errbuf on failure
 */
static char *
confirmation_members(const char *id, const char *cert, const char *topic, char *errbuf,
		     size_t errlen)
{
	unsigned char d[SHA256_LEN];
	char token[2 * SHA256_LEN + 1], *url, *q, *out;
	const char *host = cert + 8, *slash;

	if (strncmp(cert, "https://", 8) != 0 || (slash = strchr(host, '/')) == NULL ||
	    sha256_digest(id, strlen(id), d) != 0) {
		snprintf(errbuf, errlen, "the SigningCertURL is not an https URL");
		return NULL;
	}
	hex_encode(d, sizeof(d), token);
	url = xasprintf("https://%.*s/?Action=ConfirmSubscription&TopicArn=%s&Token=%s",
			(int)(slash - host), host, topic, token);
	q = env_json_quote(url);
	out = xasprintf("\"Token\":\"%s\",\"SubscribeURL\":%s,", token, q);
	free(q);
	free(url);
	return out;
}

/*
 * The signed message of in: the payload as the Message of a message of
 * type from topic (a confirmation with its Token and SubscribeURL), the
 * MessageId the event id, signed with SignatureVersion 2 (SHA256withRSA)
 * and naming cert as SigningCertURL; the body, malloc'd.
 */
static char *
signed_message(const sign_input *in, const char *type, const pkey_secret *ps, char *errbuf,
	       size_t errlen)
{
	const char *cert = ps->words[0], *topic = ps->words[1];
	char ts[32], *text, *q[4], *extra = NULL, *canon = NULL, *b64 = NULL, *out = NULL;
	unsigned char *sig = NULL;
	size_t cl, siglen;
	time_t t = (time_t)in->timestamp;
	struct tm g;

	if (strcmp(type, "Notification") != 0 &&
	    (extra = confirmation_members(in->event_id, cert, topic, errbuf, errlen)) == NULL)
		return NULL;
	gmtime_r(&t, &g);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S.000Z", &g);
	text = xmalloc(in->body_len + 1);
	memcpy(text, in->body, in->body_len);
	text[in->body_len] = '\0';
	q[0] = env_json_quote(in->event_id);
	q[1] = env_json_quote(topic);
	q[2] = env_json_quote(text);
	q[3] = env_json_quote(cert);
	free(text);
	text = xasprintf("{\"Type\":\"%s\",\"MessageId\":%s,\"TopicArn\":%s,%s"
			 "\"Message\":%s,\"Timestamp\":\"%s\",\"SignatureVersion\":\"2\","
			 "\"SigningCertURL\":%s}",
			 type, q[0], q[1], extra != NULL ? extra : "", q[2], ts, q[3]);
	for (size_t i = 0; i < 4; i++)
		free(q[i]);
	free(extra);
	/* what the verifier signs over, read back from the message itself */
	if (sns_canonical((const unsigned char *)text, strlen(text), &canon, &cl) != 0) {
		snprintf(errbuf, errlen, "the payload is not UTF-8 text");
		goto out;
	}
	if (pkey_sign(ps, PKEY_RS256, (const unsigned char *)canon, cl, &sig, &siglen, errbuf,
		      errlen) < 0)
		goto out;
	b64 = xmalloc(BASE64_ENCODED_SIZE(siglen));
	base64_encode(sig, siglen, b64);
	text[strlen(text) - 1] = '\0';
	out = xasprintf("%s,\"Signature\":\"%s\"}", text, b64);
out:
	free(text);
	free(canon);
	free(sig);
	free(b64);
	return out;
}

static int
sign(const sign_input *in, sign_output *out, char *errbuf, size_t errlen)
{
	const char *type = send_types[0];
	pkey_secret ps;
	char *msg;

	for (size_t i = 0; in->event_type != NULL && send_types[i] != NULL; i++)
		if (strcmp(in->event_type, send_types[i]) == 0)
			type = send_types[i];
	if (in->event_type != NULL && strcmp(in->event_type, type) != 0) {
		snprintf(errbuf, errlen,
			 "SNS sends Notification, SubscriptionConfirmation or "
			 "UnsubscribeConfirmation: not another --type");
		return -1;
	}
	if (in->event_id == NULL || memchr(in->body, '\0', in->body_len) != NULL) {
		snprintf(errbuf, errlen,
			 "SNS signing needs a MessageId (the event id) and a text "
			 "payload");
		return -1;
	}
	if (pkey_secret_parse(in->secret, in->secret_len, &ps, errbuf, errlen) < 0)
		return -1;
	if (ps.words[1] == NULL || ps.words[2] != NULL) {
		pkey_secret_release(&ps);
		snprintf(errbuf, errlen,
			 "the secret is not \"<SigningCertURL> <TopicArn> <base64 PKCS#8 DER "
			 "key>\"");
		return -1;
	}
	if ((msg = signed_message(in, type, &ps, errbuf, errlen)) != NULL) {
		/*
		 * Not x-amz-sns-topic-arn: the TopicArn is a line of the
		 * endpoint's secret_file, and kept headers are stored as text.
		 */
		sign_add(out, "x-amz-sns-message-type", xstrdup(type));
		sign_add(out, "x-amz-sns-message-id", xstrdup(in->event_id));
		out->body = (unsigned char *)msg;
		out->body_len = strlen(msg);
	}
	pkey_secret_release(&ps);
	return msg != NULL ? 0 : -1;
}

/* {"Type", "MessageId", "TopicArn", "Timestamp", ...} */
static const env_body_fields fields = {"MessageId", "Type", NULL, NULL};

static const char *const headers[] = {"x-amz-sns-message-type", "x-amz-sns-message-id",
				      "x-amz-sns-topic-arn", NULL};

const provider_ops provider_sns = {
	.name = "sns",
	.klass = "RSA with a cached certificate",
	.tolerance = 0,
	.headers = headers,
	.id_signed = provider_id_signed,
	.sends_version = provider_never,
	.replay = REPLAY_BODY,
	.check = scheme_check_cert,
	.verify = verify,
	.load = scheme_load_cert,
	.fields = &fields,
	.sign = sign,
};
