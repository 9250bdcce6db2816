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
 * array of events, Adyen's notificationItems, Braintree's form) until the
 * provider's own signer and verifier agree; for the public-key providers the
 * bench makes the keys, certificates and files their endpoints read (a JWK,
 * a JWKS, a CA and its cached certificate, an App Store-like chain).
 * Prints one line per class, tab-separated: the class, microseconds of
 * verification per delivery (the mean over its providers), microseconds of
 * splitting (batches; "-" otherwise), the body size and the providers;
 * then the providers that could not be measured.  bench/run.pl prints it
 * beside the web ceiling (null.fcgi).
 */
#include "envelope.h"
#include "pkey.h"
#include "sign.h"
#include "verify.h"

#include "base64.h"
#include "clock.h"
#include "secret.h"

#include <errno.h>
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
#include <openssl/x509v3.h>

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

enum { BODY_OBJECT, BODY_ARRAY, BODY_ADYEN, BODY_FORM, N_BODIES };

typedef struct klass {
	const char *name;
	double verify_us, split_us; /* sums over its providers */
	int n, n_split;
	size_t size;
	char providers[512];
} klass;

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
	snprintf(line, strlen(words) + strlen(b64) + 2, "%s %s", words, b64);
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
jwt_es256(char **ss, char **vs, provider_endpoint *ep)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	unsigned char pt[65];
	size_t n;
	char *x, *y;

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
jwt_rs256(char **ss, char **vs, provider_endpoint *ep)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	BIGNUM *bn = NULL, *be = NULL;
	unsigned char nb[256], eb[8];
	char *n64, *e64, path[sizeof(tmpdir) + 16];
	FILE *f;
	int nl, el;

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
	ep->audience = strdup(URL);
	*ss = private_line(k, "bench-rsa bench@example.iam.gserviceaccount.com");
	*vs = strdup("bench@example.iam.gserviceaccount.com");
	free(n64);
	free(e64);
	BN_free(bn);
	BN_free(be);
	EVP_PKEY_free(k);
}

#define BENCH_PAYPAL_URL "https://api.paypal.com/v1/notifications/certs/CERT-bench"
#define BENCH_SNS_URL "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-bench.pem"
#define BENCH_TOPIC "arn:aws:sns:us-east-1:123456789012:bench"

/*
 * A certificate of subject cn for k, signed by issuer_key as issuer (NULL:
 * self-signed), carrying the extensions exts ("name=value" as openssl's
 * config files write them, NULL-terminated)
 */
static X509 *
make_cert(EVP_PKEY *k, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, const char *const *exts)
{
	X509 *x = X509_new();
	X509_NAME *name;
	X509V3_CTX v3;
	static long serial;

	if (x == NULL || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), ++serial) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -86400) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 86400) || !X509_set_pubkey(x, k) ||
	    (name = X509_get_subject_name(x)) == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
					0) ||
	    !X509_set_issuer_name(x, issuer != NULL ? X509_get_subject_name(issuer) : name))
		die("cannot make a certificate");
	X509V3_set_ctx(&v3, issuer != NULL ? issuer : x, x, NULL, NULL, 0);
	for (size_t i = 0; exts != NULL && exts[i] != NULL; i++) {
		char ext[128], *eq;
		X509_EXTENSION *e;

		snprintf(ext, sizeof(ext), "%s", exts[i]);
		if ((eq = strchr(ext, '=')) == NULL)
			die("bad extension");
		*eq = '\0';
		if ((e = X509V3_EXT_nconf(NULL, &v3, ext, eq + 1)) == NULL ||
		    !X509_add_ext(x, e, -1))
			die("cannot add an extension");
		X509_EXTENSION_free(e);
	}
	if (!X509_sign(x, issuer_key != NULL ? issuer_key : k, EVP_sha256()))
		die("cannot sign a certificate");
	return x;
}

