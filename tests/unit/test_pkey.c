/* SPDX-License-Identifier: ISC */
/*
 * test_pkey.c - the public-key schemes' parsers (providers/pkey.h): strict
 * base64url, compact JWS, JWK sets, the pinned certificate URLs and SNS's
 * canonical string; and plaid's signer against its verifier with a key
 * made here
 */
#include "pkey.h"
#include "secret.h"
#include "tap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

int main(void);

static bool
jws_ok(const char *tok)
{
	jws j;
	int rc = jws_parse(tok, strlen(tok), &j);

	jws_release(&j);
	return rc == 0;
}

static bool
pinned(const char *url)
{
	static const char *const hosts[] = {"api.paypal.com", "api.sandbox.paypal.com", NULL};

	return cert_url_pinned(url, strlen(url), hosts, "/v1/notifications/certs/");
}

static const char *
canonical(const char *body)
{
	static char buf[1024];
	char *s;
	size_t len;

	if (sns_canonical((const unsigned char *)body, strlen(body), &s, &len) != 0)
		return "(none)";
	snprintf(buf, sizeof(buf), "%.*s", (int)len, s);
	free(s);
	return buf;
}

static char *
b64u(const unsigned char *p, size_t n)
{
	char *s = malloc(4 * ((n + 2) / 3) + 1);

	b64url_encode(p, n, s);
	return s;
}

static const char *
lookup(const void *ctx, const char *name)
{
	const sign_output *o = ctx;

	for (size_t i = 0; i < o->n; i++)
		if (strcasecmp(o->h[i].name, name) == 0)
			return o->h[i].value;
	return NULL;
}

/* plaid's signer against its verifier, with an EC key made here */
static void
plaid_round_trip(void)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(k);
	unsigned char pt[65], *der = NULL;
	size_t n;
	int dl = i2d_PKCS8_PRIV_KEY_INFO(p8, &der);
	char *x, *y, *d64 = malloc(4 * ((size_t)dl + 2) / 3 + 8), line[512], jwk[256];
	char path[] = "/tmp/hookinbox-test-pkey-XXXXXX", err[256];
	const char *body = "{\"webhook_code\":\"DEFAULT_UPDATE\",\"item_id\":\"i1\"}";
	sign_input in = {.provider = PROVIDER_PLAID,
			 .timestamp = 1700000000,
			 .body = (const unsigned char *)body,
			 .body_len = strlen(body)};
	sign_output out = {.n = 0};
	provider_endpoint ep = {.provider = PROVIDER_PLAID};
	int fd;

	EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &n);
	x = b64u(pt + 1, 32);
	y = b64u(pt + 33, 32);
	snprintf(jwk, sizeof(jwk),
		 "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"k1\",\"x\":\"%s\",\"y\":\"%s\"}\n", x,
		 y);
	EVP_EncodeBlock((unsigned char *)d64, der, dl);
	snprintf(line, sizeof(line), "k1 %s", d64);
	in.secret = (const unsigned char *)line;
	in.secret_len = strlen(line);
	ok(sign_headers(&in, &out, err, sizeof(err)) == 0 && out.n == 1, "plaid: signs");
	fd = mkstemp(path);
	ok(fd >= 0 && write(fd, jwk, strlen(jwk)) > 0 && close(fd) == 0, "plaid: the key file");
	ep.secrets = secret_set_load(path, err, sizeof(err));
	unlink(path);
	ok(ep.secrets != NULL && provider_endpoint_load(&ep, err, sizeof(err)) == 0,
	   "plaid: loads its JWK line");
	{
		request_view rv = {.header = lookup,
				   .ctx = &out,
				   .body = (const unsigned char *)body,
				   .body_len = strlen(body),
				   .now = 1700000000};
		verify_result res;

		ok(verify_request(&ep, &rv, &res) == 0, "plaid: what it signs verifies");
		rv.now += 301;
		ok(verify_request(&ep, &rv, &res) != 0 && res.status == VERIFY_STALE,
		   "plaid: 301 s later it is stale");
		rv.now -= 301;
		rv.body_len--;
		ok(verify_request(&ep, &rv, &res) != 0 && res.status == VERIFY_MISMATCH,
		   "plaid: another body does not verify");
	}
	sign_release(&out);
	provider_endpoint_release(&ep);
	secret_set_free(ep.secrets);
	PKCS8_PRIV_KEY_INFO_free(p8);
	OPENSSL_free(der);
	EVP_PKEY_free(k);
	free(x);
	free(y);
	free(d64);
}

