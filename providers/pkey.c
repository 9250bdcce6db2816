/* SPDX-License-Identifier: ISC */
/*
 * pkey.c - public keys, trusted roots and JWS for the asymmetric schemes
 * (pkey.h): Plaid, Pub/Sub, PayPal, SNS and the App Store
 */
#include "pkey.h"

#include "base64.h"
#include "pksign.h"
#include "wipe.h"
#include "xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#define PKEYS_MAX 64	       /* keys kept per endpoint */
#define KEY_FILE_MAX (1 << 20) /* a longer key or CA file is refused */
#define CHAIN_MAX 8	       /* certificates in a chain */
#define CHAINS_KEPT 8	       /* verified PEM chains remembered per endpoint */

typedef struct pkey_entry {
	char *kid;
	EVP_PKEY *key;
} pkey_entry;

/*
 * A PEM chain verified once need not be parsed and verified again: its
 * leaf's key is remembered under the SHA-256 of the PEM text, with the time
 * every certificate of the chain is valid in.  Other text, or a time
 * outside, is verified in full.
 */
typedef struct chain_memo {
	unsigned char digest[32];
	EVP_PKEY *key; /* NULL: a free slot */
	int64_t from, until;
} chain_memo;

typedef struct chain_cache {
	pthread_mutex_t lock;
	chain_memo m[CHAINS_KEPT];
	size_t next; /* the slot the next miss takes */
} chain_cache;

struct pkeys {
	pkey_entry e[PKEYS_MAX];
	size_t n;
	X509_STORE *roots;
	chain_cache *chains; /* the only part that changes after loading */
};

pkeys *
pkeys_new(void)
{
	pkeys *k = xcalloc(1, sizeof(pkeys));

	k->chains = xcalloc(1, sizeof(*k->chains));
	pthread_mutex_init(&k->chains->lock, NULL);
	return k;
}

void
pkeys_free(pkeys *k)
{
	if (k == NULL)
		return;
	for (size_t i = 0; i < k->n; i++) {
		free(k->e[i].kid);
		EVP_PKEY_free(k->e[i].key);
	}
	X509_STORE_free(k->roots);
	for (size_t i = 0; i < CHAINS_KEPT; i++)
		EVP_PKEY_free(k->chains->m[i].key);
	pthread_mutex_destroy(&k->chains->lock);
	free(k->chains);
	free(k);
}

size_t
pkeys_count(const pkeys *k)
{
	return k == NULL ? 0 : k->n;
}

/* ---- base64url ---- */

long
b64url_decode(const char *in, size_t len, unsigned char *out, size_t outcap)
{
	size_t padded = (len + 3) / 4 * 4;
	char *t;
	long n;

	if (len % 4 == 1 || len / 4 > outcap / 3 + 1)
		return -1;
	t = xmalloc(padded + 1);
	for (size_t i = 0; i < len; i++) {
		/* only the url alphabet, unpadded */
		if (in[i] == '+' || in[i] == '/' || in[i] == '=') {
			free(t);
			return -1;
		}
		t[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	}
	for (size_t i = len; i < padded; i++)
		t[i] = '=';
	n = base64_decode(t, padded, out, outcap);
	free(t);
	return n;
}

void
b64url_encode(const unsigned char *in, size_t len, char *out)
{
	size_t n;

	base64_encode(in, len, out);
	n = strlen(out);
	while (n > 0 && out[n - 1] == '=')
		out[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
}

/* ---- JWK ---- */

/* a base64url member of a JWK, decoded into a BIGNUM or bytes */
static long
jwk_bytes(const jscan_value *o, const char *name, unsigned char *out, size_t cap)
{
	jscan_value v;
	char *s;
	size_t len;
	long n;

	if (jscan_member(o, name, strlen(name), &v) != 0 || jscan_string(&v, &s, &len) != 0)
		return -1;
	n = b64url_decode(s, len, out, cap);
	free(s);
	return n;
}

static EVP_PKEY *
fromdata(const char *type, OSSL_PARAM_BLD *bld)
{
	EVP_PKEY *key = NULL;
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);

	if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		key = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return key;
}

/* an EC P-256 or RSA public JWK; NULL for anything else */
static EVP_PKEY *
jwk_key(const jscan_value *o)
{
	unsigned char a[1024], b[1024];
	jscan_value kty;
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *key = NULL;
	BIGNUM *n = NULL, *e = NULL;
	long alen, blen;

	if (bld == NULL || jscan_member(o, "kty", 3, &kty) != 0 || kty.type != JSCAN_STRING)
		goto out;
	if (kty.len == 4 && memcmp(kty.p, "\"EC\"", 4) == 0) {
		jscan_value crv;
		unsigned char pt[65];

		if (jscan_member(o, "crv", 3, &crv) != 0 || crv.len != 7 ||
		    memcmp(crv.p, "\"P-256\"", 7) != 0)
			goto out;
		if (jwk_bytes(o, "x", a, sizeof(a)) != 32 || jwk_bytes(o, "y", b, sizeof(b)) != 32)
			goto out;
		pt[0] = 0x04;
		memcpy(pt + 1, a, 32);
		memcpy(pt + 33, b, 32);
		if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1",
						     0) ||
		    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt)))
			goto out;
		key = fromdata("EC", bld);
	} else if (kty.len == 5 && memcmp(kty.p, "\"RSA\"", 5) == 0) {
		if ((alen = jwk_bytes(o, "n", a, sizeof(a))) < 128 ||
		    (blen = jwk_bytes(o, "e", b, sizeof(b))) < 1)
			goto out;
		n = BN_bin2bn(a, (int)alen, NULL);
		e = BN_bin2bn(b, (int)blen, NULL);
		if (n == NULL || e == NULL ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
			goto out;
		key = fromdata("RSA", bld);
	}
out:
	BN_free(n);
	BN_free(e);
	OSSL_PARAM_BLD_free(bld);
	return key;
}

