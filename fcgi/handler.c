/* SPDX-License-Identifier: ISC */
/*
 * handler.c - one webhook request, from routing to the reply
 *
 * Nothing read from the peer is trusted: the path, the length and every
 * header are checked before use, the body is read into a buffer bounded
 * by the endpoint's max_body, and a bad request is answered with a 4xx
 * while the process keeps serving.  Rejected requests are logged by
 * category only: never a signature header, a secret or the body.
 */
#include "handler.h"

#include "batchin.h"
#include "clock.h"
#include "content_length.h"
#include "decimal.h"
#include "envelope.h"
#include "failpoint.h"
#include "log.h"
#include "utf8.h"
#include "verify.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COUNT_SLOTS 64
/* longest X-Request-Id from the web server that is logged */
#define UPSTREAM_ID_MAX 64
#define COUNT_FLUSH_S 10

typedef struct count_slot {
	const char *endpoint; /* conf-owned name or "(unknown)" */
	const char *reason;   /* static text */
	long n;
} count_slot;

/*
 * Request durations in OpenTelemetry's advised buckets for
 * http.server.request.duration (seconds), the list of the SQL function
 * hookinbox.request_duration_bounds(), which refuses counts of another length
 */
static const double duration_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25,
					 0.5,	0.75, 1,     2.5,  5,	  7.5, 10};
#define N_DURATION (sizeof(duration_bounds) / sizeof(duration_bounds[0]) + 1)

typedef struct duration_slot {
	const char *endpoint; /* conf-owned name or "(unknown)" */
	const char *provider; /* static */
	const char *outcome;  /* static */
	int status;
	long buckets[N_DURATION]; /* not cumulative; +Inf last */
	double sum;
} duration_slot;

struct handler {
	const conf *cfg;
	store *st;
	unsigned char *body; /* reused across requests, grown up to max_body */
	size_t body_cap;
	char *hdrs; /* the kept headers' JSON, reused across requests */
	size_t hdrs_cap, hdrs_len;
	unsigned *seen; /* per kept header: the request (gen) that kept it */
	unsigned gen;
	long pid; /* for the request ids: getpid() is a system call each time */
	/* rejection counts: the request thread adds, the flusher writes */
	pthread_mutex_t count_lock;
	pthread_cond_t count_wake;
	pthread_t flusher;
	bool flusher_running;
	bool stopping;
	int64_t flush_period_ms;
	int64_t flush_phase_ms; /* the first flush after this long, then every period */
	count_slot counts[COUNT_SLOTS];
	size_t n_counts;
	duration_slot durations[COUNT_SLOTS];
	size_t n_durations;
};

/* what one request came to, for the reply and the log line */
typedef struct outcome {
	int status;
	const char *what;   /* accepted, duplicate, review, rejected, error, handshake */
	const char *reason; /* static text for rejections and errors */
	int64_t id;
	int secret_index;
} outcome;

/*
 * The kept headers (event metadata only, never credentials): every
 * provider's, whatever the endpoint's provider, each exact name once, with
 * the CGI variable that carries it ("X-GitHub-Event": HTTP_X_GITHUB_EVENT),
 * sorted by that variable so that a request's variables are looked up in it.
 * Built once per process; read-only afterwards.
 */
typedef struct kept_header {
	const char *name;
	char cgi[128];
} kept_header;

static kept_header *kept;
static size_t n_kept;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static int
kept_cmp(const void *a, const void *b)
{
	const kept_header *x = a, *y = b;
	int c = strcmp(x->cgi, y->cgi);

	return c != 0 ? c : strcmp(x->name, y->name);
}

/* "Stripe-Signature" -> "HTTP_STRIPE_SIGNATURE"; Content-Type is CONTENT_TYPE; false if too long */
static bool
cgi_name(const char *name, char *key, size_t size)
{
	size_t off = 5;

	if (strcasecmp(name, "Content-Type") == 0) {
		snprintf(key, size, "CONTENT_TYPE");
		return true;
	}
	if (strcasecmp(name, "Content-Length") == 0) {
		snprintf(key, size, "CONTENT_LENGTH");
		return true;
	}
	if (strlen(name) > size - 6)
		return false;
	memcpy(key, "HTTP_", 5);
	for (const char *p = name; *p; p++)
		key[off++] = (*p == '-') ? '_' : (char)toupper((unsigned char)*p);
	key[off] = '\0';
	return true;
}

