/* SPDX-License-Identifier: ISC */
/*
 * verifycost.c - what checking a signature costs, per provider class
 *
 *   obj/bench/verifycost [SIZE] [ITERATIONS]
 *
 * For every provider of the table (whatever its class, those added later
 * included), signs one body of about SIZE bytes (default 2048) as the
 * provider does (sign.h) and times verify_request over it, up to
 * ITERATIONS times (default 20000) or 50 ms, on one thread; for a provider
 * that sends batches, the splitting into events too (envelope_split).  The
 * keys and bodies are found by trying each of a few in turn (any text, a
 * hex HMAC key, whsec_, user:password, Ed25519, ECDSA P-256; an object, an
 * array of events, Adyen's notificationItems) until the provider's own
 * signer and verifier agree.  Prints one line per class, tab-separated:
 * the class, microseconds of verification per delivery (the mean over its
 * providers), microseconds of splitting (batches; "-" otherwise), the
 * body size and the providers; then the providers that could not be
 * measured.  bench/run.pl prints it beside the web ceiling (null.fcgi).
 */
#include "envelope.h"
#include "sign.h"
#include "verify.h"

#include "clock.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUDGET_US 50000
#define MAX_CLASSES 64
#define URL "https://bench.example/hooks/x"

/* a signing secret and the endpoint's (NULL: the same) */
typedef struct keypair {
	const char *sign, *verify;
} keypair;