/* add one JWK object; 1 added, 0 skipped */
static int
add_jwk(pkeys *k, const jscan_value *o)
{
	jscan_value v;
	char *kid;
	size_t len;
	EVP_PKEY *key;

	if (o->type != JSCAN_OBJECT || k->n == PKEYS_MAX)
		return 0;
	/* Plaid marks a rotated-out key with expired_at */
	if (jscan_member(o, "expired_at", 10, &v) == 0 && v.type != JSCAN_NULL)
		return 0;
	if (jscan_member(o, "kid", 3, &v) != 0 || jscan_string(&v, &kid, &len) != 0)
		return 0;
	if (len == 0 || strlen(kid) != len || (key = jwk_key(o)) == NULL) {
		free(kid);
		return 0;
	}
	k->e[k->n].kid = kid;
	k->e[k->n].key = key;
	k->n++;
	return 1;
}

int
pkeys_add_jwks(pkeys *k, const char *text, size_t len, char *errbuf, size_t errlen)
{
	jscan_value root, v, el;
	const char *pos = NULL;
	int added = 0;

	if (jscan_parse(text, len, 16, &root) != 0 || root.type != JSCAN_OBJECT) {
		snprintf(errbuf, errlen, "not a JSON object");
		return -1;
	}
	if (jscan_member(&root, "keys", 4, &v) == 0) {
		if (v.type != JSCAN_ARRAY) {
			snprintf(errbuf, errlen, "\"keys\" is not an array");
			return -1;
		}
		while (jscan_element(&v, &pos, &el) == 0)
			added += add_jwk(k, &el);
		return added;
	}
	if (jscan_member(&root, "key", 3, &v) == 0)
		return add_jwk(k, &v);
	return add_jwk(k, &root);
}