/* a certificate for key, issued by ca (NULL: self-signed), valid [now - back, now + ahead] */
static X509 *
make_cert(EVP_PKEY *key, EVP_PKEY *ca_key, X509 *ca, const char *cn, long back, long ahead,
	  bool is_ca)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_get_subject_name(x);
	X509V3_CTX v3;
	X509_EXTENSION *ext;

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), is_ca ? 1 : 2);
	X509_gmtime_adj(X509_getm_notBefore(x), -back);
	X509_gmtime_adj(X509_getm_notAfter(x), ahead);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, ca ? X509_get_subject_name(ca) : name);
	X509V3_set_ctx(&v3, ca ? ca : x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
				  is_ca ? "critical,CA:TRUE" : "CA:FALSE");
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	X509_sign(x, ca_key ? ca_key : key, EVP_sha256());
	return x;
}

/* what the request threads share: one chain, verified by each in turn */
typedef struct memo_job {
	const pkeys *k;
	const char *pem;
	size_t pemlen;
	const unsigned char *msg, *sig;
	size_t msglen, siglen;
	int64_t now;
	int failed;
} memo_job;

static void *
memo_thread(void *arg)
{
	memo_job *j = arg;
	const char *why;

	for (int i = 0; i < 20; i++)
		if (pkeys_verify_chain_pem(j->k, j->pem, j->pemlen, j->now + i, PKEY_RS256, j->msg,
					   j->msglen, j->sig, j->siglen, &why) != 0)
			j->failed++;
	return NULL;
}

/*
 * A PEM chain verified once is remembered (its leaf key, for the time the
 * chain is valid): the second verification of the same text takes the memo,
 * a bad signature still fails on it, and a time past the leaf's end, or
 * other text, is verified in full
 */
