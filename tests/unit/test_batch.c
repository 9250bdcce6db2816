/* SPDX-License-Identifier: ISC */
/*
 * test_batch.c - the batch class (envelope_split), its providers' signers
 * and verifiers (adyen, sendgrid, hubspot), mailgun's body signature, and
 * the ECDSA class's keys
 */
#include "headers.h"
#include "tap.h"

#include "base64.h"
#include "ecdsa.h"
#include "endpoint.h"
#include "envelope.h"
#include "secret.h"
#include "sign.h"
#include "verify.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOW 1700000000
#define URL "https://hooks.example.test/in/hubspot"

/* two P-256 key pairs (base64 DER: SubjectPublicKeyInfo, PKCS#8) and a P-384 public key */
static const char pub1[] = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEc86dilaiHDbAsuSB6T4+"
			   "FjmXUBDba4J6B77JilJMWTlqrK19lUMf1uhQi//N4WHcJYiMNbFdCU0s44venbX4SA==";
static const char priv1[] =
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqrMdSjCL0iKYfm6ZJGTjYMQ8SMamfOmlofJxsKpm/"
	"LOhRANCAARzzp2KVqIcNsCy5IHpPj4WOZdQENtrgnoHvsmKUkxZOWqsrX2VQx/W6FCL/83hYdwliIw1sV0JTSzji96dtfhI";
static const char pub2[] = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEaVt+Fs3iynvem9IiPqx1iLJbF1FxigS/"
			   "ztEVs7NYus04ct+l6MTyXTPFoyUp1XZT3dftoXIPZAMo2DjCfesHMQ==";
static const char priv2[] =
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgagIoK/6DwJBEQq7jvUZPTlJHux+ijocuFTaMFI2KRHuhRANCAARpW34WzeLKe96b0iI+rHWIslsXUXGKBL/O0RWzs1i6zThy36XoxPJdM8WjJSnVdlPd1+2hcg9kAyjYOMJ96wcx";
static const char pub384[] =
	"MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEkxrtH5VAKw1j3NZHv4qP87LPLsNjiaQ7JPculE"
	"J1uIhFbsgmJvtK9cV8rLa3umJ6Ze0TMuT5SMx3rl1YXA7WqkhjtCa9UEWOHVByoZ3fRxYStb"
	"h1aDY+5fFaGLfAobOY";

static const char adyen_key[] = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";

static secret_set *
secrets_of(const char *text)
{
	char path[] = "/tmp/hookinbox-test-batch-XXXXXX", err[256];
	int fd = mkstemp(path);
	secret_set *set;

	if (fd < 0 || fchmod(fd, 0600) != 0 || write(fd, text, strlen(text)) < 0 || close(fd) != 0)
		abort();
	set = secret_set_load(path, err, sizeof(err));
	unlink(path);
	if (set == NULL)
		abort();
	return set;
}

/* a request of p with body and the headers in t */
static request_view
view(test_headers *t, const char *body, size_t len, const char *query)
{
	return (request_view){.header = headers_lookup,
			      .ctx = t,
			      .body = (const unsigned char *)body,
			      .body_len = len,
			      .query = query,
			      .now = NOW};
}

static provider
named(const char *name)
{
	provider p;

	if (provider_from_name(name, &p) != 0)
		abort();
	return p;
}

/* envelope_split of body for p: its return, *reason, and the events in *b */
static int
split(const char *name, const char *body, envelope_batch *b, const char **reason)
{
	provider_endpoint ep = {.provider = named(name)};
	test_headers t = {{0}, {0}, 0};
	request_view rv = view(&t, body, strlen(body), NULL);

	*reason = NULL;
	return envelope_split(&ep, &rv, b, reason);
}