/* the whole file, NUL-terminated; NULL and errbuf */
static char *
slurp(const char *path, size_t *len, char *errbuf, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (f == NULL) {
		snprintf(errbuf, errlen, "cannot read \"%s\": %s", path, strerror(errno));
		return NULL;
	}
	buf = xmalloc(KEY_FILE_MAX + 1);
	n = fread(buf, 1, KEY_FILE_MAX + 1, f);
	if (ferror(f) || n > KEY_FILE_MAX) {
		snprintf(errbuf, errlen, "cannot read \"%s\": %s", path,
			 ferror(f) ? "read error" : "larger than 1 MB");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int
pkeys_load_jwks_file(pkeys *k, const char *path, char *errbuf, size_t errlen)
{
	char msg[128];
	size_t len;
	char *text = slurp(path, &len, errbuf, errlen);
	int n;

	if (text == NULL)
		return -1;
	n = pkeys_add_jwks(k, text, len, msg, sizeof(msg));
	free(text);
	if (n < 0) {
		snprintf(errbuf, errlen, "\"%s\": %s", path, msg);
		return -1;
	}
	if (n == 0) {
		snprintf(errbuf, errlen, "\"%s\" holds no EC P-256 or RSA key with a kid", path);
		return -1;
	}
	return 0;
}

int
pkeys_load_ca_file(pkeys *k, const char *path, char *errbuf, size_t errlen)
{
	size_t len;
	char *text = slurp(path, &len, errbuf, errlen);
	BIO *bio;
	X509 *x;
	int n = 0;

	if (text == NULL)
		return -1;
	bio = BIO_new_mem_buf(text, (int)len);
	if (k->roots == NULL)
		k->roots = X509_STORE_new();
	while (bio != NULL && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
		if (X509_STORE_add_cert(k->roots, x) == 1)
			n++;
		X509_free(x);
	}
	BIO_free(bio);
	free(text);
	if (n == 0) {
		snprintf(errbuf, errlen, "\"%s\" holds no PEM certificate", path);
		return -1;
	}
	return 0;
}

/* ---- signatures ---- */

static const EVP_MD *
alg_md(pkey_alg alg)
{
	return alg == PKEY_RS1 ? EVP_sha1() : EVP_sha256();
}

/* r || s (64 bytes) as the DER ECDSA-Sig-Value OpenSSL verifies; NULL if not */
static unsigned char *
ecdsa_der(const unsigned char *sig, size_t len, size_t *derlen)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
	unsigned char *der = NULL;
	int n;

	if (len != 64 || es == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return NULL;
	}
	n = i2d_ECDSA_SIG(es, &der);
	ECDSA_SIG_free(es);
	if (n <= 0)
		return NULL;
	*derlen = (size_t)n;
	return der;
}

static bool
verify_with(EVP_PKEY *key, pkey_alg alg, const unsigned char *msg, size_t msglen,
	    const unsigned char *sig, size_t siglen)
{
	unsigned char *der = NULL;
	bool ok;

	if (alg == PKEY_ES256) {
		if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC ||
		    (der = ecdsa_der(sig, siglen, &siglen)) == NULL)
			return false;
		sig = der;
	} else if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA || EVP_PKEY_get_bits(key) < 2048) {
		return false;
	}
	ok = pksign_verify(key, alg_md(alg), msg, msglen, sig, siglen);
	OPENSSL_free(der);
	return ok;
}

bool
pkeys_verify_kid(const pkeys *k, const char *kid, size_t kidlen, pkey_alg alg,
		 const unsigned char *msg, size_t msglen, const unsigned char *sig, size_t siglen)
{
	for (size_t i = 0; k != NULL && i < k->n; i++)
		if (strlen(k->e[i].kid) == kidlen && memcmp(k->e[i].kid, kid, kidlen) == 0 &&
		    verify_with(k->e[i].key, alg, msg, msglen, sig, siglen))
			return true;
	return false;
}

/* an ASN1_TIME as seconds since the epoch; 0 or -1 */
static int
asn1_seconds(const ASN1_TIME *t, int64_t *out)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

/*
 * leaf against k's roots with the rest as untrusted intermediates, at now;
 * with from and until not NULL, the time every certificate of the verified
 * chain is valid in
 */
static int
chain_ok(const pkeys *k, X509 *leaf, STACK_OF(X509) * rest, int64_t now, const char **why,
	 int64_t *from, int64_t *until)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc = -1;

	*why = "certificate not trusted";
	if (ctx == NULL || k == NULL || k->roots == NULL ||
	    X509_STORE_CTX_init(ctx, k->roots, leaf, rest) != 1)
		goto out;
	X509_STORE_CTX_set_time(ctx, 0, (time_t)now);
	/* ca_file may hold the intermediate the operator chose to trust */
	X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_PARTIAL_CHAIN);
	if (X509_verify_cert(ctx) != 1)
		goto out;
	rc = 0;
	if (from != NULL) {
		STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);

		*from = INT64_MIN;
		*until = INT64_MAX;
		for (int i = 0; i < sk_X509_num(chain); i++) {
			X509 *c = sk_X509_value(chain, i);
			int64_t nb, na;

			if (asn1_seconds(X509_get0_notBefore(c), &nb) != 0 ||
			    asn1_seconds(X509_get0_notAfter(c), &na) != 0) {
				*until = INT64_MIN; /* nothing to remember */
				break;
			}
			*from = nb > *from ? nb : *from;
			*until = na < *until ? na : *until;
		}
	}
