/* SPDX-License-Identifier: ISC */
/*
 * api_http.c - GET requests to a provider's API (libcurl easy interface)
 *
 * One request at a time: a backfill walks pages in order, and the
 * providers rate-limit their APIs, so there is nothing to gain from the
 * multi interface here.  No CURLOPT_VERBOSE: the Authorization header
 * would be in it.
 */
#include "api_http.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dynbuf.h"
#include "wipe.h"
#include "xalloc.h"

/* the largest answer kept: a page of 100 Stripe events is well under this */
#define RESPONSE_MAX (32u * 1024 * 1024)

struct api_http {
	CURL *easy;
	char *base;
	struct curl_slist *headers; /* holds the Authorization header: wiped */
};

typedef struct transfer {
	api_response *r;
	dynbuf body; /* capped at RESPONSE_MAX */
	bool too_big;
} transfer;

/*
 * url for a message: the userinfo of its authority ("user:password@"), a
 * credential, written as "***@".  Works on text that is not a URL too; the
 * caller frees the copy.
 */
static char *
redacted(const char *url)
{
	const char *sep = strstr(url, "://");
	const char *auth = sep != NULL ? sep + 3 : url;
	size_t alen = strcspn(auth, "/?#");
	const char *at = NULL;

	for (const char *p = auth; p < auth + alen; p++)
		if (*p == '@')
			at = p;
	if (at == NULL)
		return xstrdup(url);
	return xasprintf("%.*s***%s", (int)(auth - url), url, at);
}

/* whether url is https, or http on a loopback host (the tests' fake API) */
static int
check_base(const char *url, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *shown = redacted(url);
	int rc = -1;

	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		snprintf(err, errlen, "API URL \"%s\" is not a URL", shown);
		goto out;
	}
	if (strcmp(scheme, "https") == 0 ||
	    (strcmp(scheme, "http") == 0 &&
	     (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0 ||
	      strcmp(host, "localhost") == 0))) {
		rc = 0;
		goto out;
	}
	snprintf(err, errlen,
		 "API URL \"%s\" must be https (http only on a loopback host): the credential "
		 "goes with every request",
		 shown);
out:
	free(shown);
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

api_http *
api_http_new(const char *base, const unsigned char *token, size_t token_len,
	     const char *const *headers, char *err, size_t errlen)
{
	static const char prefix[] = "Authorization: Bearer ";
	api_http *h;
	char *auth;
	size_t blen = strlen(base);

	if (check_base(base, err, errlen) != 0)
		return NULL;
	if (token_len == 0 || memchr(token, '\r', token_len) != NULL ||
	    memchr(token, '\n', token_len) != NULL || memchr(token, '\0', token_len) != NULL) {
		snprintf(err, errlen, "the credential is empty or holds a control character");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "could not set up libcurl");
		return NULL;
	}
	h = xcalloc(1, sizeof(*h));
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	h->base = xstrndup(base, blen);
	auth = xmalloc(sizeof(prefix) + token_len);
	memcpy(auth, prefix, sizeof(prefix) - 1);
	memcpy(auth + sizeof(prefix) - 1, token, token_len);
	auth[sizeof(prefix) - 1 + token_len] = '\0';
	h->headers = curl_slist_append(NULL, auth);
	secure_wipe(auth, sizeof(prefix) + token_len);
	free(auth);
	for (size_t i = 0; headers != NULL && headers[i] != NULL; i++)
		h->headers = curl_slist_append(h->headers, headers[i]);
	h->easy = curl_easy_init();
	if (h->easy == NULL || h->headers == NULL) {
		snprintf(err, errlen, "could not set up libcurl");
		api_http_free(h);
		return NULL;
	}
	return h;
}

void
api_http_free(api_http *h)
{
	if (h == NULL)
		return;
	for (struct curl_slist *s = h->headers; s != NULL; s = s->next)
		secure_wipe(s->data, strlen(s->data));
	curl_slist_free_all(h->headers);
	if (h->easy != NULL)
		curl_easy_cleanup(h->easy);
	free(h->base);
	free(h);
}