static void
chain_memo(void)
{
	EVP_PKEY *ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *leaf_key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	X509 *ca = make_cert(ca_key, NULL, NULL, "memo ca", 86400, 86400 * 30, true);
	X509 *leaf = make_cert(leaf_key, ca_key, ca, "memo leaf", 3600, 3600, false);
	char path[] = "/tmp/hookinbox-test-memo-XXXXXX", err[256], *pem, *pem2;
	const unsigned char msg[] = "the signed notification";
	unsigned char sig[512];
	size_t siglen = sizeof(sig);
	int64_t now = (int64_t)time(NULL);
	const char *why;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	BIO *b = BIO_new(BIO_s_mem());
	pkeys *kc = pkeys_new();
	FILE *f;
	long n;
	int fd = mkstemp(path);

	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	ok(f != NULL && PEM_write_X509(f, ca) == 1 && fclose(f) == 0, "memo: the CA file");
	ok(pkeys_load_ca_file(kc, path, err, sizeof(err)) == 0, "memo: the CA loads");
	unlink(path);
	PEM_write_bio_X509(b, leaf);
	n = BIO_get_mem_data(b, &pem);
	pem2 = malloc((size_t)n + 2);
	memcpy(pem2, pem, (size_t)n);
	memcpy(pem2 + n, "\n", 2);
	ok(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, leaf_key) == 1 &&
		   EVP_DigestSign(md, sig, &siglen, msg, sizeof(msg) - 1) == 1,
	   "memo: signed with the leaf's key");
	ok(pkeys_verify_chain_pem(kc, pem, (size_t)n, now, PKEY_RS256, msg, sizeof(msg) - 1, sig,
				  siglen, &why) == 0,
	   "memo: verified in full");
	ok(pkeys_verify_chain_pem(kc, pem, (size_t)n, now + 60, PKEY_RS256, msg, sizeof(msg) - 1,
				  sig, siglen, &why) == 0,
	   "memo: verified again (the memo's path)");
	ok(pkeys_verify_chain_pem(kc, pem, (size_t)n, now, PKEY_RS256, msg, sizeof(msg) - 2, sig,
				  siglen, &why) != 0 &&
		   strcmp(why, "signature mismatch") == 0,
	   "memo: another message does not verify with the remembered key");
	ok(pkeys_verify_chain_pem(kc, pem, (size_t)n, now + 7200, PKEY_RS256, msg, sizeof(msg) - 1,
				  sig, siglen, &why) != 0 &&
		   strcmp(why, "certificate not trusted") == 0,
	   "memo: past the leaf's end, not trusted (the memo holds only the chain's time)");
	ok(pkeys_verify_chain_pem(kc, pem2, (size_t)n + 1, now, PKEY_RS256, msg, sizeof(msg) - 1,
				  sig, siglen, &why) == 0,
	   "memo: other text is verified in full");
	{
		/* fresh: the threads race to verify it first and to remember it */
		pkeys *k2 = pkeys_new();
		pthread_t th[4];
		memo_job jobs[4];
		int failed = 0;

		f = fopen(path, "w");
		ok(f != NULL && PEM_write_X509(f, ca) == 1 && fclose(f) == 0 &&
			   pkeys_load_ca_file(k2, path, err, sizeof(err)) == 0,
		   "memo: a second handle");
		unlink(path);
		for (int i = 0; i < 4; i++) {
			jobs[i] = (memo_job){k2,     pem, (size_t)n, msg, sig, sizeof(msg) - 1,
					     siglen, now, 0};
			pthread_create(&th[i], NULL, memo_thread, &jobs[i]);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			failed += jobs[i].failed;
		}
		ok(failed == 0, "memo: four threads verify it 20 times each");
		pkeys_free(k2);
	}
	free(pem2);
	BIO_free(b);
	EVP_MD_CTX_free(md);
	X509_free(leaf);
	X509_free(ca);
	EVP_PKEY_free(leaf_key);
	EVP_PKEY_free(ca_key);
	pkeys_free(kc);
}

static pkeys *k;

/* the keys text adds to k, or -1 */
static int
jwks(const char *text)
{
	char err[128];

	return pkeys_add_jwks(k, text, strlen(text), err, sizeof(err));
}