static void
kept_build(void)
{
	size_t cap = 0;

	for (size_t i = 0; provider_kept_headers(i) != NULL; i++)
		for (const char *const *n = provider_kept_headers(i); *n != NULL; n++)
			cap++;
	kept = xcalloc(cap + 1, sizeof(*kept));
	for (size_t i = 0; provider_kept_headers(i) != NULL; i++) {
		for (const char *const *n = provider_kept_headers(i); *n != NULL; n++) {
			bool seen = false;

			for (size_t k = 0; k < n_kept && !seen; k++)
				seen = strcmp(kept[k].name, *n) == 0;
			if (seen || !cgi_name(*n, kept[n_kept].cgi, sizeof(kept[n_kept].cgi)))
				continue;
			kept[n_kept++].name = *n;
		}
	}
	qsort(kept, n_kept, sizeof(*kept), kept_cmp);
}

/* the first kept header carried by CGI variable var[0..len), or NULL */
static const kept_header *
kept_find(const char *var, size_t len)
{
	size_t lo = 0, hi = n_kept;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(kept[mid].cgi, var, len);

		if (c == 0 && kept[mid].cgi[len] != '\0')
			c = 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n_kept && strncmp(kept[lo].cgi, var, len) == 0 && kept[lo].cgi[len] == '\0')
		return &kept[lo];
	return NULL;
}

/* adds n to the count of (endpoint, reason); count_lock held; false when full */
static bool
add_count(handler *h, const char *endpoint, const char *reason, long n)
{
	size_t i;

	for (i = 0; i < h->n_counts; i++)
		if (h->counts[i].endpoint == endpoint && h->counts[i].reason == reason)
			break;
	if (i == h->n_counts) {
		if (h->n_counts == COUNT_SLOTS)
			return false;
		h->counts[i] = (count_slot){endpoint, reason, 0};
		h->n_counts = i + 1;
	}
	h->counts[i].n += n;
	return true;
}

/*
 * Takes the counts gathered so far and writes them; count_lock not held.
 * What the database did not take is put back for the next flush: the
 * storage failures of an outage are counted when it ends.
 */
static void flush_durations(handler *h);

static void
flush_counts(handler *h)
{
	count_slot taken[COUNT_SLOTS];
	size_t n;

	flush_durations(h);
	pthread_mutex_lock(&h->count_lock);
	n = h->n_counts;
	memcpy(taken, h->counts, n * sizeof(taken[0]));
	h->n_counts = 0;
	pthread_mutex_unlock(&h->count_lock);
	for (size_t i = 0; i < n; i++) {
		if (store_count_rejection(h->st, taken[i].endpoint, taken[i].reason, taken[i].n) ==
		    0)
			continue;
		pthread_mutex_lock(&h->count_lock);
		for (; i < n; i++)
			(void)add_count(h, taken[i].endpoint, taken[i].reason, taken[i].n);
		pthread_mutex_unlock(&h->count_lock);
		break;
	}
}

/* adds d's counts to the slot of its labels; count_lock held; false when full */
static bool
add_duration(handler *h, const duration_slot *d)
{
	size_t i;

	for (i = 0; i < h->n_durations; i++) {
		const duration_slot *x = &h->durations[i];

		if (x->endpoint == d->endpoint && x->outcome == d->outcome &&
		    x->status == d->status)
			break;
	}
	if (i == h->n_durations) {
		if (h->n_durations == COUNT_SLOTS)
			return false;
		h->durations[i] = *d;
		h->n_durations = i + 1;
		return true;
	}
	for (size_t b = 0; b < N_DURATION; b++)
		h->durations[i].buckets[b] += d->buckets[b];
	h->durations[i].sum += d->sum;
	return true;
}

