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
#include "pkey.h"
#include "sign.h"
#include "verify.h"

#include "base64.h"
#include "clock.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

typedef struct kase kase;
/* the asymmetric classes: make keys, fill the secrets and the endpoint's files */
typedef void (*setup_fn)(const kase *c, char **sign_secret, char **verify_secret,
			 provider_endpoint *ep);

struct kase {
	const char *klass;
	provider p;
	const char *sign_secret, *verify_secret;
	setup_fn setup;
};

static void jwt_es256(const kase *c, char **ss, char **vs, provider_endpoint *ep);
static void jwt_rs256(const kase *c, char **ss, char **vs, provider_endpoint *ep);
static void cert_rsa(const kase *c, char **ss, char **vs, provider_endpoint *ep);

static const kase kases[] = {
	{"body HMAC-SHA256, hex (razorpay, ...)", PROVIDER_RAZORPAY, "s-0123456789", NULL, NULL},
	{"body HMAC-SHA1, hex (vercel, intercom)", PROVIDER_VERCEL, "s-0123456789", NULL, NULL},
	{"timestamped t=,v1= (stripe, mux, ...)", PROVIDER_STRIPE, "whsec_0123456789", NULL, NULL},
	{"v0:ts:body (slack, zoom)", PROVIDER_ZOOM, "s-0123456789", NULL, NULL},
	{"standard webhooks v1", PROVIDER_STANDARD, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", NULL,
	 NULL},
	{"linear (HMAC + body timestamp)", PROVIDER_LINEAR, "s-0123456789", NULL, NULL},
	{"Ed25519 (discord, telnyx)", PROVIDER_DISCORD,
	 "1111111111111111111111111111111111111111111111111111111111111111",
	 "d04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737", NULL},
	{"Basic credentials (postmark, chargebee)", PROVIDER_POSTMARK, "user:password-0123", NULL,
	 NULL},
	{"ES256 JWT, body digest (plaid)", PROVIDER_PLAID, NULL, NULL, jwt_es256},
	{"RS256 bearer JWT (pubsub)", PROVIDER_PUBSUB, NULL, NULL, jwt_rs256},
	{"RSA + cached certificate (paypal, sns)", PROVIDER_PAYPAL, NULL, NULL, cert_rsa},
};

static char tmpdir[] = "/tmp/hookinbox-verifycost-d-XXXXXX";

static void
die(const char *what)
{
	fprintf(stderr, "verifycost: %s\n", what);
	exit(1);
}

static char *
b64_of(const unsigned char *p, size_t n)
{
	char *s = malloc(BASE64_ENCODED_SIZE(n));

	if (s == NULL)
		die("out of memory");
	base64_encode(p, n, s);
	return s;
}

/* "<words> <base64 PKCS#8 DER>" for hookinbox-send's signers */
static char *
private_line(EVP_PKEY *k, const char *words)
{
	unsigned char *der = NULL;
	int n = i2d_PrivateKey(k, &der);
	PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(k);
	char *b64, *line;

	OPENSSL_free(der);
	der = NULL;
	if (n <= 0 || p8 == NULL || (n = i2d_PKCS8_PRIV_KEY_INFO(p8, &der)) <= 0)
		die("cannot export a key");
	PKCS8_PRIV_KEY_INFO_free(p8);
	b64 = b64_of(der, (size_t)n);
	OPENSSL_free(der);
	line = malloc(strlen(words) + strlen(b64) + 2);
	if (line == NULL)
		die("out of memory");
	sprintf(line, "%s %s", words, b64);
	free(b64);
	return line;
}

static char *
b64u_of(const unsigned char *p, size_t n)
{
	char *s = malloc(4 * ((n + 2) / 3) + 1);

	if (s == NULL)
		die("out of memory");
	b64url_encode(p, n, s);
	return s;
}

static void
jwt_es256(const kase *c, char **ss, char **vs, provider_endpoint *ep)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	unsigned char pt[65];
	size_t n;
	char *x, *y;

	(void)c;
	if (k == NULL ||
	    !EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &n) ||
	    n != 65)
		die("cannot make an EC key");
	x = b64u_of(pt + 1, 32);
	y = b64u_of(pt + 33, 32);
	*ss = private_line(k, "bench-ec");
	*vs = malloc(256);
	if (*vs == NULL)
		die("out of memory");
	snprintf(
		*vs, 256,
		"{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"bench-ec\",\"x\":\"%s\",\"y\":\"%s\"}",
		x, y);
	free(x);
	free(y);
	EVP_PKEY_free(k);
	(void)ep;
}