static const keypair keys[] = {
	{"s-0123456789abcdef", NULL},
	{"44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056", NULL},
	{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", NULL},
	{"user:password-0123", NULL},
	/* Ed25519: the seed 0x11 x 32 in hex, 0x33 x 32 in base64, and their public keys */
	{"1111111111111111111111111111111111111111111111111111111111111111",
	 "d04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737"},
	{"MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=",
	 "F8t5+ytBIPKx7GXkGY1uCLKOgT/rAeSkAIObheGAgM4="},
	/* ECDSA P-256: PKCS#8 and SubjectPublicKeyInfo, base64 DER (a bench key) */
	{"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqrMdSjCL0iKYfm6ZJGTjYMQ8SMamfOmlofJxsKpm/"
	 "LOhRANCAARzzp2KVqIcNsCy5IHpPj4WOZdQENtrgnoHvsmKUkxZOWqsrX2VQx/W6FCL/83hYdwliIw1sV0JTSzji96dtfhI",
	 "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEc86dilaiHDbAsuSB6T4+FjmXUBDba4J6B77JilJMWTlqrK19lUMf1uhQi/"
	 "/N4WHcJYiMNbFdCU0s44venbX4SA=="},
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

enum { BODY_OBJECT, BODY_ARRAY, BODY_ADYEN, N_BODIES };

typedef struct klass {
	const char *name;
	double verify_us, split_us; /* sums over its providers */
	int n, n_split;
	size_t size;
	char providers[512];
} klass;

typedef struct hdrs {
	sign_output out;
} hdrs;

static const char *
lookup(const void *ctx, const char *name)
{
	const hdrs *h = ctx;

	for (size_t i = 0; i < h->out.n; i++)
		if (strcasecmp(h->out.h[i].name, name) == 0)
			return h->out.h[i].value;
	return NULL;
}

static secret_set *
secrets_of(const char *s)
{
	char path[] = "/tmp/hookinbox-verifycost-XXXXXX", err[256];
	int fd = mkstemp(path);
	secret_set *set;

	if (fd < 0 || fchmod(fd, 0600) != 0 || write(fd, s, strlen(s)) < 0 || close(fd) != 0) {
		perror(path);
		exit(1);
	}
	set = secret_set_load(path, err, sizeof(err));
	unlink(path);
	if (set == NULL) {
		fprintf(stderr, "verifycost: %s\n", err);
		exit(1);
	}
	return set;
}

/* append to buf[*len] (cap bytes) */
static void
put(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (n < cap - *len) {
		memcpy(buf + *len, s, n + 1);
		*len += n;
	}
}

/* a body of kind k of about size bytes; the caller frees it */
static char *
make_body(int k, size_t size, int64_t now, size_t *len)
{
	size_t cap = size + 4096;
	char *b = malloc(cap), item[512], pad[160];

	if (b == NULL)
		exit(1);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	*len = 0;
	b[0] = '\0';
	if (k == BODY_OBJECT) {
		snprintf(
			item, sizeof(item),
			"{\"id\":\"evt_1\",\"event_id\":\"evt_1\",\"type\":\"bench.event\","
			"\"webhookTimestamp\":%lld,\"created\":%lld,\"data\":{\"id\":\"d_1\"},\"pad\":\"",
			(long long)now * 1000, (long long)now);
		put(b, cap, len, item);
		while (*len + 2 < size)
			put(b, cap, len,
			    size - *len - 2 > 64
				    ? "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				    : "x");
		put(b, cap, len, "\"}");
		return b;
	}
	put(b, cap, len, k == BODY_ADYEN ? "{\"live\":\"false\",\"notificationItems\":[" : "[");
	for (int i = 0; *len + 300 < size || i == 0; i++) {
		if (k == BODY_ADYEN)
			snprintf(
				item, sizeof(item),
				"%s{\"NotificationRequestItem\":{\"amount\":{\"currency\":\"EUR\","
				"\"value\":%d},\"eventCode\":\"AUTHORISATION\",\"merchantAccountCode\":"
				"\"M\",\"merchantReference\":\"r%d\",\"pspReference\":\"88310000%d\","
				"\"success\":\"true\",\"reason\":\"%.60s\"}}",
				i > 0 ? "," : "", 1000 + i, i, i, pad);
		else
			snprintf(
				item, sizeof(item),
				"%s{\"sg_event_id\":\"sg-%d\",\"eventId\":%d,\"subscriptionId\":7,"
				"\"event\":\"delivered\",\"subscriptionType\":\"contact.creation\","
				"\"objectId\":123,\"occurredAt\":%lld,\"timestamp\":%lld,\"pad\":\"%.80s\"}",
				i > 0 ? "," : "", i, i, (long long)now * 1000, (long long)now, pad);
		put(b, cap, len, item);
	}
	put(b, cap, len, k == BODY_ADYEN ? "]}" : "]");
	return b;
}

/* the query of url, or NULL */
static const char *
query_of(const char *url)
{
	const char *q = strchr(url, '?');

	return q != NULL ? q + 1 : NULL;
}

/*
 * Time p with key kp and body kind k: 0 and the figures, or -1 when this
 * key or body does not suit the provider.
 */
static int
measure(provider p, const keypair *kp, int k, size_t size, long iters, double *verify_us,
	double *split_us, size_t *body_len)
{
	static char header[] = "X-Signature", idf[] = "id", public_url[] = URL;
	hmac_conf hc = {.header = header, .alg = HMAC_SHA256, .enc = HMAC_HEX, .id_field = idf};
	int64_t now = clock_now(), t0;
	size_t len;
	char *body = make_body(k, size, now, &len), err[256], *url;
	hdrs h = {.out = {.n = 0}};
	provider_endpoint ep = {.provider = p, .public_url = public_url, .hmac = hc};
	sign_input in = {.provider = p,
			 .hmac = &hc,
			 .secret = (const unsigned char *)kp->sign,
			 .secret_len = strlen(kp->sign),
			 .event_id = "msg_1",
			 .event_type = "bench.event",
			 .timestamp = now,
			 .body = (const unsigned char *)body,
			 .body_len = len};
	request_view rv;
	verify_result res;
	envelope_batch b;
	const char *reason;
	long i;
	int rc = -1;

	url = sign_json_body_url(p, URL, (const unsigned char *)body, len);
	in.url = url;
	if (sign_headers(&in, &h.out, err, sizeof(err)) != 0)
		goto out;
	ep.secrets = secrets_of(kp->verify != NULL ? kp->verify : kp->sign);
	rv = (request_view){.header = lookup,
			    .ctx = &h,
			    .body = h.out.body != NULL ? h.out.body : (const unsigned char *)body,
			    .body_len = h.out.body != NULL ? h.out.body_len : len,
			    .query = query_of(url),
			    .now = now};
	if (verify_request(&ep, &rv, &res) != 0)
		goto out_secrets;
	if (envelope_batched(&ep)) {
		int split = envelope_split(&ep, &rv, &b, &reason);

		envelope_batch_release(&b);
		if (split != 0)
			goto out_secrets;
	}
	t0 = clock_mono_us();
	for (i = 0; i < iters && (i < 5 || clock_mono_us() - t0 < BUDGET_US); i++)
		(void)verify_request(&ep, &rv, &res);
	*verify_us = (double)(clock_mono_us() - t0) / (double)i;
	*split_us = -1;
	if (envelope_batched(&ep)) {
		t0 = clock_mono_us();
		for (i = 0; i < iters && (i < 5 || clock_mono_us() - t0 < BUDGET_US); i++) {
			if (envelope_split(&ep, &rv, &b, &reason) != 0)
				abort(); /* it split before */
			envelope_batch_release(&b);
		}
		*split_us = (double)(clock_mono_us() - t0) / (double)i;
	}
	*body_len = rv.body_len;
	rc = 0;
out_secrets:
	secret_set_free(ep.secrets);
out:
	sign_release(&h.out);
	free(url);
	free(body);
	return rc;
}

int
main(int argc, char **argv)
{
	size_t size = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 2048;
	long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
	klass cls[MAX_CLASSES];
	size_t ncls = 0;
	char missing[1024] = "";
	size_t mlen = 0;

	if (iters <= 0 || size < 64 || size > 16 * 1024 * 1024)
		return 1;
	for (int i = 0; provider_is_set((provider)i); i++) {
		provider p = (provider)i;
		const char *name = provider_class(p);
		double v = 0, s = -1;
		size_t blen = 0, c;
		bool done = false;

		for (int k = 0; k < N_BODIES && !done; k++)
			for (size_t j = 0; j < N_KEYS && !done; j++)
				done = measure(p, &keys[j], k, size, iters, &v, &s, &blen) == 0;
		if (!done) {
			put(missing, sizeof(missing), &mlen, mlen > 0 ? ", " : "");
			put(missing, sizeof(missing), &mlen, provider_name(p));
			continue;
		}
		for (c = 0; c < ncls && strcmp(cls[c].name, name) != 0; c++)
			;
		if (c == ncls) {
			if (ncls == MAX_CLASSES)
				continue;
			memset(&cls[c], 0, sizeof(cls[c]));
			cls[c].name = name;
			ncls++;
		}
		cls[c].verify_us += v;
		cls[c].n++;
		if (s >= 0) {
			cls[c].split_us += s;
			cls[c].n_split++;
		}
		cls[c].size = blen > cls[c].size ? blen : cls[c].size;
		{
			size_t plen = strlen(cls[c].providers);

			put(cls[c].providers, sizeof(cls[c].providers), &plen,
			    plen > 0 ? ", " : "");
			put(cls[c].providers, sizeof(cls[c].providers), &plen, provider_name(p));
		}
	}
	for (size_t c = 0; c < ncls; c++) {
		char split[32] = "-";

		if (cls[c].n_split > 0)
			snprintf(split, sizeof(split), "%.2f", cls[c].split_us / cls[c].n_split);
		printf("%s\t%.2f\t%s\t%zu\t%s\n", cls[c].name, cls[c].verify_us / cls[c].n, split,
		       cls[c].size, cls[c].providers);
	}
	if (mlen > 0)
		printf("not measured (no key or body of this bench suits them)\t-\t-\t-\t%s\n",
		       missing);
	return 0;
}
