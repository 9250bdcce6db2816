/* SPDX-License-Identifier: ISC */
/*
 * deliver.c - the downstream calls, concurrently over libcurl multi
 *
 * One transfer struct per call, found again through CURLOPT_PRIVATE (as
 * curl's docs/examples/10-at-a-time.c does).  No CURLOPT_VERBOSE: the
 * headers carry a signature, and nothing here logs.
 */
#include "deliver.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "clock.h"
#include "respref.h"
#include "secret.h"
#include "sign.h"
#include "xalloc.h"

#define RESPONSE_KEEP 256 /* bytes of a response body kept, the rest discarded */
#define HEADER_VALUE_MAX 200

typedef struct xfer {
	job *job;
	CURL *easy;
	struct curl_slist *headers;
	char body[RESPONSE_KEEP + 1]; /* the start of the response body */
	size_t body_len;
	char *json; /* response_ref_field: the answer, up to RESPREF_BODY_MAX bytes */
	size_t json_len;
	bool json_over;			       /* the answer was longer */
	const char *ref_header;		       /* the response header kept as the reference */
	char request_id[HEADER_VALUE_MAX + 1]; /* its value */
	int64_t started_us;
	struct xfer *next, *prev;
} xfer;

struct deliver {
	CURLM *multi;
	size_t inflight;
	xfer *list;
};

int
deliver_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void
deliver_global_cleanup(void)
{
	curl_global_cleanup();
}

deliver *
deliver_new(int concurrency)
{
	deliver *d = xcalloc(1, sizeof(*d));

	d->multi = curl_multi_init();
	if (d->multi == NULL)
		abort(); /* only fails for lack of memory */
	curl_multi_setopt(d->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)concurrency);
	curl_multi_setopt(d->multi, CURLMOPT_MAXCONNECTS, (long)concurrency);
	return d;
}

static void
xfer_free(deliver *d, xfer *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		d->list = x->next;
	if (x->next)
		x->next->prev = x->prev;
	curl_multi_remove_handle(d->multi, x->easy);
	curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->headers);
	free(x->json);
	free(x);
}

void
deliver_free(deliver *d)
{
	if (d == NULL)
		return;
	while (d->list) {
		job_free(d->list->job);
		xfer_free(d, d->list);
	}
	curl_multi_cleanup(d->multi);
	free(d);
}

size_t
deliver_inflight(const deliver *d)
{
	return d->inflight;
}

static size_t
on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	xfer *x = arg;
	size_t n = size * nmemb, room = RESPONSE_KEEP - x->body_len;
	size_t take = n < room ? n : room;

	memcpy(x->body + x->body_len, ptr, take);
	x->body_len += take;
	x->body[x->body_len] = '\0';
	if (x->json != NULL) {
		room = RESPREF_BODY_MAX - x->json_len;
		take = n < room ? n : room;
		memcpy(x->json + x->json_len, ptr, take);
		x->json_len += take;
		x->json_over = x->json_over || take < n;
	}
	return n; /* the rest is read and dropped: the response is capped */
}

static size_t
on_header(char *ptr, size_t size, size_t nitems, void *arg)
{
	xfer *x = arg;
	size_t n = size * nitems, name_len = strlen(x->ref_header);

	if (n > name_len + 1 && strncasecmp(ptr, x->ref_header, name_len) == 0 &&
	    ptr[name_len] == ':') {
		const char *v = ptr + name_len + 1;
		size_t len = n - (name_len + 1);

		while (len > 0 && (*v == ' ' || *v == '\t'))
			v++, len--;
		while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
			len--;
		respref_printable(x->request_id, sizeof(x->request_id), v, len);
	}
	return n;
}

static struct curl_slist *
add_header(struct curl_slist *list, const char *name, const char *value)
{
	char clean[HEADER_VALUE_MAX + 1];
	char *line;
	struct curl_slist *l;

	respref_printable(clean, sizeof(clean), value, strlen(value));
	line = xasprintf("%s: %s", name, clean);
	l = curl_slist_append(list, line);
	free(line);
	if (l == NULL)
		abort(); /* only fails for lack of memory */
	return l;
}