/* write the PEM of x to <tmpdir>/name; the path, malloc'd */
static char *
write_pem(X509 *x, const char *name)
{
	char path[sizeof(tmpdir) + 96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if ((f = fopen(path, "w")) == NULL || !PEM_write_X509(f, x))
		die("cannot write a certificate");
	fclose(f);
	return strdup(path);
}

/* a self-signed certificate, trusted as ca_file and cached under url */
static void
cert_rsa(const char *url, const char *words, const char *verify, char **ss, char **vs,
	 provider_endpoint *ep)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	X509 *x;
	char file[CERT_FILE_LEN], path[sizeof(tmpdir) + 96];

	if (k == NULL)
		die("cannot make an RSA key");
	x = make_cert(k, "bench", NULL, NULL, NULL);
	snprintf(path, sizeof(path), "%s/certs", tmpdir);
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		die("cannot make the certificate cache");
	ep->cert_cache = strdup(path);
	if (cert_file_name(url, strlen(url), file) != 0)
		die("cannot name the certificate");
	snprintf(path, sizeof(path), "certs/%s", file);
	free(write_pem(x, path));
	ep->ca_file = write_pem(x, "ca.pem");
	*ss = private_line(k, words);
	*vs = strdup(verify);
	X509_free(x);
	EVP_PKEY_free(k);
}

static void
cert_paypal(char **ss, char **vs, provider_endpoint *ep)
{
	cert_rsa(BENCH_PAYPAL_URL, BENCH_PAYPAL_URL " 1JE4291016473214C", "1JE4291016473214C", ss,
		 vs, ep);
}

static void
cert_sns(char **ss, char **vs, provider_endpoint *ep)
{
	cert_rsa(BENCH_SNS_URL, BENCH_SNS_URL " " BENCH_TOPIC, BENCH_TOPIC, ss, vs, ep);
}

/* base64 DER of x, malloc'd */
static char *
der_b64(X509 *x)
{
	unsigned char *der = NULL;
	int n = i2d_X509(x, &der);
	char *b64;

	if (n <= 0)
		die("cannot encode a certificate");
	b64 = b64_of(der, (size_t)n);
	OPENSSL_free(der);
	return b64;
}