/* as flush_counts, for the duration histogram */
static void
flush_durations(handler *h)
{
	duration_slot taken[COUNT_SLOTS];
	size_t n;

	pthread_mutex_lock(&h->count_lock);
	n = h->n_durations;
	memcpy(taken, h->durations, n * sizeof(taken[0]));
	h->n_durations = 0;
	pthread_mutex_unlock(&h->count_lock);
	for (size_t i = 0; i < n; i++) {
		const duration_slot *d = &taken[i];

		if (store_count_requests(h->st, d->endpoint, d->provider, d->outcome, d->status,
					 d->buckets, N_DURATION, d->sum) == 0)
			continue;
		pthread_mutex_lock(&h->count_lock);
		for (; i < n; i++)
			(void)add_duration(h, &taken[i]);
		pthread_mutex_unlock(&h->count_lock);
		break;
	}
}

/* one request's duration, counted like the rejections */
static void
count_duration(handler *h, const endpoint_conf *ep, const char *what, int status, double seconds)
{
	duration_slot d = {
		.endpoint = ep ? ep->name : "(unknown)",
		.provider = ep ? provider_name(ep->pe.provider) : "(unknown)",
		.outcome = what,
		.status = status,
		.sum = seconds,
	};
	size_t b = 0;
	bool added;

	while (b < N_DURATION - 1 && seconds > duration_bounds[b])
		b++;
	d.buckets[b] = 1;
	pthread_mutex_lock(&h->count_lock);
	added = add_duration(h, &d);
	pthread_mutex_unlock(&h->count_lock);
	if (!added) {
		flush_durations(h);
		pthread_mutex_lock(&h->count_lock);
		(void)add_duration(h, &d);
		pthread_mutex_unlock(&h->count_lock);
	}
}

/*
 * Where in the period this handler's flushes fall.  Each flush commits
 * (a WAL flush) on the store's connection, which in group commit is the
 * one the deliveries' batches wait for, and updates the same counter rows
 * as every other handler's.  Handlers started together (the request
 * threads of a process, the processes a web server starts at once) would
 * flush together every period, one commit after another on those rows,
 * and the deliveries behind them would wait for all of them (tens of
 * milliseconds with 64).  So the phase is spread by the process id and
 * the handler's number in the process, in golden-ratio steps.
 */
static int64_t
flush_phase_ms(long pid, int64_t period_ms)
{
	static atomic_ulong n_handlers;
	unsigned long k = atomic_fetch_add(&n_handlers, 1);

	return (int64_t)(((unsigned long)pid * 7919UL + k * 6180UL) % (unsigned long)period_ms);
}

/*
 * COUNT_FLUSH_S; a test build takes HOOKINBOX_TEST_COUNT_FLUSH_MS instead,
 * so that a test can have a flush in flight whenever it needs one
 */
static int64_t
flush_period_ms(void)
{
#ifdef HOOKINBOX_TEST
	const char *v = getenv("HOOKINBOX_TEST_COUNT_FLUSH_MS");
	long long ms;

	if (v != NULL && decimal_parse(v, 1, 3600 * 1000, &ms) == 0)
		return ms;
#endif
	return COUNT_FLUSH_S * 1000;
}

/*
 * Rejections are written every flush period by a thread of their
 * own: the request thread waits in accept when nothing arrives, and a burst
 * of forged requests must show in the metrics (and its alert fire) without
 * waiting for the next one.
 */
static void *
flusher_main(void *arg)
{
	handler *h = arg;
	int64_t wait_ms = h->flush_phase_ms;

	pthread_mutex_lock(&h->count_lock);
	while (!h->stopping) {
		struct timespec until = clock_in_us(CLOCK_REALTIME, wait_ms * 1000);

		wait_ms = h->flush_period_ms;
		while (!h->stopping &&
		       pthread_cond_timedwait(&h->count_wake, &h->count_lock, &until) == 0)
			;
		if (h->stopping || (h->n_counts == 0 && h->n_durations == 0))
			continue;
		pthread_mutex_unlock(&h->count_lock);
		flush_counts(h);
		pthread_mutex_lock(&h->count_lock);
	}
	pthread_mutex_unlock(&h->count_lock);
	return NULL;
}

