/* SPDX-License-Identifier: ISC */
/*
 * loadgen.c - the benchmark's load generator: signed Stripe-style webhook
 * deliveries over N keep-alive connections (libcurl multi), closed loop or
 * at a fixed rate.
 *
 * Each event n has one deterministic body of exactly --size bytes:
 *   {"id":"evt_<prefix>_<n>","object":"event","type":"invoice.paid",...,"pad":"<hex>"}
 * signed at send time with `Stripe-Signature: t=<now>,v1=<hex hmac-sha256
 * of "t.body">`.  A redelivery (--redeliver F) resends the identical body of
 * an event that already got a 2xx, with a fresh signature, as a provider
 * retry would.  Every 2xx is written to --out as
 * "n<TAB>id<TAB>dup<TAB>redelivery<TAB>start<TAB>latency" (start: us from
 * the run's start, latency: us from the intended start), so that the caller
 * can check each one against the inbox, and see when the slow ones came.
 *
 * Output: one line of key=value pairs on stdout (t0_us: the run's start
 * on CLOCK_MONOTONIC, to line --out up with other samples).  Exit: 0 ok,
 * 64 usage, 70 internal error.  The secret is read from a file, never an
 * argument.
 */
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sysexits.h>
#include <time.h>

#define TS_LEN 10     /* epoch seconds, ten digits until 2286 */
#define IDX_DIGITS 10 /* event number, zero-padded */
#define RESP_CAP 4096

typedef struct slot {
	CURL *easy;
	struct curl_slist *hdrs;
	char *buf;	   /* "<t>." then the body */
	size_t idx_off[2]; /* where the event number is written in the body */
	uint64_t idx;
	bool redelivery;
	bool busy;
	int64_t sched_us; /* intended start (rate mode) or actual start */
	char resp[RESP_CAP];
	size_t resp_len;
} slot;

typedef struct opts {
	const char *url;
	const char *prefix;
	const char *secret_file;
	const char *out;
	int conc;
	double duration;
	uint64_t max_requests;
	size_t size;
	double redeliver;
	double rate;
	long print_body; /* -1: off */
} opts;

static unsigned char secret[1024];
static size_t secret_len;

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL) {
		fprintf(stderr, "loadgen: out of memory\n");
		abort();
	}
	return p;
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL) {
		fprintf(stderr, "loadgen: out of memory\n");
		abort();
	}
	return p;
}

static int64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* xorshift, seeded: the redelivery choice is reproducible */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static int
read_secret(const char *path)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	if (fp == NULL) {
		fprintf(stderr, "loadgen: could not open \"%s\": %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(secret, 1, sizeof(secret) - 1, fp);
	fclose(fp);
	while (n > 0 && (secret[n - 1] == '\n' || secret[n - 1] == '\r'))
		n--;
	/* first line only: the responder tries every line, one is enough here */
	for (size_t i = 0; i < n; i++)
		if (secret[i] == '\n') {
			n = i;
			break;
		}
	if (n == 0) {
		fprintf(stderr, "loadgen: empty secret file \"%s\"\n", path);
		return -1;
	}
	secret_len = n;
	return 0;
}

/*
 * Build the body template of exactly size bytes into dst (size + 1 bytes);
 * offsets of the two event-number fields go to off[].  -1 if size is too
 * small for the envelope.
 */
static int
body_template(char *dst, size_t size, const char *prefix, size_t off[2])
{
	char head[512];
	static const char tail[] = "\"}}}";
	int n;
	size_t hl, pad;
	uint64_t r = 0x2545f4914f6cdd1dULL;

	n = snprintf(head, sizeof(head),
		     "{\"id\":\"evt_%s_%0*d\",\"object\":\"event\",\"type\":\"invoice.paid\","
		     "\"api_version\":\"2024-06-20\",\"created\":1700000000,\"livemode\":true,"
		     "\"data\":{\"object\":{\"id\":\"in_%s_%0*d\",\"object\":\"invoice\","
		     "\"currency\":\"eur\",\"amount_due\":4200,\"pad\":\"",
		     prefix, IDX_DIGITS, 0, prefix, IDX_DIGITS, 0);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -1;
	hl = (size_t)n;
	if (size < hl + sizeof(tail) - 1)
		return -1;
	memcpy(dst, head, hl);
	off[0] = (size_t)(strstr(head, "evt_") - head) + 4 + strlen(prefix) + 1;
	off[1] = (size_t)(strstr(head, "\"in_") - head) + 4 + strlen(prefix) + 1;
	/* hex padding from a fixed generator: about as compressible as real JSON is not */
	pad = size - hl - (sizeof(tail) - 1);
	for (size_t i = 0; i < pad; i++) {
		if (i % 16 == 0) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
		}
		dst[hl + i] = "0123456789abcdef"[(r >> ((i % 16) * 4)) & 15];
	}
	memcpy(dst + hl + pad, tail, sizeof(tail));
	return 0;
}