const char *
api_http_base(const api_http *h)
{
	return h->base;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	transfer *t = arg;
	size_t len = size * n;

	if (dynbuf_add(&t->body, data, len) != 0) {
		t->too_big = true;
		return 0; /* curl stops the transfer */
	}
	return len;
}

/*
 * Link: <https://api.github.com/...&cursor=v1_2>; rel="next", <...>; rel="prev"
 * (RFC 8288): the target of the rel="next" link, if any.
 */
static char *
link_next(const char *v, size_t len)
{
	const char *end = v + len;

	while (v < end) {
		const char *lt = memchr(v, '<', (size_t)(end - v)), *gt, *comma, *rel;

		if (lt == NULL)
			return NULL;
		gt = memchr(lt, '>', (size_t)(end - lt));
		if (gt == NULL)
			return NULL;
		comma = memchr(gt, ',', (size_t)(end - gt));
		if (comma == NULL)
			comma = end;
		rel = memmem(gt, (size_t)(comma - gt), "rel=\"next\"", 10);
		if (rel != NULL)
			return xstrndup(lt + 1, (size_t)(gt - lt - 1));
		v = comma;
	}
	return NULL;
}

/*
 * The value of header line data[0..len) when it is header name (its
 * length in *vlen, without surrounding blanks), else NULL.  Header lines
 * are not NUL-terminated.
 */
static const char *
header_value(const char *data, size_t len, const char *name, size_t *vlen)
{
	size_t n = strlen(name);
	const char *v, *end = data + len;

	if (len <= n || strncasecmp(data, name, n) != 0 || data[n] != ':')
		return NULL;
	v = data + n + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*vlen = (size_t)(end - v);
	return v;
}

static size_t
on_header(char *data, size_t size, size_t n, void *arg)
{
	transfer *t = arg;
	size_t len = size * n, vlen;
	const char *v;

	if (len > 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* a new response (after a 100 Continue): forget the last one's */
		free(t->r->next);
		t->r->next = NULL;
		t->r->rate_limited = false;
	} else if ((v = header_value(data, len, "Link", &vlen)) != NULL) {
		free(t->r->next);
		t->r->next = link_next(v, vlen);
	} else if (header_value(data, len, "Retry-After", &vlen) != NULL ||
		   ((v = header_value(data, len, "X-RateLimit-Remaining", &vlen)) != NULL &&
		    vlen == 1 && v[0] == '0')) {
		t->r->rate_limited = true;
	}
	return len;
}

int
api_http_get(api_http *h, const char *path_and_query, int absolute, api_response *r, char *err,
	     size_t errlen)
{
	transfer t = {.r = r};
	char *url;
	CURLcode rc;
	size_t blen = strlen(h->base);

	memset(r, 0, sizeof(*r));
	dynbuf_init(&t.body, RESPONSE_MAX);
	if (absolute) {
		/* a pagination link: only to the API the credential is for */
		if (strncmp(path_and_query, h->base, blen) != 0 || path_and_query[blen] != '/') {
			char *shown = redacted(h->base);

			snprintf(err, errlen, "the API's next-page link leads outside %s: refused",
				 shown);
			free(shown);
			return -1;
		}
		url = xstrdup(path_and_query);
	} else {
		url = xasprintf("%s%s", h->base, path_and_query);
	}
	curl_easy_reset(h->easy);
	curl_easy_setopt(h->easy, CURLOPT_URL, url);
	curl_easy_setopt(h->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h->easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h->easy, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h->easy, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->easy, CURLOPT_USERAGENT, "hookinbox-backfill/" HOOKINBOX_VERSION);
	curl_easy_setopt(h->easy, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, &t);
	curl_easy_setopt(h->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h->easy, CURLOPT_HEADERDATA, &t);
	rc = curl_easy_perform(h->easy);
	free(url);
	if (t.too_big || rc != CURLE_OK)
		dynbuf_release(&t.body);
	if (t.too_big) {
		snprintf(err, errlen, "the API's answer is over %u bytes", RESPONSE_MAX);
		return -1;
	}
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "could not reach the API: %s", curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &r->status);
	r->body = dynbuf_detach(&t.body, &r->len);
	return 0;
}

void
api_response_release(api_response *r)
{
	free(r->body);
	free(r->next);
	memset(r, 0, sizeof(*r));
}