/* Standard Webhooks headers signed with the route's first secret; -1 on error */
static int
add_signature(xfer *x, job *j)
{
	const route_conf *r = j->route;
	sign_output out = {.n = 0};
	sign_input in;
	size_t slen = 0;
	const unsigned char *s;
	char err[128];
	int rc = -1;

	if (r->secrets == NULL || secret_count(r->secrets) == 0)
		return 0;
	s = secret_get(r->secrets, 0, &slen);
	in = (sign_input){.secret = s,
			  .secret_len = slen,
			  .event_id = j->idem_key,
			  .timestamp = clock_now(),
			  .body = j->body,
			  .body_len = j->body_len,
			  .url = r->url};
	if (sign_delivery_headers(&in, &out, err, sizeof(err)) != 0) {
		snprintf(j->error, sizeof(j->error), "could not sign: %s", err);
		goto out;
	}
	for (size_t i = 0; i < out.n; i++)
		x->headers = add_header(x->headers, out.h[i].name, out.h[i].value);
	rc = 0;
out:
	sign_release(&out);
	return rc;
}

/* the options every call has, and the transfer into the multi handle */
static void
start_common(deliver *d, xfer *x, const char *url)
{
	CURL *e = x->easy;
	long timeout = x->job->route->timeout;

	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, timeout < 10 ? timeout : 10L);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "hookinbox-worker/" HOOKINBOX_VERSION);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	x->started_us = clock_mono_us();
	if (curl_multi_add_handle(d->multi, e) != CURLM_OK)
		abort(); /* only fails for lack of memory or misuse */
	x->next = d->list;
	if (d->list)
		d->list->prev = x;
	d->list = x;
	d->inflight++;
}

/*
 * GET the route's reconcile_url with {key} replaced by the URL-encoded
 * idempotency key (every occurrence): does the downstream have the effect?
 */
static int
start_reconcile(deliver *d, xfer *x, job *j)
{
	const char *tpl = j->route->reconcile_url, *p;
	char *key = curl_easy_escape(x->easy, j->idem_key, 0);
	char *url = NULL;
	size_t len = 0, cap;

	if (key == NULL)
		abort(); /* only fails for lack of memory */
	cap = strlen(tpl) + 1;
	for (p = tpl; (p = strstr(p, "{key}")) != NULL; p += 5)
		cap += strlen(key);
	url = xmalloc(cap);
	for (p = tpl; *p != '\0';) {
		if (strncmp(p, "{key}", 5) == 0) {
			memcpy(url + len, key, strlen(key));
			len += strlen(key);
			p += 5;
		} else {
			url[len++] = *p++;
		}
	}
	url[len] = '\0';
	curl_free(key);
	curl_easy_setopt(x->easy, CURLOPT_HTTPGET, 1L);
	start_common(d, x, url); /* libcurl copies the URL */
	free(url);
	return 0;
}

int
deliver_start(deliver *d, job *j)
{
	const route_conf *r = j->route;
	xfer *x = xcalloc(1, sizeof(*x));
	char attempt[16];
	const char *ct = j->content_type;
	CURL *e;

	x->job = j;
	x->ref_header = r->response_ref_header ? r->response_ref_header : "X-Request-Id";
	if (r->response_ref_field != NULL)
		x->json = xmalloc(RESPREF_BODY_MAX);
	x->easy = e = curl_easy_init();
	if (e == NULL)
		abort(); /* only fails for lack of memory */
	if (ct == NULL || *ct == '\0' || strlen(ct) > HEADER_VALUE_MAX)
		ct = "application/json";
	snprintf(attempt, sizeof(attempt), "%d", j->attempt);
	x->headers = add_header(x->headers, "Content-Type", ct);
	x->headers = add_header(x->headers, "Idempotency-Key", j->idem_key);
	x->headers = add_header(x->headers, "X-Hookinbox-Event-Id", j->event_id);
	if (j->event_type)
		x->headers = add_header(x->headers, "X-Hookinbox-Event-Type", j->event_type);
	x->headers = add_header(x->headers, "X-Hookinbox-Attempt", attempt);
	x->headers = curl_slist_append(x->headers, "Expect:");
	if (x->headers == NULL)
		abort();
	if (j->reconciling)
		return start_reconcile(d, x, j);
	if (add_signature(x, j) != 0) {
		curl_easy_cleanup(x->easy);
		curl_slist_free_all(x->headers);
		free(x->json);
		free(x);
		return -1;
	}

	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, j->body ? (const char *)j->body : "");
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->body_len);
	start_common(d, x, r->url);
	return 0;
}