handler *
handler_new(const conf *cfg, store *st)
{
	handler *h = xcalloc(1, sizeof(*h));

	h->pid = (long)getpid();
	h->cfg = cfg;
	h->st = st;
	(void)pthread_once(&kept_once, kept_build);
	h->seen = xcalloc(n_kept + 1, sizeof(*h->seen));
	pthread_mutex_init(&h->count_lock, NULL);
	pthread_cond_init(&h->count_wake, NULL);
	h->flush_period_ms = flush_period_ms();
	h->flush_phase_ms = flush_phase_ms(h->pid, h->flush_period_ms);
	/* without the thread, counts are still written when the handler is freed */
	h->flusher_running = pthread_create(&h->flusher, NULL, flusher_main, h) == 0;
	if (!h->flusher_running)
		log_warn("could not start the rejection counter's thread: counts are written "
			 "at exit only");
	return h;
}

void
handler_free(handler *h)
{
	if (h == NULL)
		return;
	if (h->flusher_running) {
		pthread_mutex_lock(&h->count_lock);
		h->stopping = true;
		pthread_cond_signal(&h->count_wake);
		pthread_mutex_unlock(&h->count_lock);
		pthread_join(h->flusher, NULL);
	}
	flush_counts(h);
	pthread_cond_destroy(&h->count_wake);
	pthread_mutex_destroy(&h->count_lock);
	free(h->body);
	free(h->hdrs);
	free(h->seen);
	free(h);
}

void
handler_flush_counts(handler *h)
{
	flush_counts(h);
}

/*
 * Rejections are counted in memory and written every ten seconds, so a
 * flood of bad requests costs no database write per request and grows no
 * table beyond (hour, endpoint, reason).
 */
static void
count_rejection(handler *h, const char *endpoint, const char *reason)
{
	bool added;

	pthread_mutex_lock(&h->count_lock);
	added = add_count(h, endpoint, reason, 1);
	pthread_mutex_unlock(&h->count_lock);
	if (!added) {
		/* a table of COUNT_SLOTS distinct pairs: write it now, then count */
		flush_counts(h);
		pthread_mutex_lock(&h->count_lock);
		(void)add_count(h, endpoint, reason, 1);
		pthread_mutex_unlock(&h->count_lock);
	}
}

/* ---- request access ---- */

/* a header by its name, through its CGI variable */
static const char *
io_header(const void *ctx, const char *name)
{
	const http_io *io = ctx;
	char key[128];

	return cgi_name(name, key, sizeof(key)) ? io->param(io->ctx, key) : NULL;
}

/*
 * The endpoint is the last segment of the request path.  The raw
 * REQUEST_URI is used, so that dot segments and encoded slashes cannot
 * make one URL name another endpoint: anything but a plain name is 404.
 */
static const endpoint_conf *
find_endpoint(const conf *cfg, const http_io *io, const char **reason)
{
	const char *uri = io->param(io->ctx, "REQUEST_URI");
	const char *end, *seg;
	char name[65];
	size_t len;

	*reason = "unknown endpoint";
	if (uri == NULL)
		uri = io->param(io->ctx, "SCRIPT_NAME");
	if (uri == NULL)
		return NULL;
	end = uri + strcspn(uri, "?#");
	seg = end;
	while (seg > uri && seg[-1] != '/')
		seg--;
	len = (size_t)(end - seg);
	if (len == 0 || len >= sizeof(name))
		return NULL;
	for (const char *p = seg; p < end; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') {
			*reason = "bad path";
			return NULL;
		}
	}
	/* "/hooks/a/../b" and friends: refuse any dot segment in the raw path */
	for (const char *p = uri; p < end; p++) {
		if (p[0] == '/' && p[1] == '.' &&
		    (p + 2 == end || p[2] == '/' ||
		     (p[2] == '.' && (p + 3 == end || p[3] == '/')))) {
			*reason = "bad path";
			return NULL;
		}
		if (p[0] == '%') {
			*reason = "bad path";
			return NULL;
		}
	}
	memcpy(name, seg, len);
	name[len] = '\0';
	return conf_endpoint(cfg, name);
}