/* an App Store chain: root (ca_file), intermediate and leaf with Apple's marker extensions */
static void
x5c_es256(char **ss, char **vs, provider_endpoint *ep)
{
	static const char *const ca[] = {"basicConstraints=critical,CA:true",
					 "keyUsage=critical,keyCertSign", NULL};
	static const char *const inter[] = {"basicConstraints=critical,CA:true",
					    "keyUsage=critical,keyCertSign",
					    "1.2.840.113635.100.6.2.1=ASN1:NULL", NULL};
	static const char *const leaf[] = {"1.2.840.113635.100.6.11.1=ASN1:NULL", NULL};
	EVP_PKEY *rk = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *ik = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *lk = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *root, *in, *lf;
	char *b[3], words[8192];

	if (rk == NULL || ik == NULL || lk == NULL)
		die("cannot make an EC key");
	root = make_cert(rk, "bench root", NULL, NULL, ca);
	in = make_cert(ik, "bench intermediate", root, rk, inter);
	lf = make_cert(lk, "bench leaf", in, ik, leaf);
	ep->ca_file = write_pem(root, "apple-root.pem");
	b[0] = der_b64(lf);
	b[1] = der_b64(in);
	b[2] = der_b64(root);
	snprintf(words, sizeof(words), "%s %s %s", b[0], b[1], b[2]);
	*ss = private_line(lk, words);
	*vs = strdup("com.example.bench");
	for (size_t i = 0; i < 3; i++)
		free(b[i]);
	X509_free(root);
	X509_free(in);
	X509_free(lf);
	EVP_PKEY_free(rk);
	EVP_PKEY_free(ik);
	EVP_PKEY_free(lk);
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

/* the public-key classes: make keys, fill the secrets and the endpoint's files */
typedef void (*setup_fn)(char **sign_secret, char **verify_secret, provider_endpoint *ep);

static const struct {
	provider p;
	setup_fn setup;
} asym[] = {
	{PROVIDER_PLAID, jwt_es256}, {PROVIDER_PUBSUB, jwt_rs256}, {PROVIDER_PAYPAL, cert_paypal},
	{PROVIDER_SNS, cert_sns},    {PROVIDER_APPLE, x5c_es256},
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
		snprintf(item, sizeof(item),
			 "{\"id\":\"evt_1\",\"event_id\":\"evt_1\",\"type\":\"bench.event\","
			 "\"webhookTimestamp\":%lld,\"created\":%lld,\"data\":{\"id\":\"d_1\","
			 "\"bundleId\":\"com.example.bench\"},\"pad\":\"",
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
	if (k == BODY_FORM) {
		/* Braintree's bt_payload: base64 of its XML notification, urlencoded */
		size_t xl = size * 3 / 4 > 200 ? size * 3 / 4 - 100 : 100, n;
		char *xml = malloc(xl + 1), *b64;

		if (xml == NULL)
			exit(1);
		n = (size_t)snprintf(xml, xl + 1,
				     "<notification><kind>check</kind><subject><id>1</id><pad>");
		while (n + 24 < xl)
			xml[n++] = 'x';
		memcpy(xml + n, "</pad></subject></notification>", 32);
		b64 = b64_of((const unsigned char *)xml, strlen(xml));
		put(b, cap, len, "bt_payload=");
		for (const char *c = b64; *c != '\0' && *len + 4 < cap; c++) {
			char esc[4] = {*c, '\0'};

			if (*c == '+' || *c == '/' || *c == '=')
				snprintf(esc, sizeof(esc), "%%%02X", (unsigned char)*c);
			put(b, cap, len, esc);
		}
		free(b64);
		free(xml);
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
 * Time p with key kp (or the keys setup makes) and body kind k: 0 and the
 * figures, or -1 when this key or body does not suit the provider.
 */
static int
measure(provider p, const keypair *kp, setup_fn setup, int k, size_t size, long iters,
	double *verify_us, double *split_us, size_t *body_len)
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
			 .secret = (const unsigned char *)(kp != NULL ? kp->sign : ""),
			 .secret_len = kp != NULL ? strlen(kp->sign) : 0,
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
	char *ss = NULL, *vs = NULL;
	keypair made;

	if (setup != NULL) {
		setup(&ss, &vs, &ep);
		made = (keypair){ss, vs};
		kp = &made;
		in.secret = (const unsigned char *)ss;
		in.secret_len = strlen(ss);
	}
	url = sign_json_body_url(p, URL, (const unsigned char *)body, len);
	in.url = url;
	if (sign_headers(&in, &h.out, err, sizeof(err)) != 0) {
		/* a provider whose types are its own (sns's Type) signs without ours */
		sign_release(&h.out);
		in.event_type = NULL;
		if (sign_headers(&in, &h.out, err, sizeof(err)) != 0)
			goto out;
	}
	ep.secrets = secrets_of(kp->verify != NULL ? kp->verify : kp->sign);
	if (provider_endpoint_load(&ep, err, sizeof(err)) != 0)
		goto out_secrets;
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
	provider_endpoint_release(&ep);
	secret_set_free(ep.secrets);
out:
	free(ep.key_file);
	free(ep.ca_file);
	free(ep.cert_cache);
	free(ep.audience);
	free(ss);
	free(vs);
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
	if (mkdtemp(tmpdir) == NULL)
		die("cannot make a temporary directory");
	atexit(cleanup);
	for (int i = 0; provider_is_set((provider)i); i++) {
		provider p = (provider)i;
		const char *name = provider_class(p);
		double v = 0, s = -1;
		size_t blen = 0, c;
		bool done = false;

		setup_fn setup = NULL;

		for (size_t a = 0; a < sizeof(asym) / sizeof(asym[0]); a++)
			if (asym[a].p == p)
				setup = asym[a].setup;
		if (setup != NULL)
			done = measure(p, NULL, setup, BODY_OBJECT, size, iters, &v, &s, &blen) ==
			       0;
		for (int k = 0; k < N_BODIES && !done && setup == NULL; k++)
			for (size_t j = 0; j < N_KEYS && !done; j++)
				done = measure(p, &keys[j], NULL, k, size, iters, &v, &s, &blen) ==
				       0;
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