/*
 * response_ref_field: the reference is that field of the JSON answer; when
 * the answer has none, the reference found otherwise stays, with a note
 * saying why (the action is done all the same)
 */
static void
ref_from_field(const xfer *x, job *j)
{
	char val[JOB_REF_MAX];
	const char *why = NULL;
	size_t len;

	if (respref_from_json(x->json, x->json_len, x->json_over, j->route->response_ref_field, val,
			      sizeof(val), &why) == 0) {
		snprintf(j->ref, sizeof(j->ref), "%s", val);
		return;
	}
	len = strlen(j->ref);
	snprintf(j->ref + len, sizeof(j->ref) - len, "%s[no %.64s: %s]", len ? " " : "",
		 j->route->response_ref_field, why);
}

/* fill the job's result from a finished transfer */
static void
finish(xfer *x, CURLcode rc)
{
	job *j = x->job;
	long status = 0, req_size = 0;
	curl_off_t retry_after = 0;

	j->duration_ms = (clock_mono_us() - x->started_us) / 1000;
	j->retry_after_s = -1;
	curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &req_size);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
		j->status = status;
		if (curl_easy_getinfo(x->easy, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK &&
		    retry_after > 0)
			j->retry_after_s = (double)retry_after;
		if (x->request_id[0] && j->route->response_ref_header != NULL)
			snprintf(j->ref, sizeof(j->ref), "%.64s: %.130s", x->ref_header,
				 x->request_id);
		else if (x->request_id[0])
			snprintf(j->ref, sizeof(j->ref), "x-request-id: %.180s", x->request_id);
		else
			respref_printable(j->ref, sizeof(j->ref), x->body, x->body_len);
		if (x->json != NULL && status >= 200 && status <= 299)
			ref_from_field(x, j);
		/* a 409 answers a key another request is still being processed
		 * under: that request may yet apply it */
		if (status == 409)
			snprintf(j->error, sizeof(j->error),
				 "http status 409 (key in progress: outcome unknown)");
		else if (status < 200 || status > 299)
			snprintf(j->error, sizeof(j->error), "http status %ld", status);
		return;
	}
	j->status = 0;
	j->transport_error = true;
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		j->timed_out = true;
		snprintf(j->error, sizeof(j->error), "%s",
			 req_size > 0 ? "timeout (outcome unknown)"
				      : "timeout before the request was sent");
		break;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
		snprintf(j->error, sizeof(j->error), "%s (%s)", curl_easy_strerror(rc),
			 req_size > 0 ? "outcome unknown" : "not sent");
		break;
	default:
		/* the generic text only: the error buffer may name the URL */
		snprintf(j->error, sizeof(j->error), "%s", curl_easy_strerror(rc));
		break;
	}
}

void
deliver_wait(deliver *d, int fd, int timeout_ms)
{
	struct curl_waitfd extra = {.fd = fd, .events = CURL_WAIT_POLLIN, .revents = 0};
	int running = 0;

	curl_multi_poll(d->multi, &extra, 1, timeout_ms, NULL);
	if (d->inflight > 0)
		curl_multi_perform(d->multi, &running);
}

size_t
deliver_poll(deliver *d, int timeout_ms, job **done, size_t cap)
{
	CURLMsg *m;
	int running = 0, left = 0;
	size_t n = 0;

	if (d->inflight == 0)
		return 0;
	curl_multi_perform(d->multi, &running);
	if ((size_t)running == d->inflight && timeout_ms > 0) {
		curl_multi_poll(d->multi, NULL, 0, timeout_ms, NULL);
		curl_multi_perform(d->multi, &running);
	}
	while (n < cap && (m = curl_multi_info_read(d->multi, &left)) != NULL) {
		char *priv = NULL;
		xfer *x;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		x = (xfer *)(void *)priv;
		finish(x, m->data.result);
		done[n++] = x->job;
		xfer_free(d, x);
		d->inflight--;
	}
	return n;
}