int
main(void)
{
	unsigned char buf[64];

	k = pkeys_new();

	/* base64url: the url alphabet, unpadded */
	ok(b64url_decode("aGk", 3, buf, sizeof(buf)) == 2 && memcmp(buf, "hi", 2) == 0,
	   "b64url: hi");
	ok(b64url_decode("-_8", 3, buf, sizeof(buf)) == 2, "b64url: - and _");
	ok(b64url_decode("aGk=", 4, buf, sizeof(buf)) < 0, "b64url: padding refused");
	ok(b64url_decode("+/8", 3, buf, sizeof(buf)) < 0, "b64url: + and / refused");
	ok(b64url_decode("a", 1, buf, sizeof(buf)) < 0, "b64url: one character refused");

	/* compact JWS: three parts, JSON objects before the signature */
	ok(jws_ok("eyJhbGciOiJFUzI1NiJ9.e30.AAAA"), "jws: header.payload.signature");
	ok(!jws_ok("eyJhbGciOiJFUzI1NiJ9.e30"), "jws: two parts refused");
	ok(!jws_ok("eyJhbGciOiJFUzI1NiJ9.e30.AAAA.AAAA"), "jws: four parts refused");
	ok(!jws_ok("eyJhbGciOiJFUzI1NiJ9.e30."), "jws: an empty signature refused");
	ok(!jws_ok("WyJhIl0.e30.AAAA"), "jws: a header that is not an object refused");
	ok(!jws_ok("e30.bm90IGpzb24.AAAA"), "jws: a payload that is not JSON refused");

	/* JWK sets */
	ok(jwks("{\"keys\":[]}") == 0, "jwks: empty set: none");
	ok(jwks("[1]") < 0, "jwks: not an object refused");
	ok(jwks("{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"a\",\"x\":\"AAAA\",\"y\":\"AAAA\"}") ==
		   0,
	   "jwks: an EC key with short coordinates skipped");
	ok(jwks("{\"key\":{\"kty\":\"oct\",\"kid\":\"a\",\"k\":\"AAAA\"}}") == 0,
	   "jwks: a symmetric key skipped (alg confusion)");
	ok(pkeys_count(k) == 0, "jwks: nothing kept");

	/* the pinned certificate URLs */
	ok(pinned("https://api.paypal.com/v1/notifications/certs/CERT-1"), "pinned: paypal");
	ok(pinned("https://api.sandbox.paypal.com/v1/notifications/certs/CERT-1"),
	   "pinned: sandbox");
	ok(!pinned("http://api.paypal.com/v1/notifications/certs/CERT-1"), "pinned: http refused");
	ok(!pinned("https://api.paypal.com.evil.example/v1/notifications/certs/CERT-1"),
	   "pinned: a longer host refused");
	ok(!pinned("https://evil.example@api.paypal.com/v1/notifications/certs/CERT-1"),
	   "pinned: user info refused");
	ok(!pinned("https://api.paypal.com:8443/v1/notifications/certs/CERT-1"),
	   "pinned: a port refused");
	ok(!pinned("https://api.paypal.com/v1/notifications/certs/../../x"),
	   "pinned: dot segments refused");
	ok(!pinned("https://api.paypal.com/v1/notifications/certs/x?y=1"),
	   "pinned: a query refused");
	ok(!pinned("https://api.paypal.com/v1/other/CERT-1"), "pinned: another path refused");
	ok(!pinned("https://api.paypal.com/v1/notifications/certs/a//b"),
	   "pinned: an empty segment refused");

	/* SNS: the fields signed, in AWS's order, Subject only when present */
	ok(strcmp(canonical("{\"Type\":\"Notification\",\"TopicArn\":\"t\",\"Timestamp\":\"ts\","
			    "\"MessageId\":\"m\",\"Message\":\"a\\nb\",\"Extra\":\"x\"}"),
		  "Message\na\nb\nMessageId\nm\nTimestamp\nts\nTopicArn\nt\nType\nNotification\n") ==
		   0,
	   "sns: a notification without Subject");
	ok(strcmp(canonical("{\"Type\":\"SubscriptionConfirmation\",\"TopicArn\":\"t\","
			    "\"Timestamp\":\"ts\",\"MessageId\":\"m\",\"Message\":\"a\","
			    "\"SubscribeURL\":\"u\",\"Token\":\"k\"}"),
		  "Message\na\nMessageId\nm\nSubscribeURL\nu\nTimestamp\nts\nToken\nk\nTopicArn\nt\n"
		  "Type\nSubscriptionConfirmation\n") == 0,
	   "sns: a subscription confirmation");
	ok(strcmp(canonical("{\"Type\":\"SubscriptionConfirmation\",\"TopicArn\":\"t\","
			    "\"Timestamp\":\"ts\",\"MessageId\":\"m\",\"Message\":\"a\"}"),
		  "(none)") == 0,
	   "sns: a confirmation without Token or SubscribeURL refused");
	ok(strcmp(canonical("{\"Type\":\"Other\"}"), "(none)") == 0,
	   "sns: an unknown Type refused");
	ok(strcmp(canonical("{\"Type\":\"Notification\",\"TopicArn\":1}"), "(none)") == 0,
	   "sns: a field that is not a string refused");

	plaid_round_trip();
	chain_memo();
	pkeys_free(k);
	return done_testing();
}