out:
	X509_STORE_CTX_free(ctx);
	return rc;
}

static int
leaf_signs(X509 *leaf, pkey_alg alg, const unsigned char *msg, size_t msglen,
	   const unsigned char *sig, size_t siglen, const char **why)
{
	EVP_PKEY *key = X509_get0_pubkey(leaf);

	if (key == NULL || !verify_with(key, alg, msg, msglen, sig, siglen)) {
		*why = "signature mismatch";
		return -1;
	}
	return 0;
}

/* does x carry the extension of dotted oid? */
static bool
has_ext(X509 *x, const char *oid)
{
	ASN1_OBJECT *o = OBJ_txt2obj(oid, 1);
	bool has = o != NULL && X509_get_ext_by_OBJ(x, o, -1) >= 0;

	ASN1_OBJECT_free(o);
	return has;
}

int
pkeys_verify_chain_der(const pkeys *k, const unsigned char *const *der, const size_t *derlen,
		       size_t n, int64_t now, pkey_alg alg, const unsigned char *msg, size_t msglen,
		       const unsigned char *sig, size_t siglen, const char **why)
{
	return pkeys_verify_chain_oids(k, der, derlen, n, NULL, now, alg, msg, msglen, sig, siglen,
				       why);
}

int
pkeys_verify_chain_oids(const pkeys *k, const unsigned char *const *der, const size_t *derlen,
			size_t n, const char *const *oids, int64_t now, pkey_alg alg,
			const unsigned char *msg, size_t msglen, const unsigned char *sig,
			size_t siglen, const char **why)
{
	STACK_OF(X509) *rest = sk_X509_new_null();
	X509 *leaf = NULL;
	int rc = -1;

	*why = "bad certificate chain";
	if (rest == NULL || n == 0 || n > CHAIN_MAX)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = der[i];
		X509 *x = d2i_X509(NULL, &p, (long)derlen[i]);

		if (x == NULL || p != der[i] + derlen[i] ||
		    (oids != NULL && oids[i] != NULL && !has_ext(x, oids[i]))) {
			X509_free(x);
			goto out;
		}
		if (i == 0)
			leaf = x;
		else if (!sk_X509_push(rest, x)) {
			X509_free(x);
			goto out;
		}
	}
	if (chain_ok(k, leaf, rest, now, why, NULL, NULL) == 0)
		rc = leaf_signs(leaf, alg, msg, msglen, sig, siglen, why);
out:
	X509_free(leaf);
	sk_X509_pop_free(rest, X509_free);
	return rc;
}

/* the leaf key of a chain verified before, valid at now (a reference), or NULL */
static EVP_PKEY *
memo_find(chain_cache *c, const unsigned char digest[32], int64_t now)
{
	EVP_PKEY *key = NULL;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < CHAINS_KEPT && key == NULL; i++)
		if (c->m[i].key != NULL && memcmp(c->m[i].digest, digest, 32) == 0 &&
		    now >= c->m[i].from && now <= c->m[i].until &&
		    EVP_PKEY_up_ref(c->m[i].key) == 1)
			key = c->m[i].key;
	pthread_mutex_unlock(&c->lock);
	return key;
}

static void
memo_add(chain_cache *c, const unsigned char digest[32], EVP_PKEY *key, int64_t from, int64_t until)
{
	chain_memo *m;

	if (key == NULL || until < from || EVP_PKEY_up_ref(key) != 1)
		return;
	pthread_mutex_lock(&c->lock);
	m = &c->m[c->next];
	c->next = (c->next + 1) % CHAINS_KEPT;
	EVP_PKEY_free(m->key);
	memcpy(m->digest, digest, 32);
	m->key = key;
	m->from = from;
	m->until = until;
	pthread_mutex_unlock(&c->lock);
}

