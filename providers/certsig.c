/* SPDX-License-Identifier: ISC */
/*
 * certsig.c - the class of schemes signing with RSA and the provider's
 * certificate, named by a URL in each delivery (pkey.h's cert_scheme:
 * PayPal, SNS)
 *
 * The certificate is read from the endpoint's cache directory, which
 * hookinbox-fetch-certs fills off the request path from the pinned hosts
 * only; a miss is answered 503 so that the provider retries once the
 * operator's timer has fetched it.
 */
#include "hex.h"
#include "pkey.h"
#include "scheme.h"
#include "sha256.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CERT_URL_MAX 512
#define CERT_PEM_MAX (64 * 1024)
#define WANTED_MAX (64 * 1024) /* the wanted list stops growing here */

bool
cert_url_pinned(const char *url, size_t len, const char *const *hosts, const char *path_prefix)
{
	const char *host = url + 8, *slash;
	size_t hlen;

	if (len > CERT_URL_MAX || len < 9 || strncmp(url, "https://", 8) != 0 ||
	    (slash = memchr(host, '/', len - 8)) == NULL)
		return false;
	hlen = (size_t)(slash - host);
	for (size_t i = 8; i < len; i++) {
		unsigned char c = (unsigned char)url[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_' || c == '/'))
			return false; /* no port, user, query, fragment or escape */
	}
	if (memmem(url, len, "..", 2) != NULL || memmem(url + 8, len - 8, "//", 2) != NULL)
		return false;
	if (strncmp(slash, path_prefix, strlen(path_prefix)) != 0)
		return false;
	for (size_t i = 0; hosts[i] != NULL; i++)
		if (strlen(hosts[i]) == hlen && memcmp(hosts[i], host, hlen) == 0)
			return true;
	return false;
}

int
cert_file_name(const char *url, size_t len, char name[CERT_FILE_LEN])
{
	unsigned char d[SHA256_LEN];

	if (sha256_digest(url, len, d) != 0)
		return -1;
	hex_encode(d, sizeof(d), name);
	memcpy(name + 2 * SHA256_LEN, ".pem", 5);
	return 0;
}

/* note the URL for hookinbox-fetch-certs; best effort, bounded */
static void
want(const char *dir, const char *url, size_t len)
{
	char *path = xasprintf("%s/wanted", dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	struct stat st;

	free(path);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size < WANTED_MAX) {
		/* one write of a short line: appends from several threads do not interleave */
		char *line = xasprintf("%.*s\n", (int)len, url);

		if (write(fd, line, strlen(line)) < 0)
			errno = 0; /* the provider's retry notes it again */
		free(line);
	}
	close(fd);
}

/* the cached PEM of url, NUL-terminated; NULL when not cached */
static char *
cached(const char *dir, const char *url, size_t urllen, size_t *len)
{
	char name[CERT_FILE_LEN], *path, *pem;
	FILE *f;
	size_t n;

	if (cert_file_name(url, urllen, name) != 0)
		return NULL;
	path = xasprintf("%s/%s", dir, name);
	f = fopen(path, "re");
	free(path);
	if (f == NULL)
		return NULL;
	pem = xmalloc(CERT_PEM_MAX + 1);
	n = fread(pem, 1, CERT_PEM_MAX + 1, f);
	fclose(f);
	if (n == 0 || n > CERT_PEM_MAX) {
		free(pem);
		return NULL;
	}
	pem[n] = '\0';
	*len = n;
	return pem;
}

int
scheme_verify_cert(const cert_scheme *sc, const provider_endpoint *ep, const request_view *req,
		   const char *url, size_t urllen, pkey_alg alg, const unsigned char *msg,
		   size_t msglen, const unsigned char *sig, size_t siglen, size_t secret_index,
		   verify_result *res)
{
	const char *why;
	size_t pemlen;
	char *pem;
	int rc;

	if (!sc->url_ok(url, urllen))
		return scheme_fail(res, VERIFY_MISMATCH,
				   "certificate URL not on the provider's hosts");
	if ((pem = cached(ep->cert_cache, url, urllen, &pemlen)) == NULL) {
		want(ep->cert_cache, url, urllen);
		return scheme_fail(res, VERIFY_UNAVAILABLE, "signing certificate not cached");
	}
	rc = pkeys_verify_chain_pem(ep->keys, pem, pemlen, req->now, alg, msg, msglen, sig, siglen,
				    &why);
	free(pem);
	if (rc != 0)
		return scheme_fail(res, VERIFY_MISMATCH, why);
	return scheme_pass(res, secret_index);
}

const char *
scheme_check_cert(const provider_endpoint *ep)
{
	if (ep->ca_file == NULL || ep->cert_cache == NULL)
		return "this provider needs ca_file (the CA bundle) and cert_cache (the certificate "
		       "cache directory)";
	return NULL;
}

int
scheme_load_cert(provider_endpoint *ep, char *errbuf, size_t errlen)
{
	struct stat st;

	if (stat(ep->cert_cache, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(errbuf, errlen, "cert_cache \"%s\" is not a directory", ep->cert_cache);
		return -1;
	}
	ep->keys = pkeys_new();
	return pkeys_load_ca_file(ep->keys, ep->ca_file, errbuf, errlen);
}