static void
put_index(char *body, const size_t off[2], uint64_t idx)
{
	char d[IDX_DIGITS + 1];

	snprintf(d, sizeof(d), "%0*" PRIu64, IDX_DIGITS, idx % UINT64_C(10000000000));
	memcpy(body + off[0], d, IDX_DIGITS);
	memcpy(body + off[1], d, IDX_DIGITS);
}

static size_t
on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	slot *s = userdata;
	size_t n = size * nmemb;
	size_t room = RESP_CAP - 1 - s->resp_len;

	memcpy(s->resp + s->resp_len, ptr, n < room ? n : room);
	s->resp_len += n < room ? n : room;
	return n;
}

/* sign and hand the slot's request to the multi handle */
static int
start(CURLM *multi, slot *s, const opts *o, uint64_t idx, bool redelivery, int64_t sched_us)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	char hdr[64 + 2 * EVP_MAX_MD_SIZE];
	char ts[TS_LEN + 2];
	char *body = s->buf + TS_LEN + 1;
	int off;

	snprintf(ts, sizeof(ts), "%010lld.", (long long)time(NULL));
	memcpy(s->buf, ts, TS_LEN + 1);
	put_index(body, s->idx_off, idx);
	if (HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)s->buf,
		 TS_LEN + 1 + o->size, mac, &mac_len) == NULL)
		return -1;
	off = snprintf(hdr, sizeof(hdr), "Stripe-Signature: t=%.*s,v1=", TS_LEN, s->buf);
	for (unsigned int i = 0; i < mac_len; i++)
		off += snprintf(hdr + off, sizeof(hdr) - (size_t)off, "%02x", mac[i]);

	curl_slist_free_all(s->hdrs);
	s->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	s->hdrs = curl_slist_append(s->hdrs, "Expect:");
	s->hdrs = curl_slist_append(s->hdrs,
				    "User-Agent: Stripe/1.0 (+https://stripe.com/docs/webhooks)");
	s->hdrs = curl_slist_append(s->hdrs, hdr);
	if (s->hdrs == NULL)
		return -1;
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->hdrs);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->size);
	s->idx = idx;
	s->redelivery = redelivery;
	s->busy = true;
	s->sched_us = sched_us;
	s->resp_len = 0;
	if (curl_multi_add_handle(multi, s->easy) != CURLM_OK)
		return -1;
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static double
pct(const uint32_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
		"Usage: loadgen -u URL -k SECRET_FILE [options]\n"
		"Signed Stripe-style webhook deliveries over keep-alive connections.\n\n"
		"  -u, --url URL          endpoint URL\n"
		"  -k, --secret-file F    endpoint secret (first line)\n"
		"  -c, --concurrency N    connections (default 1)\n"
		"  -d, --duration S       seconds to send for (default 5)\n"
		"  -n, --requests N       stop after N requests\n"
		"  -s, --size BYTES       body size (default 2048)\n"
		"  -p, --prefix TEXT      event id prefix, unique per run (default run)\n"
		"  -r, --redeliver F      fraction of requests that redeliver an event (0..1)\n"
		"  -R, --rate N           requests per second (default: closed loop)\n"
		"  -o, --out FILE         write every 2xx: n, id, duplicate, redelivery, start, latency\n"
		"      --print-body N     print the body of event N and exit\n"
		"  -h, --help             show this help\n\n"
		"Exit status: 0 ok, 64 usage error, 70 internal error.\n");
}