int
pkeys_verify_chain_pem(const pkeys *k, const char *pem, size_t pemlen, int64_t now, pkey_alg alg,
		       const unsigned char *msg, size_t msglen, const unsigned char *sig,
		       size_t siglen, const char **why)
{
	BIO *bio = NULL;
	STACK_OF(X509) *rest = NULL;
	X509 *leaf = NULL, *x;
	unsigned char digest[32];
	int64_t from, until;
	EVP_PKEY *known;
	int rc = -1;

	*why = "bad certificate";
	if (k == NULL || pemlen > KEY_FILE_MAX ||
	    EVP_Digest(pem, pemlen, digest, NULL, EVP_sha256(), NULL) != 1)
		return -1;
	if ((known = memo_find(k->chains, digest, now)) != NULL) {
		rc = verify_with(known, alg, msg, msglen, sig, siglen) ? 0 : -1;
		if (rc != 0)
			*why = "signature mismatch";
		EVP_PKEY_free(known);
		return rc;
	}
	bio = BIO_new_mem_buf(pem, (int)pemlen);
	rest = sk_X509_new_null();
	if (bio == NULL || rest == NULL ||
	    (leaf = PEM_read_bio_X509(bio, NULL, NULL, NULL)) == NULL)
		goto out;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
		if (sk_X509_num(rest) >= CHAIN_MAX || !sk_X509_push(rest, x)) {
			X509_free(x);
			goto out;
		}
	}
	if (chain_ok(k, leaf, rest, now, why, &from, &until) == 0) {
		memo_add(k->chains, digest, X509_get0_pubkey(leaf), from, until);
		rc = leaf_signs(leaf, alg, msg, msglen, sig, siglen, why);
	}
out:
	X509_free(leaf);
	sk_X509_pop_free(rest, X509_free);
	BIO_free(bio);
	return rc;
}

/* ---- JWS ---- */

/* decode a base64url JSON object part; 0 or -1 */
static int
json_part(const char *p, size_t len, char **text, size_t *tlen, jscan_value *v)
{
	long n;

	*text = xmalloc(len / 4 * 3 + 4);
	n = b64url_decode(p, len, (unsigned char *)*text, len / 4 * 3 + 3);
	if (n < 0)
		return -1;
	(*text)[n] = '\0';
	*tlen = (size_t)n;
	return jscan_parse(*text, *tlen, 16, v) == 0 && v->type == JSCAN_OBJECT ? 0 : -1;
}

int
jws_parse(const char *tok, size_t len, jws *out)
{
	const char *d1, *d2;
	long n;

	memset(out, 0, sizeof(*out));
	if (len > JWS_MAX || (d1 = memchr(tok, '.', len)) == NULL ||
	    (d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok))) == NULL ||
	    memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - tok)) != NULL)
		return -1;
	if (json_part(tok, (size_t)(d1 - tok), &out->header_text, &out->header_len, &out->header) !=
		    0 ||
	    json_part(d1 + 1, (size_t)(d2 - d1 - 1), &out->payload_text, &out->payload_len,
		      &out->payload) != 0)
		return -1;
	n = b64url_decode(d2 + 1, len - (size_t)(d2 + 1 - tok), out->sig, sizeof(out->sig));
	if (n <= 0)
		return -1;
	out->sig_len = (size_t)n;
	out->token = xmalloc(len + 1);
	memcpy(out->token, tok, len);
	out->token[len] = '\0';
	out->signed_part = out->token;
	out->signed_len = (size_t)(d2 - tok);
	return 0;
}

void
jws_release(jws *j)
{
	free(j->token);
	free(j->header_text);
	free(j->payload_text);
	j->token = j->header_text = j->payload_text = NULL;
}

char *
jws_string(const jscan_value *o, const char *name)
{
	jscan_value v;
	char *s;
	size_t len;

	if (jscan_member(o, name, strlen(name), &v) != 0 || jscan_string(&v, &s, &len) != 0)
		return NULL;
	if (strlen(s) != len) {
		free(s);
		return NULL;
	}
	return s;
}

int
jws_int(const jscan_value *o, const char *name, int64_t *out)
{
	jscan_value v;
	int64_t x = 0;

	if (jscan_member(o, name, strlen(name), &v) != 0 || v.type != JSCAN_NUMBER ||
	    !jscan_is_integer(&v) || v.len > 12 || v.p[0] == '-')
		return -1;
	for (size_t i = 0; i < v.len; i++)
		x = x * 10 + (v.p[i] - '0');
	*out = x;
	return 0;
}

bool
jws_verify_kid(const pkeys *k, const jws *j, pkey_alg alg)
{
	char *kid = jws_string(&j->header, "kid");
	bool ok = kid != NULL &&
		  pkeys_verify_kid(k, kid, strlen(kid), alg, (const unsigned char *)j->signed_part,
				   j->signed_len, j->sig, j->sig_len);

	free(kid);
	return ok;
}

/* ---- signing (hookinbox-send) ---- */