/* read exactly len bytes; -1 when the peer sent fewer, -2 when it took too long */
static int
read_body(handler *h, const http_io *io, size_t len)
{
	size_t got = 0;

	if (len > h->body_cap) {
		h->body = xrealloc(h->body, len);
		h->body_cap = len;
	}
	while (got < len) {
		size_t want = len - got;
		ssize_t n = io->read(io->ctx, h->body + got, want > 65536 ? 65536 : want);

		if (n < 0 && errno == ETIMEDOUT)
			return -2;
		if (n <= 0)
			return -1;
		got += (size_t)n;
		FAILPOINT("fcgi-mid-body");
	}
	return 0;
}

/* room for n more bytes in the headers buffer */
static char *
hdrs_room(handler *h, size_t n)
{
	if (h->hdrs_len + n > h->hdrs_cap) {
		size_t cap = h->hdrs_cap ? h->hdrs_cap : 1024;

		while (cap < h->hdrs_len + n)
			cap *= 2;
		h->hdrs = xrealloc(h->hdrs, cap);
		h->hdrs_cap = cap;
	}
	return h->hdrs + h->hdrs_len;
}

/*
 * s as a JSON string.  A header is bytes, jsonb is UTF-8: bytes that are
 * not UTF-8 (a Latin-1 User-Agent) are kept as the text "\xNN", so that
 * such a delivery is stored rather than failing its insert on every retry.
 */
static void
hdrs_string(handler *h, const char *s)
{
	static const char hexd[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	/* at most 6 bytes out for each byte in ("\u001f", "\\xff" is 5) */
	char *o = hdrs_room(h, 6 * len + 2), *start = o;

	*o++ = '"';
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*o++ = (char)c;
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
			i++;
			continue;
		}
		if (c < 0x20) {
			memcpy(o, "\\u00", 4);
			o[4] = hexd[c >> 4];
			o[5] = hexd[c & 15];
			o += 6;
			i++;
			continue;
		}
		n = utf8_next(p + i, len - i, &cp);
		if (n == 0) {
			memcpy(o, "\\\\x", 3);
			o[3] = hexd[c >> 4];
			o[4] = hexd[c & 15];
			o += 5;
			i++;
			continue;
		}
		memcpy(o, p + i, n);
		o += n;
		i += n;
	}
	*o++ = '"';
	h->hdrs_len += (size_t)(o - start);
}

/* one "name":"value" member; a value over 1024 bytes is not kept */
static void
hdrs_member(handler *h, const char *name, const char *value)
{
	if (strlen(value) > 1024)
		return;
	if (h->hdrs_len > 1) {
		*hdrs_room(h, 1) = ',';
		h->hdrs_len++;
	}
	hdrs_string(h, name);
	*hdrs_room(h, 1) = ':';
	h->hdrs_len++;
	hdrs_string(h, value);
}

/*
 * The kept headers as a JSON object, in the handler's buffer (reused by
 * the next request).  From the request's variables when the transport can
 * list them (one pass over them), else one lookup per kept header; a
 * header sent twice is the web server's first variable, as a lookup finds.
 */
static const char *
headers_json(handler *h, const http_io *io, const request_view *rv)
{
	(void)pthread_once(&kept_once, kept_build);
	h->hdrs_len = 0;
	*hdrs_room(h, 1) = '{';
	h->hdrs_len = 1;
	if (h->gen == 0 || ++h->gen == 0) {
		memset(h->seen, 0, n_kept * sizeof(*h->seen));
		h->gen = 1;
	}
	if (io->params != NULL) {
		char *const *env = io->params(io->ctx);

		for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
			const char *v = env[i], *eq;
			const kept_header *first, *k;

			if (v[0] != 'H' && v[0] != 'C')
				continue;
			eq = strchr(v, '=');
			if (eq == NULL || (first = kept_find(v, (size_t)(eq - v))) == NULL)
				continue;
			/* names that differ in case only share the variable: each is kept */
			for (k = first; k < kept + n_kept && strcmp(k->cgi, first->cgi) == 0; k++) {
				if (h->seen[k - kept] == h->gen)
					break; /* a second variable of the same name */
				h->seen[k - kept] = h->gen;
				hdrs_member(h, k->name, eq + 1);
			}
		}
	} else {
		for (size_t k = 0; k < n_kept; k++) {
			const char *v = rv->header(rv->ctx, kept[k].name);

			if (v != NULL)
				hdrs_member(h, kept[k].name, v);
		}
	}
	*hdrs_room(h, 2) = '}';
	h->hdrs[h->hdrs_len + 1] = '\0';
	h->hdrs_len++;
	return h->hdrs;
}