static void
test_split(void)
{
	envelope_batch b;
	const char *reason;
	const char *sg = "[ {\"sg_event_id\":\"a\",\"event\":\"delivered\",\"sg_message_id\":\"m\","
			 "\"timestamp\":1700000000} ,\n{\"sg_event_id\":\"b\"}]";
	int rc = split("sendgrid", sg, &b, &reason);

	ok(rc == 0 && b.n == 2, "sendgrid: two events");
	ok(rc == 0 && strcmp(b.ev[0].env.event_id, "a") == 0 &&
		   strcmp(b.ev[0].env.event_type, "delivered") == 0 &&
		   strcmp(b.ev[0].env.object_id, "m") == 0 && b.ev[0].env.has_version &&
		   b.ev[0].env.version == 1700000000,
	   "sendgrid: the first event's envelope");
	ok(rc == 0 && b.ev[1].body_len == strlen("{\"sg_event_id\":\"b\"}") &&
		   memcmp(b.ev[1].body, "{\"sg_event_id\":\"b\"}", b.ev[1].body_len) == 0 &&
		   b.ev[1].body == (const unsigned char *)strstr(sg, "{\"sg_event_id\":\"b\""),
	   "sendgrid: each event's bytes are its slice of the body");
	envelope_batch_release(&b);

	rc = split("sendgrid", "[{\"sg_event_id\":\"a\"},3]", &b, &reason);
	ok(rc == -1 && strcmp(reason, "an event of the batch is not an object") == 0,
	   "an element that is not an object refuses the batch (%s)", reason);
	envelope_batch_release(&b);
	rc = split("sendgrid", "[{\"sg_event_id\":\"a\"},{\"event\":\"open\"}]", &b, &reason);
	ok(rc == -1 && strcmp(reason, "no event id") == 0, "an event without an id refuses it");
	envelope_batch_release(&b);
	rc = split("sendgrid", "[{\"sg_event_id\":\"\\u0000\"}]", &b, &reason);
	ok(rc == -1 && reason != NULL, "an untame id refuses it (%s)", reason);
	envelope_batch_release(&b);
	rc = split("sendgrid", "[]", &b, &reason);
	ok(rc == -1 && strcmp(reason, "empty batch") == 0, "an empty batch is refused");
	envelope_batch_release(&b);
	rc = split("sendgrid", "{\"sg_event_id\":\"a\"}", &b, &reason);
	ok(rc == -1 && strcmp(reason, "body is not a batch of events") == 0,
	   "an object is not a batch");
	envelope_batch_release(&b);
	rc = split("stripe", "[]", &b, &reason);
	ok(rc == -1 && b.n == 0, "a provider without batches does not split");
	envelope_batch_release(&b);

	{
		size_t n = ENVELOPE_BATCH_MAX + 1, len = 0;
		char *big = xmalloc(n * 24 + 4);

		big[len++] = '[';
		for (size_t i = 0; i < n; i++)
			len += (size_t)sprintf(big + len, "%s{\"sg_event_id\":\"%zu\"}",
					       i > 0 ? "," : "", i);
		big[len++] = ']';
		big[len] = '\0';
		rc = split("sendgrid", big, &b, &reason);
		ok(rc == -1 && strcmp(reason, "too many events in one batch") == 0,
		   "%d events are refused", ENVELOPE_BATCH_MAX + 1);
		envelope_batch_release(&b);
		free(big);
	}

	rc = split("hubspot",
		   "[{\"eventId\":123456789012345678901234,\"subscriptionId\":7,"
		   "\"subscriptionType\":\"contact.creation\",\"objectId\":99,"
		   "\"occurredAt\":1700000000000}]",
		   &b, &reason);
	ok(rc == 0 && strcmp(b.ev[0].env.event_id, "7:123456789012345678901234") == 0 &&
		   strcmp(b.ev[0].env.object_id, "99") == 0 &&
		   b.ev[0].env.version == 1700000000000LL,
	   "hubspot: subscriptionId:eventId, all digits kept");
	envelope_batch_release(&b);
	rc = split("hubspot", "[{\"eventId\":1}]", &b, &reason);
	ok(rc == -1 && strcmp(reason, "no subscriptionId") == 0, "hubspot: no subscriptionId");
	envelope_batch_release(&b);

	rc = split("adyen",
		   "{\"notificationItems\":[{\"NotificationRequestItem\":{\"eventCode\":\"REFUND\","
		   "\"pspReference\":\"PSP2\",\"originalReference\":\"PSP1\",\"success\":true}}]}",
		   &b, &reason);
	ok(rc == 0 && strcmp(b.ev[0].env.event_id, "REFUND:PSP2:true") == 0 &&
		   strcmp(b.ev[0].env.object_id, "PSP1") == 0 && b.ev[0].body[0] == '{' &&
		   b.ev[0].body[b.ev[0].body_len - 1] == '}',
	   "adyen: eventCode:pspReference:success, the payment its originalReference, the "
	   "item's bytes");
	envelope_batch_release(&b);
	rc = split("adyen", "{\"notificationItems\":[{\"other\":{}}]}", &b, &reason);
	ok(rc == -1, "adyen: an element without NotificationRequestItem (%s)", reason);
	envelope_batch_release(&b);

	{
		provider_endpoint ep = {.provider = named("sendgrid")};
		test_headers t = {{0}, {0}, 0};
		request_view rv = view(&t, "[]", 2, NULL);
		envelope env;

		ok(envelope_extract(&ep, &rv, &env, &reason) == -1 &&
			   strcmp(reason, "a batch of events") == 0,
		   "envelope_extract refuses a batch");
		envelope_release(&env);
		ok(envelope_batched(&ep) && envelope_batch_answer(&ep) == NULL,
		   "sendgrid answers the ids");
		ep.provider = named("adyen");
		ok(strcmp(envelope_batch_answer(&ep), "[accepted]") == 0,
		   "adyen answers [accepted]");
	}
}