int
pkey_secret_parse(const unsigned char *s, size_t len, pkey_secret *out, char *errbuf, size_t errlen)
{
	char *line = xmalloc(len + 1), *save = NULL, *w, *last = NULL;
	unsigned char *der;
	const unsigned char *p;
	size_t nw = 0;
	long n;

	memset(out, 0, sizeof(*out));
	memcpy(line, s, len);
	line[len] = '\0';
	for (w = strtok_r(line, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		if (last != NULL) {
			if (nw == sizeof(out->words) / sizeof(out->words[0]))
				break;
			out->words[nw++] = xstrdup(last);
		}
		last = w;
	}
	if (last == NULL || w != NULL) {
		secure_wipe(line, len);
		free(line);
		pkey_secret_release(out);
		snprintf(errbuf, errlen, "the secret is not \"[label] <base64 PKCS#8 DER key>\"");
		return -1;
	}
	der = xmalloc(BASE64_DECODED_MAX(strlen(last)) + 1);
	n = base64_decode(last, strlen(last), der, BASE64_DECODED_MAX(strlen(last)) + 1);
	p = der;
	if (n > 0)
		out->key = d2i_AutoPrivateKey(NULL, &p, n);
	if (n > 0)
		secure_wipe(der, (size_t)n);
	free(der);
	secure_wipe(line, len);
	free(line);
	if (out->key == NULL) {
		pkey_secret_release(out);
		snprintf(errbuf, errlen, "the secret's key is not a base64 PKCS#8 DER private key");
		return -1;
	}
	return 0;
}

void
pkey_secret_release(pkey_secret *ps)
{
	for (size_t i = 0; i < sizeof(ps->words) / sizeof(ps->words[0]); i++) {
		free(ps->words[i]);
		ps->words[i] = NULL;
	}
	EVP_PKEY_free(ps->key);
	ps->key = NULL;
}

int
pkey_sign(const pkey_secret *ps, pkey_alg alg, const unsigned char *msg, size_t msglen,
	  unsigned char **sig, size_t *siglen, char *errbuf, size_t errlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char *der = NULL;
	size_t dlen = 0;
	int rc = -1;

	*sig = NULL;
	if (ctx == NULL || EVP_DigestSignInit(ctx, NULL, alg_md(alg), NULL, ps->key) != 1 ||
	    EVP_DigestSign(ctx, NULL, &dlen, msg, msglen) != 1)
		goto out;
	der = xmalloc(dlen);
	if (EVP_DigestSign(ctx, der, &dlen, msg, msglen) != 1)
		goto out;
	if (alg == PKEY_ES256) {
		const unsigned char *p = der;
		ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dlen);
		const BIGNUM *r, *s;

		if (es == NULL)
			goto out;
		ECDSA_SIG_get0(es, &r, &s);
		*sig = xmalloc(64);
		if (BN_bn2binpad(r, *sig, 32) != 32 || BN_bn2binpad(s, *sig + 32, 32) != 32) {
			ECDSA_SIG_free(es);
			free(*sig);
			*sig = NULL;
			goto out;
		}
		ECDSA_SIG_free(es);
		*siglen = 64;
	} else {
		*sig = der;
		der = NULL;
		*siglen = dlen;
	}
	rc = 0;
out:
	if (rc < 0)
		snprintf(errbuf, errlen, "could not sign with the secret's key (%s)",
			 alg == PKEY_ES256 ? "an EC P-256 key" : "an RSA key");
	free(der);
	EVP_MD_CTX_free(ctx);
	return rc;
}

char *
jws_sign(const pkey_secret *ps, pkey_alg alg, const char *header, const char *payload, char *errbuf,
	 size_t errlen)
{
	size_t hl = strlen(header), pl = strlen(payload), siglen;
	char *tok = xmalloc(4 * ((hl + 2) / 3) + 4 * ((pl + 2) / 3) + 4 * ((512 + 2) / 3) + 4);
	unsigned char *sig;
	size_t n;

	b64url_encode((const unsigned char *)header, hl, tok);
	n = strlen(tok);
	tok[n++] = '.';
	b64url_encode((const unsigned char *)payload, pl, tok + n);
	n += strlen(tok + n);
	if (pkey_sign(ps, alg, (const unsigned char *)tok, n, &sig, &siglen, errbuf, errlen) < 0 ||
	    siglen > 512) {
		free(tok);
		return NULL;
	}
	tok[n++] = '.';
	b64url_encode(sig, siglen, tok + n);
	free(sig);
	return tok;
}