static void
jwt_rs256(const kase *c, char **ss, char **vs, provider_endpoint *ep)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	BIGNUM *bn = NULL, *be = NULL;
	unsigned char nb[256], eb[8];
	char *n64, *e64, path[sizeof(tmpdir) + 16];
	FILE *f;
	int nl, el;

	(void)c;
	if (k == NULL || !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &bn) ||
	    !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &be) ||
	    (nl = BN_bn2bin(bn, nb)) <= 0 || (el = BN_bn2bin(be, eb)) <= 0)
		die("cannot make an RSA key");
	n64 = b64u_of(nb, (size_t)nl);
	e64 = b64u_of(eb, (size_t)el);
	snprintf(path, sizeof(path), "%s/jwks", tmpdir);
	if ((f = fopen(path, "w")) == NULL)
		die("cannot write the JWKS");
	fprintf(f,
		"{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"bench-rsa\",\"n\":\"%s\",\"e\":\"%s\"}]}\n",
		n64, e64);
	fclose(f);
	ep->key_file = strdup(path);
	ep->audience = strdup("https://bench.example/ps");
	*ss = private_line(k, "bench-rsa bench@example.iam.gserviceaccount.com");
	*vs = strdup("bench@example.iam.gserviceaccount.com");
	free(n64);
	free(e64);
	BN_free(bn);
	BN_free(be);
	EVP_PKEY_free(k);
}

#define BENCH_CERT_URL "https://api.paypal.com/v1/notifications/certs/CERT-bench"

/* a self-signed certificate, trusted as ca_file and cached under its URL */
static void
cert_rsa(const kase *c, char **ss, char **vs, provider_endpoint *ep)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	X509 *x = X509_new();
	X509_NAME *name;
	char file[CERT_FILE_LEN], path[sizeof(tmpdir) + 96];
	FILE *f;

	(void)c;
	if (k == NULL || x == NULL || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), 1) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -86400) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 86400) || !X509_set_pubkey(x, k) ||
	    (name = X509_get_subject_name(x)) == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"bench",
					-1, -1, 0) ||
	    !X509_set_issuer_name(x, name) || !X509_sign(x, k, EVP_sha256()))
		die("cannot make a certificate");
	snprintf(path, sizeof(path), "%s/certs", tmpdir);
	if (mkdir(path, 0700) != 0)
		die("cannot make the certificate cache");
	ep->cert_cache = strdup(path);
	if (cert_file_name(BENCH_CERT_URL, strlen(BENCH_CERT_URL), file) != 0)
		die("cannot name the certificate");
	snprintf(path, sizeof(path), "%s/certs/%s", tmpdir, file);
	if ((f = fopen(path, "w")) == NULL || !PEM_write_X509(f, x))
		die("cannot write the certificate");
	fclose(f);
	snprintf(path, sizeof(path), "%s/ca.pem", tmpdir);
	if ((f = fopen(path, "w")) == NULL || !PEM_write_X509(f, x))
		die("cannot write the CA file");
	fclose(f);
	ep->ca_file = strdup(path);
	*ss = private_line(k, BENCH_CERT_URL " 1JE4291016473214C");
	*vs = strdup("1JE4291016473214C");
	X509_free(x);
	EVP_PKEY_free(k);
}

/* everything the setup wrote */
static void
cleanup(void)
{
	char cmd[sizeof(tmpdir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "verifycost: could not remove %s\n", tmpdir);
}

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
	if (mkdtemp(tmpdir) == NULL)
		die("cannot make a temporary directory");
	atexit(cleanup);
	for (size_t k = 0; k < sizeof(kases) / sizeof(kases[0]); k++) {
		const kase *c = &kases[k];
		hdrs h = {{{{0}}, 0}};
		sign_input in;
		char err[256], *ss = NULL, *vs = NULL;
		const char *sign_secret = c->sign_secret, *verify_secret = c->verify_secret;
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
		memset(&ep, 0, sizeof(ep));
		if (c->setup != NULL) {
			c->setup(c, &ss, &vs, &ep);
			sign_secret = ss;
			verify_secret = vs;
		}
		in.provider = c->p;
		in.secret = (const unsigned char *)sign_secret;
		in.secret_len = strlen(sign_secret);
		in.url = "https://bench.example/ps";
		in.event_id = "msg_1";
		in.timestamp = now;
		in.body = body;
		in.body_len = size > (size_t)n + 2 ? size : (size_t)n + 2;
		if (sign_headers(&in, &h.out, err, sizeof(err)) != 0) {
			fprintf(stderr, "verifycost: %s: %s\n", c->klass, err);
			return 1;
		}
		ep.provider = c->p;
		ep.secrets = secrets_of(verify_secret != NULL ? verify_secret : sign_secret);
		if (provider_endpoint_load(&ep, err, sizeof(err)) != 0) {
			fprintf(stderr, "verifycost: %s: %s\n", c->klass, err);
			return 1;
		}
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
		provider_endpoint_release(&ep);
		free(ep.key_file);
		free(ep.ca_file);
		free(ep.cert_cache);
		free(ep.audience);
		free(ss);
		free(vs);
		sign_release(&h.out);
	}
	free(body);
	return 0;
}