/* sign body as provider name with secret; verify it with the endpoint's secrets */
static int
round_trip(const char *name, const char *sign_secret, const char *ep_secrets, const char *body,
	   const char *tamper_from, const char *tamper_to, verify_result *res)
{
	provider_endpoint ep = {.provider = named(name), .public_url = (char *)(uintptr_t)URL};
	sign_input in = {.provider = ep.provider,
			 .secret = (const unsigned char *)sign_secret,
			 .secret_len = strlen(sign_secret),
			 .event_id = "e0b5477167110d68991efc6b9f89f0a11066af27834600e123",
			 .timestamp = NOW,
			 .body = (const unsigned char *)body,
			 .body_len = strlen(body),
			 .url = URL};
	sign_output out = {.n = 0};
	test_headers t = {{0}, {0}, 0};
	char err[256], *sent;
	request_view rv;
	int rc;

	if (sign_headers(&in, &out, err, sizeof(err)) != 0) {
		printf("# sign %s: %s\n", name, err);
		return -2;
	}
	for (size_t i = 0; i < out.n; i++)
		headers_set(&t, out.h[i].name, out.h[i].value);
	sent = out.body != NULL ? xstrndup((const char *)out.body, out.body_len) : xstrdup(body);
	if (tamper_from != NULL) {
		char *at = strstr(sent, tamper_from);

		if (at == NULL || strlen(tamper_from) != strlen(tamper_to))
			abort();
		memcpy(at, tamper_to, strlen(tamper_to));
	}
	ep.secrets = secrets_of(ep_secrets);
	rv = view(&t, sent, strlen(sent), NULL);
	rc = verify_request(&ep, &rv, res);
	secret_set_free(ep.secrets);
	headers_clear(&t);
	sign_release(&out);
	free(sent);
	return rc;
}