static int
parse_opts(int argc, char **argv, opts *o)
{
	static const struct option longopts[] = {
		{"url", required_argument, NULL, 'u'},
		{"secret-file", required_argument, NULL, 'k'},
		{"concurrency", required_argument, NULL, 'c'},
		{"duration", required_argument, NULL, 'd'},
		{"requests", required_argument, NULL, 'n'},
		{"size", required_argument, NULL, 's'},
		{"prefix", required_argument, NULL, 'p'},
		{"redeliver", required_argument, NULL, 'r'},
		{"rate", required_argument, NULL, 'R'},
		{"out", required_argument, NULL, 'o'},
		{"print-body", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	char *end;

	*o = (opts){.conc = 1, .duration = 5, .size = 2048, .prefix = "run", .print_body = -1};
	while ((c = getopt_long(argc, argv, "u:k:c:d:n:s:p:r:R:o:h", longopts, NULL)) != -1) {
		errno = 0;
		end = NULL;
		switch (c) {
		case 'u':
			o->url = optarg;
			break;
		case 'k':
			o->secret_file = optarg;
			break;
		case 'p':
			o->prefix = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'c':
			o->conc = (int)strtol(optarg, &end, 10);
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			break;
		case 'n':
			o->max_requests = strtoull(optarg, &end, 10);
			break;
		case 's':
			o->size = (size_t)strtoull(optarg, &end, 10);
			break;
		case 'r':
			o->redeliver = strtod(optarg, &end);
			break;
		case 'R':
			o->rate = strtod(optarg, &end);
			break;
		case 'B':
			o->print_body = strtol(optarg, &end, 10);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
		if (errno != 0 || (end != NULL && *end != '\0')) {
			fprintf(stderr, "loadgen: invalid value \"%s\"\n", optarg);
			return -1;
		}
	}
	if (optind < argc || o->conc < 1 || o->conc > 4096 || o->duration <= 0 || o->size < 300 ||
	    o->redeliver < 0 || o->redeliver > 1 || o->rate < 0 || strlen(o->prefix) > 40)
		return -1;
	if (o->print_body < 0 && (o->url == NULL || o->secret_file == NULL))
		return -1;
	return 0;
}

int main(int argc, char **argv);

int
main(int argc, char **argv)
{
	opts o;
	CURLM *multi;
	slot *slots;
	uint32_t *lat = NULL;
	size_t n_lat = 0, cap_lat = 0;
	uint64_t *good = NULL; /* event numbers that got a 2xx as new deliveries */
	size_t n_good = 0, cap_good = 0;
	uint64_t next_idx = 0, started = 0, st2xx = 0, st_other = 0, errors = 0, redelivered = 0;
	uint64_t dup_true = 0, dup_unexpected = 0, status_counts[6] = {0};
	int64_t t0, t_end, t_last = 0, next_sched;
	int in_flight = 0;
	FILE *out = NULL;
	struct rusage ru;
	int rc = EX_SOFTWARE;

	if (parse_opts(argc, argv, &o) != 0) {
		usage(stderr);
		return EX_USAGE;
	}
	if (o.print_body >= 0) {
		char *b = xmalloc(o.size + 1);
		size_t off[2];

		if (body_template(b, o.size, o.prefix, off) != 0)
			return EX_USAGE;
		put_index(b, off, (uint64_t)o.print_body);
		fwrite(b, 1, o.size, stdout);
		free(b);
		return 0;
	}
	if (read_secret(o.secret_file) != 0)
		return EX_USAGE;
	if (o.out != NULL && (out = fopen(o.out, "w")) == NULL) {
		fprintf(stderr, "loadgen: could not open \"%s\": %s\n", o.out, strerror(errno));
		return EX_USAGE;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return EX_SOFTWARE;
	multi = curl_multi_init();
	curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)o.conc);
	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o.conc);
	slots = calloc((size_t)o.conc, sizeof(*slots));
	if (slots == NULL)
		abort();
	for (int i = 0; i < o.conc; i++) {
		slot *s = &slots[i];

		s->buf = xmalloc(TS_LEN + 1 + o.size + 1);
		if (body_template(s->buf + TS_LEN + 1, o.size, o.prefix, s->idx_off) != 0) {
			fprintf(stderr, "loadgen: body size %zu too small\n", o.size);
			return EX_USAGE;
		}
		s->easy = curl_easy_init();
		curl_easy_setopt(s->easy, CURLOPT_URL, o.url);
		curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
		curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
		curl_easy_setopt(s->easy, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(s->easy, CURLOPT_TIMEOUT, 60L);
		curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
	}

	t0 = mono_us();
	t_end = t0 + (int64_t)(o.duration * 1e6);
	next_sched = t0;
	for (;;) {
		int64_t now = mono_us();
		bool sending = now < t_end && (o.max_requests == 0 || started < o.max_requests);
		int running, msgs, timeout_ms = 100;
		bool freed = false;
		CURLMsg *m;

		/* start what may start: a free connection, and in rate mode a due time */
		for (int i = 0; sending && i < o.conc; i++) {
			slot *s = &slots[i];
			bool redo;
			uint64_t idx;
			int64_t sched = now;

			if (s->busy)
				continue;
			if (o.rate > 0) {
				if (next_sched > now)
					break;
				sched = next_sched;
				next_sched = t0 + (int64_t)((double)(started + 1) * 1e6 / o.rate);
			}
			redo = n_good > 0 && o.redeliver > 0 &&
			       (double)(rng() % 1000000) < o.redeliver * 1e6;
			idx = redo ? good[rng() % n_good] : next_idx++;
			if (start(multi, s, &o, idx, redo, sched) != 0) {
				fprintf(stderr, "loadgen: could not start a request\n");
				goto out;
			}
			started++;
			redelivered += redo;
			in_flight++;
			if (o.max_requests != 0 && started >= o.max_requests)
				break;
		}
		if (!sending && in_flight == 0)
			break;
		if (o.rate > 0 && sending) {
			/* rounded up: sleep rather than spin for the next start */
			int64_t wait = (next_sched - mono_us() + 999) / 1000;

			timeout_ms = wait < 0 ? 0 : wait < 100 ? (int)wait : 100;
		}
		curl_multi_perform(multi, &running);
		while ((m = curl_multi_info_read(multi, &msgs)) != NULL) {
			slot *s;
			long code = 0;
			int64_t done = mono_us();

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
			curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
			curl_multi_remove_handle(multi, m->easy_handle);
			s->busy = false;
			freed = true;
			in_flight--;
			t_last = done;
			if (m->data.result != CURLE_OK) {
				if (errors++ < 5)
					fprintf(stderr, "loadgen: %s\n",
						curl_easy_strerror(m->data.result));
				continue;
			}
			if (n_lat == cap_lat) {
				cap_lat = cap_lat ? cap_lat * 2 : 65536;
				lat = xrealloc(lat, cap_lat * sizeof(*lat));
			}
			lat[n_lat++] = (uint32_t)(done - s->sched_us);
			if (code >= 100 && code < 600)
				status_counts[code / 100]++;
			if (code >= 200 && code < 300) {
				const char *p;
				long long id = -1;
				bool dup;

				st2xx++;
				s->resp[s->resp_len] = '\0';
				p = strstr(s->resp, "\"id\":");
				if (p != NULL)
					id = strtoll(p + 5, NULL, 10);
				dup = strstr(s->resp, "\"duplicate\":true") != NULL;
				dup_true += dup;
				if (dup != s->redelivery)
					dup_unexpected++;
				if (out != NULL)
					fprintf(out, "%" PRIu64 "\t%lld\t%d\t%d\t%lld\t%lld\n",
						s->idx, id, dup, s->redelivery,
						(long long)(s->sched_us - t0),
						(long long)(done - s->sched_us));
				if (!s->redelivery) {
					if (n_good == cap_good) {
						cap_good = cap_good ? cap_good * 2 : 65536;
						good = xrealloc(good, cap_good * sizeof(*good));
					}
					good[n_good++] = s->idx;
				}
			} else {
				st_other++;
				if (st_other <= 3) {
					s->resp[s->resp_len] = '\0';
					fprintf(stderr, "loadgen: status %ld: %.200s\n", code,
						s->resp);
				}
			}
		}
		/* a freed connection is reused at once in closed-loop mode */
		if ((freed && o.rate <= 0 && sending) || (in_flight == 0 && !sending))
			continue;
		if (in_flight > 0 || (o.rate > 0 && sending))
			curl_multi_poll(multi, NULL, 0, timeout_ms, NULL);
	}

	qsort(lat, n_lat, sizeof(*lat), cmp_u32);
	getrusage(RUSAGE_SELF, &ru);
	{
		double elapsed = (double)((t_last > t0 ? t_last : mono_us()) - t0) / 1e6;

		printf("requests=%" PRIu64 " completed=%zu ok=%" PRIu64 " other=%" PRIu64
		       " errors=%" PRIu64 " s4xx=%" PRIu64 " s5xx=%" PRIu64 " redeliveries=%" PRIu64
		       " dup_true=%" PRIu64 " dup_unexpected=%" PRIu64 " elapsed=%.3f rps=%.1f"
		       " p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f cpu_s=%.3f t0_us=%lld\n",
		       started, n_lat, st2xx, st_other, errors, status_counts[4], status_counts[5],
		       redelivered, dup_true, dup_unexpected, elapsed, (double)n_lat / elapsed,
		       pct(lat, n_lat, 0.50), pct(lat, n_lat, 0.90), pct(lat, n_lat, 0.99),
		       pct(lat, n_lat, 1.0),
		       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
			       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
		       (long long)t0);
	}
	rc = 0;
out:
	if (out != NULL && fclose(out) != 0) {
		fprintf(stderr, "loadgen: could not write \"%s\": %s\n", o.out, strerror(errno));
		rc = EX_SOFTWARE;
	}
	for (int i = 0; i < o.conc; i++) {
		if (slots[i].busy)
			curl_multi_remove_handle(multi, slots[i].easy);
		curl_easy_cleanup(slots[i].easy);
		curl_slist_free_all(slots[i].hdrs);
		free(slots[i].buf);
	}
	free(slots);
	free(lat);
	free(good);
	curl_multi_cleanup(multi);
	curl_global_cleanup();
	OPENSSL_cleanse(secret, sizeof(secret));
	return rc;
}
