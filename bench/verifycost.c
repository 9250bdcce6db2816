/* SPDX-License-Identifier: ISC */
/*
 * verifycost.c - what checking a signature costs, per provider class
 *
 *   obj/bench/verifycost [SIZE] [ITERATIONS]
 *
 * Signs one SIZE-byte body (default 2048) as each class's provider does
 * (sign.h) and times verify_request over it, ITERATIONS times (default
 * 20000), on one thread.  Prints one line per class: microseconds per
 * delivery.  The web ceiling beside it is bench/run.pl's null.fcgi.
 */
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

typedef struct kase {
	const char *klass;
	provider p;
	const char *sign_secret, *verify_secret;
} kase;

static const kase kases[] = {
	{"body HMAC-SHA256, hex (razorpay, ...)", PROVIDER_RAZORPAY, "s-0123456789", NULL},
	{"body HMAC-SHA1, hex (vercel, intercom)", PROVIDER_VERCEL, "s-0123456789", NULL},
	{"timestamped t=,v1= (stripe, mux, ...)", PROVIDER_STRIPE, "whsec_0123456789", NULL},
	{"v0:ts:body (slack, zoom)", PROVIDER_ZOOM, "s-0123456789", NULL},
	{"standard webhooks v1", PROVIDER_STANDARD, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", NULL},
	{"linear (HMAC + body timestamp)", PROVIDER_LINEAR, "s-0123456789", NULL},
	{"Ed25519 (discord, telnyx)", PROVIDER_DISCORD,
	 "1111111111111111111111111111111111111111111111111111111111111111",
	 "d04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737"},
	{"Basic credentials (postmark, chargebee)", PROVIDER_POSTMARK, "user:password-0123", NULL},
	{"RFC 3339 timestamp and MAC (twitch, box, zendesk)", PROVIDER_TWITCH, "s-0123456789",
	 NULL},
	{"numbered headers, base64 (docusign)", PROVIDER_DOCUSIGN, "s-0123456789", NULL},
};

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

int
main(int argc, char **argv)
{
	size_t size = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 2048;
	long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
	unsigned char *body = malloc(size + 64);
	int64_t now = clock_now();

	if (body == NULL || iters <= 0)
		return 1;
	for (size_t k = 0; k < sizeof(kases) / sizeof(kases[0]); k++) {
		const kase *c = &kases[k];
		hdrs h = {{.n = 0}};
		sign_input in;
		char err[256];
		provider_endpoint ep;
		request_view rv;
		verify_result res;
		int n = snprintf((char *)body, size + 64,
				 "{\"id\":\"evt_1\",\"webhookTimestamp\":%lld,\"pad\":\"",
				 (long long)now * 1000);
		int64_t t0, t1;

		memset(body + n, 'x', size > (size_t)n + 2 ? size - (size_t)n - 2 : 0);
		memcpy(body + (size > (size_t)n + 2 ? size - 2 : (size_t)n), "\"}", 2);
		memset(&in, 0, sizeof(in));
		in.provider = c->p;
		in.secret = (const unsigned char *)c->sign_secret;
		in.secret_len = strlen(c->sign_secret);
		in.event_id = "msg_1";
		in.timestamp = now;
		in.body = body;
		in.body_len = size > (size_t)n + 2 ? size : (size_t)n + 2;
		if (sign_headers(&in, &h.out, err, sizeof(err)) != 0) {
			fprintf(stderr, "verifycost: %s: %s\n", c->klass, err);
			return 1;
		}
		memset(&ep, 0, sizeof(ep));
		ep.provider = c->p;
		ep.secrets =
			secrets_of(c->verify_secret != NULL ? c->verify_secret : c->sign_secret);
		rv = (request_view){.header = lookup,
				    .ctx = &h,
				    .body = body,
				    .body_len = in.body_len,
				    .now = now};
		t0 = clock_mono_us();
		for (long i = 0; i < iters; i++) {
			if (verify_request(&ep, &rv, &res) != 0) {
				fprintf(stderr, "verifycost: %s: %s\n", c->klass, res.reason);
				return 1;
			}
		}
		t1 = clock_mono_us();
		printf("%-44s %7.2f us per %zu-byte delivery\n", c->klass,
		       (double)(t1 - t0) / (double)iters, in.body_len);
		secret_set_free(ep.secrets);
		sign_release(&h.out);
	}
	free(body);
	return 0;
}