static void
test_schemes(void)
{
	verify_result res;
	char both[512];
	const char *ady =
		"{\"live\":\"false\",\"notificationItems\":["
		"{\"NotificationRequestItem\":{\"amount\":{\"currency\":\"EUR\",\"value\":"
		"1130},\"eventCode\":\"AUTHORISATION\",\"merchantAccountCode\":\"M\","
		"\"merchantReference\":\"r:1\",\"pspReference\":\"PSP1\",\"success\":\"true\"}},"
		"{\"NotificationRequestItem\":{\"additionalData\":{ },\"amount\":{\"currency\":"
		"\"EUR\",\"value\":7},\"eventCode\":\"CAPTURE\",\"pspReference\":\"PSP2\","
		"\"success\":\"true\"}},"
		"{\"NotificationRequestItem\":{\"additionalData\":{\"hmacSignature\":\"old\","
		"\"x\":1},\"amount\":{\"currency\":\"EUR\",\"value\":8},\"eventCode\":"
		"\"CAPTURE\",\"pspReference\":\"PSP3\",\"success\":\"true\"}}]}";

	ok(round_trip("adyen", adyen_key, adyen_key, ady, NULL, NULL, &res) == 0,
	   "adyen: hookinbox-send's items verify (no additionalData, an empty one, an old "
	   "signature) (%s)",
	   res.reason);
	ok(round_trip("adyen", adyen_key, adyen_key, ady, "\"value\":7", "\"value\":8", &res) ==
			   -1 &&
		   res.status == VERIFY_MISMATCH,
	   "adyen: one item's amount changed: mismatch");
	snprintf(both, sizeof(both), "%s\n%s\n",
		 "0A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F9", adyen_key);
	ok(round_trip("adyen", adyen_key, both, ady, NULL, NULL, &res) == 0 &&
		   res.secret_index == 1,
	   "adyen: the second key of the file matches");

	snprintf(both, sizeof(both), "%s\n%s\n", pub2, pub1);
	ok(round_trip("sendgrid", priv1, pub1, "[{\"sg_event_id\":\"a\"}]", NULL, NULL, &res) == 0,
	   "sendgrid: verifies");
	ok(round_trip("sendgrid", priv1, both, "[{\"sg_event_id\":\"a\"}]", NULL, NULL, &res) ==
			   0 &&
		   res.secret_index == 1,
	   "sendgrid: rotation, the second key");
	ok(round_trip("sendgrid", priv2, pub1, "[{\"sg_event_id\":\"a\"}]", NULL, NULL, &res) ==
			   -1 &&
		   res.status == VERIFY_MISMATCH,
	   "sendgrid: the other key's signature does not verify (the key cache keeps them apart)");
	ok(round_trip("sendgrid", priv1, pub384, "[{\"sg_event_id\":\"a\"}]", NULL, NULL, &res) ==
			   -1 &&
		   res.status == VERIFY_MISMATCH,
	   "sendgrid: a P-384 key matches nothing");
	ok(round_trip("sendgrid", pub1, pub1, "[]", NULL, NULL, &res) == -2,
	   "sendgrid: a public key does not sign");

	ok(round_trip("hubspot", "hs-secret", "hs-secret", "[{\"eventId\":1}]", NULL, NULL, &res) ==
		   0,
	   "hubspot: verifies (%s)", res.reason);
	ok(round_trip("hubspot", "hs-secret", "hs-secret", "[{\"eventId\":1}]", "1", "2", &res) ==
		   -1,
	   "hubspot: a changed body does not");

	ok(round_trip("mailgun", "key-1", "key-1", "{\"event\":\"delivered\"}", NULL, NULL, &res) ==
		   0,
	   "mailgun: the signed body verifies (%s)", res.reason);
	ok(round_trip("mailgun", "key-1", "key-1", "{\"event\":\"delivered\"}", "e0b5", "e0b6",
		      &res) == -1,
	   "mailgun: another token does not");
	ok(round_trip("mailgun", "key-1", "key-1", "{\"event\":\"delivered\"}", "delivered",
		      "failedxxx", &res) == 0,
	   "mailgun: the event data is not signed (the token is the delivery key)");
}

static void
test_parent_signature(void)
{
	/* a subaccount's event: its own signature wrong, the parent's right */

	unsigned char mac[64];
	char hex[65], text[512];
	hmac_part part[2] = {{"1700000000", 10}, {"tok", 3}};
	provider_endpoint ep = {.provider = named("mailgun")};
	test_headers t = {{0}, {0}, 0};
	verify_result res;
	request_view rv;

	if (hmac_compute(HMAC_SHA256, (const unsigned char *)"parent-key", 10, part, 2, mac) != 0)
		abort();
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", mac[i]);
	snprintf(
		text, sizeof(text),
		"{\"signature\":{\"timestamp\":\"1700000000\",\"token\":\"tok\",\"signature\":\"%064d\","
		"\"parent-signature\":\"%s\"},\"event-data\":{}}",
		0, hex);
	ep.secrets = secrets_of("sub-key\nparent-key\n");
	rv = view(&t, text, strlen(text), NULL);
	ok(verify_request(&ep, &rv, &res) == 0 && res.secret_index == 1,
	   "mailgun: the parent-signature matches the parent's key");
	secret_set_free(ep.secrets);
}

int
main(void)
{
	test_split();
	test_schemes();
	test_parent_signature();
	return done_testing();
}