static const char *
status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Error";
	}
}

/* a value echoed back in a header: printable ASCII only, so it cannot end the header */
static bool
header_safe(const char *v)
{
	size_t n = 0;

	for (const char *p = v; *p; p++, n++)
		if (n == 1024 || *p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/*
 * The reply: a handshake's answer (envelope.h) when there is one, else our
 * JSON; for a provider that takes bare answers (Xero), the status alone.
 */
static void
reply(const http_io *io, const outcome *o, const handshake_answer *ans, bool bare)
{
	char head[256], body[256];
	const char *type = "application/json";
	int hn, bn;

	if (o->status == 200) {
		bn = snprintf(body, sizeof(body), "{\"id\":%" PRId64 ",\"duplicate\":%s%s}\n",
			      o->id, strcmp(o->what, "duplicate") == 0 ? "true" : "false",
			      strcmp(o->what, "review") == 0 ? ",\"review\":true" : "");
	} else {
		/* reason strings are static texts of ours, safe to echo */
		bn = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", o->reason);
	}
	if (bn < 0 || (size_t)bn >= sizeof(body))
		bn = snprintf(body, sizeof(body), "{}\n");
	if (ans != NULL && ans->content_type != NULL)
		type = ans->content_type;
	if (bare || (ans != NULL && ans->body == NULL))
		bn = 0;
	hn = snprintf(head, sizeof(head),
		      "Status: %d %s\r\n%s%s%sCache-Control: no-store\r\n"
		      "X-Content-Type-Options: nosniff\r\n%s%s",
		      o->status, status_text(o->status), bn > 0 ? "Content-Type: " : "",
		      bn > 0 ? type : "", bn > 0 ? "\r\n" : "",
		      o->status == 405 ? "Allow: POST\r\n" : "",
		      o->status == 503 ? "Retry-After: 5\r\n" : "");
	io->write(io->ctx, head, (size_t)hn);
	if (ans != NULL && ans->echo_header != NULL) {
		io->write(io->ctx, ans->echo_header, strlen(ans->echo_header));
		io->write(io->ctx, ": ", 2);
		io->write(io->ctx, ans->echo_value, strlen(ans->echo_value));
		io->write(io->ctx, "\r\n", 2);
	}
	io->write(io->ctx, "\r\n", 2);
	/* a handshake is answered with what its provider checks (envelope.h) */
	if (ans != NULL && ans->body != NULL && !bare)
		io->write(io->ctx, ans->body, strlen(ans->body));
	else if (bn > 0)
		io->write(io->ctx, body, (size_t)bn);
}

static outcome
rejected(int status, const char *reason)
{
	return (outcome){.status = status,
			 .what = "rejected",
			 .reason = reason,
			 .id = -1,
			 .secret_index = -1};
}

/*
 * serve's results beyond the outcome: the endpoint found, and texts the
 * caller frees.  event_id is set for stored deliveries only (accepted,
 * duplicate, held; "" otherwise): a rejected request's body is not
 * trusted, not logged.
 */
typedef struct served {
	const endpoint_conf *ep;
	handshake_answer answer; /* a handshake's */
	bool answered;
	char *note;
	envelope_field event_id;
	/*
	 * A duplicate found by its signed content under another, unsigned id:
	 * event_id is the request's, not the stored delivery's (that one is
	 * o.id), and is logged as request_event_id.
	 */
	bool event_id_unstored;
} served;

/* a request that carries several events (batchin.h): stored in one transaction, one answer */
static outcome
serve_batch(handler *h, const http_io *io, const endpoint_conf *ep, const request_view *rv,
	    int secret_index, served *sv)
{
	batchin_result r;

	FAILPOINT("fcgi-before-insert");
	batchin_store(h->st, ep, rv, headers_json(h, io, rv), &r);
	sv->answer.body = r.answer;
	sv->answered = r.answer != NULL;
	sv->note = r.note;
	FAILPOINT("fcgi-after-commit");
	return (outcome){.status = r.status,
			 .what = r.what,
			 .reason = r.reason,
			 .id = r.first_id,
			 .secret_index = secret_index};
}

/* a handshake answered (envelope.h), counted with the other requests that store nothing */
static outcome
handshake_answered(handler *h, const endpoint_conf *ep, served *sv, int secret_index)
{
	if (sv->answer.echo_header != NULL &&
	    (sv->answer.echo_value == NULL || !header_safe(sv->answer.echo_value))) {
		handshake_answer_release(&sv->answer);
		return rejected(400, "handshake header not echoable");
	}
	sv->answered = true;
	count_rejection(h, ep->name, "handshake answered");
	return (outcome){.status = 200,
			 .what = "handshake",
			 .reason = "handshake answered",
			 .id = -1,
			 .secret_index = secret_index};
}

static outcome
serve(handler *h, const http_io *io, served *sv)
{
	const char *method = io->param(io->ctx, "REQUEST_METHOD");
	const char *reason;
	const endpoint_conf *ep = find_endpoint(h->cfg, io, &reason);
	request_view rv = {
		.header = io_header, .ctx = io, .query = io->param(io->ctx, "QUERY_STRING")};
	verify_result vr;
	envelope env = {0};
	size_t len;
	outcome o;
	store_delivery d;

	sv->ep = ep;
	if (ep == NULL)
		return rejected(404, reason);
	if (method == NULL)
		return rejected(405, "method not allowed");
	rv.now = clock_now();
	/* the provider's check of the endpoint, before any body: stores nothing */
	switch (envelope_greeting(&ep->pe, &rv, method, &sv->answer, &reason)) {
	case 0:
		break;
	case 1:
		return handshake_answered(h, ep, sv, -1);
	default:
		return rejected(400, reason);
	}
	if (strcmp(method, "POST") != 0)
		return rejected(405, "method not allowed");
	if (content_length_parse(io->param(io->ctx, "CONTENT_LENGTH"), &len) != 0)
		return rejected(411, "no valid content length");
	if (len > ep->max_body)
		return rejected(413, "body too large");
	switch (read_body(h, io, len)) {
	case 0:
		break;
	case -2:
		return rejected(408, "body not received in time");
	default:
		return rejected(400, "body shorter than content length");
	}

	rv.body = h->body;
	rv.body_len = len;
	if (verify_request(&ep->pe, &rv, &vr) != 0)
		return rejected(verify_http_status(vr.status), vr.reason);

	switch (envelope_handshake(&ep->pe, &rv, vr.secret_index, &sv->answer, &reason)) {
	case 0:
		break;
	case 1:
		return handshake_answered(h, ep, sv, vr.secret_index);
	default:
		o = rejected(400, reason);
		o.secret_index = vr.secret_index;
		return o;
	}
	if (envelope_batched(&ep->pe))
		return serve_batch(h, io, ep, &rv, vr.secret_index, sv);
	if (envelope_extract(&ep->pe, &rv, &env, &reason) != 0) {
		envelope_release(&env);
		o = rejected(400, reason);
		o.secret_index = vr.secret_index;
		return o;
	}

	d = (store_delivery){
		.endpoint = ep->name,
		.provider = provider_name(ep->pe.provider),
		.account = ep->account,
		.environment = ep->environment,
		.event_id = env.event_id,
		.event_type = envelope_or_null(env.event_type),
		.object_id = envelope_or_null(env.object_id),
		.version = env.has_version ? &env.version : NULL,
		.headers_json = headers_json(h, io, &rv),
		.body = h->body,
		.body_len = len,
		/* provider.h: a delivery id the signature does not cover is deduplicated on the
		   body too */
		.body_dedup = !provider_endpoint_id_signed(&ep->pe),
		.note = env.note,
		.signed_sha256 = provider_replay_class(ep->pe.provider) == REPLAY_SIGNED &&
						 vr.has_signed_sha256
					 ? vr.signed_sha256
					 : NULL,
	};
	FAILPOINT("fcgi-before-insert");
	o = (outcome){.status = 200, .secret_index = vr.secret_index};
	{
		store_outcome so;

		if (store_accept(h->st, &d, &so) != 0) {
			o = (outcome){.status = 503,
				      .what = "error",
				      .reason = "storage unavailable",
				      .id = -1,
				      .secret_index = vr.secret_index};
		} else {
			o.id = so.id;
			o.what = so.held ? "review" : so.duplicate ? "duplicate" : "accepted";
			sv->note = env.note; /* static texts only: safe to log */
			env.note = NULL;
			/* verified, stored: logged quoted */
			memcpy(sv->event_id, env.event_id, sizeof(sv->event_id));
			sv->event_id_unstored = so.duplicate && d.body_dedup;
		}
	}
	envelope_release(&env);
	FAILPOINT("fcgi-after-commit");
	return o;
}

/*
 * The web server's request id (X-Request-Id, from a proxy in front) when
 * it is a plain token: letters, digits and "-_.:", at most 64 bytes.
 * Anything else a peer sent is not logged.
 */
static const char *
upstream_request_id(const http_io *io)
{
	const char *v = io->param(io->ctx, "HTTP_X_REQUEST_ID");
	size_t n = 0;

	if (v == NULL || *v == '\0')
		return NULL;
	for (const char *p = v; *p; p++, n++)
		if (n == UPSTREAM_ID_MAX ||
		    !(isalnum((unsigned char)*p) || strchr("-_.:", *p) != NULL))
			return NULL;
	return v;
}

static atomic_ullong request_counter;

unsigned long long
handler_requests(void)
{
	return atomic_load(&request_counter);
}

void
handler_requests_resume(unsigned long long n)
{
	atomic_store(&request_counter, n);
}

/* "pid-n": unique per process and request, across the request threads */
static void
request_id(const handler *h, char *buf, size_t size)
{
	unsigned long long n = atomic_fetch_add(&request_counter, 1) + 1;

	snprintf(buf, size, "%ld-%llu", h->pid, n);
}

void
handler_serve(handler *h, const http_io *io)
{
	int64_t t0 = clock_mono_us();
	served sv = {0};
	outcome o = serve(h, io, &sv);
	const endpoint_conf *ep = sv.ep;
	char status[8], id[24], ms[24], idx[8], rid[48];
	int64_t elapsed_us;

	reply(io, &o, sv.answered ? &sv.answer : NULL,
	      ep != NULL && provider_bare_answers(ep->pe.provider));
	handshake_answer_release(&sv.answer);
	/* the responder's part of the request: from its parameters to the reply written */
	elapsed_us = clock_mono_us() - t0;
	count_duration(h, ep, o.what, o.status, (double)elapsed_us / 1e6);

	request_id(h, rid, sizeof(rid));
	snprintf(status, sizeof(status), "%d", o.status);
	snprintf(id, sizeof(id), "%" PRId64, o.id);
	snprintf(ms, sizeof(ms), "%.2f", (double)elapsed_us / 1000.0);
	snprintf(idx, sizeof(idx), "%d", o.secret_index);
	log_kv("request", "endpoint", ep ? ep->name : "(unknown)", "outcome", o.what, LOG_NUM,
	       "status", status, "reason", o.reason, LOG_NUM, "id", o.id >= 0 ? id : NULL, LOG_NUM,
	       "secret", o.secret_index >= 0 ? idx : NULL, "event_id",
	       sv.event_id_unstored ? NULL : envelope_or_null(sv.event_id), "request_event_id",
	       sv.event_id_unstored ? sv.event_id : NULL, "note", sv.note, LOG_NUM, "ms", ms,
	       "request_id", rid, "upstream_request_id", upstream_request_id(io), LOG_END);
	free(sv.note);
	/*
	 * refusals, storage failures (503) and duplicates: requests that store
	 * nothing new, by endpoint and reason (a handshake is counted where it
	 * is answered); the worker exports duplicates apart from refusals
	 */
	if (strcmp(o.what, "rejected") == 0 || o.status == 503)
		count_rejection(h, ep ? ep->name : "(unknown)", o.reason);
	else if (strcmp(o.what, "duplicate") == 0 && ep != NULL)
		count_rejection(h, ep->name, "duplicate");
}
