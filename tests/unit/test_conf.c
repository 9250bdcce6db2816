/* SPDX-License-Identifier: ISC */
/*
 * test_conf.c - the configuration's specification: text in, the values
 * read or "file:line: message" out
 *
 * Every key of conf.c's table has a case with a good value (and the value
 * it is read as), every number its bounds and the values just outside
 * them, every enumeration a bad name; then the defaults, the structure of
 * the file (unknown, twice, syntax) and the checks across keys.  A key
 * added to the table without a case here fails the first test.
 *
 * A case's key goes into the base file below, into its section (replacing
 * the base's line of that key), so its messages come at a known line.
 */
#include "conf.h"
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void);

static char dir[] = "/tmp/hookinbox-test-conf-XXXXXX";
static char path[sizeof(dir) + 32];

/* the base file: every section once, endpoint "a" and route "r" complete */
static const char *const base[] = {
	"[database]",
	"conninfo = dbname=x",
	"[intake]",
	"[log]",
	"[worker]",
	"[endpoint a]",
	"provider = stripe",
	"secret_file = secrets",
	"[route r]",
	"endpoint = a",
	"url = http://example.com/hook",
};
#define N_BASE (sizeof(base) / sizeof(base[0]))

static void
write_file(const char *name, const char *text, mode_t mode)
{
	char p[sizeof(dir) + 32];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fp = fopen(p, "w");
	if (fp == NULL || fputs(text, fp) < 0 || fclose(fp) != 0 || chmod(p, mode) != 0) {
		perror(p);
		exit(2);
	}
}

static conf *
load_text(const char *text, conf_program prog, char *err, size_t errlen)
{
	write_file("hookinbox.conf", text, 0600);
	err[0] = '\0';
	return conf_load_for(path, prog, err, errlen);
}

/* the base file with "key = value" in [section]: its text, and in *line its line */
static char *
with_key(const char *section, const char *key, const char *value, int *line)
{
	static char text[65536];
	char header[128], prefix[128];
	size_t used = 0;
	bool in = false, done = false;

	snprintf(header, sizeof(header), "[%s]", section);
	snprintf(prefix, sizeof(prefix), "%s = ", key);
	text[0] = '\0';
	for (size_t i = 0; i < N_BASE; i++) {
		bool header_line = base[i][0] == '[';

		if (header_line && in && !done) {
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s = %s\n", key,
						 value);
			*line = (int)i + 1;
			done = true;
		}
		if (header_line)
			in = strcmp(base[i], header) == 0;
		if (in && !done && strncmp(base[i], prefix, strlen(prefix)) == 0) {
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s = %s\n", key,
						 value);
			*line = (int)i + 1;
			done = true;
			continue;
		}
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s\n", base[i]);
	}
	if (in && !done) {
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s = %s\n", key, value);
		*line = (int)N_BASE + 1;
	}
	return text;
}

static const char *const algs[] =
	{[HMAC_SHA1] = "sha1", [HMAC_SHA256] = "sha256", [HMAC_SHA512] = "sha512"};

static void put(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
put(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static const char *
str(const char *s)
{
	return s != NULL ? s : "(unset)";
}

static void
words(char *buf, size_t len, const char *name, char *const *w, size_t n)
{
	put(buf, len, "route.%s=", name);
	for (size_t i = 0; i < n; i++)
		put(buf, len, "%s%s", i > 0 ? "," : "", w[i]);
	put(buf, len, "\n");
}

/*
 * What c holds, one "section.key=value" line per key (endpoint "a", route
 * "r"): what a program reading the file sees
 */
static void
dump(const conf *c, char *buf, size_t len)
{
	const worker_conf *w = conf_worker(c);
	const endpoint_conf *ep = conf_endpoint(c, "a");
	const route_conf *r = conf_route(c, "r");

	buf[0] = '\0';
	put(buf, len, "database.conninfo=%s\n", conf_conninfo(c));
	put(buf, len, "worker.conninfo=%s\n", conf_worker_conninfo_set(c) ? "set" : "(unset)");
	put(buf, len, "log.format=%s\n", conf_log_format(c));
	put(buf, len, "intake.threads=%d\n", conf_threads(c));
	put(buf, len, "intake.lock_timeout=%d\n", conf_lock_timeout_ms(c));
	put(buf, len, "intake.statement_timeout=%d\n", conf_statement_timeout_ms(c));
	put(buf, len,
	    "worker.concurrency=%d\nworker.batch=%d\nworker.lease=%d\nworker.claim_ahead=%d\n"
	    "worker.backoff_base=%d\nworker.backoff_cap=%d\nworker.retry_window=%d\n"
	    "worker.metrics_file=%s\nworker.health_max_pending_age=%d\n"
	    "worker.health_max_parked_age=%d\n",
	    w->concurrency, w->batch, w->lease, w->claim_ahead, w->backoff_base, w->backoff_cap,
	    w->retry_window, str(w->metrics_file), w->health_max_pending_age,
	    w->health_max_parked_age);
	if (ep != NULL) {
		/* [intake] max_body and tolerance are read through the endpoints */
		put(buf, len, "endpoint.provider=%s\n", provider_name(ep->pe.provider));
		put(buf, len, "endpoint.secret_file=%s\nendpoint.account=%s\n",
		    str(ep->secret_file), str(ep->account));
		put(buf, len, "endpoint.environment=%s\nendpoint.public_url=%s\n",
		    str(ep->environment), str(ep->pe.public_url));
		put(buf, len, "endpoint.max_body=%zu\nendpoint.tolerance=%lld\n", ep->max_body,
		    (long long)ep->pe.tolerance);
		put(buf, len, "endpoint.secrets=%zu\n",
		    ep->pe.secrets != NULL ? secret_count(ep->pe.secrets) : 0);
		put(buf, len, "endpoint.header=%s\nendpoint.algorithm=%s\n",
		    str(ep->pe.hmac.header), algs[ep->pe.hmac.alg]);
		put(buf, len, "endpoint.encoding=%s\nendpoint.prefix=%s\n",
		    ep->pe.hmac.enc == HMAC_HEX ? "hex" : "base64", str(ep->pe.hmac.prefix));
		put(buf, len, "endpoint.id_header=%s\nendpoint.id_field=%s\n",
		    str(ep->pe.hmac.id_header), str(ep->pe.hmac.id_field));
		put(buf, len, "endpoint.type_header=%s\nendpoint.type_field=%s\n",
		    str(ep->pe.hmac.type_header), str(ep->pe.hmac.type_field));
		put(buf, len, "endpoint.object_field=%s\nendpoint.version_field=%s\n",
		    str(ep->pe.hmac.object_field), str(ep->pe.hmac.version_field));
		put(buf, len, "endpoint.signed_content=%s\nendpoint.timestamp_header=%s\n",
		    str(ep->pe.hmac.signed_content), str(ep->pe.hmac.timestamp_header));
		put(buf, len, "endpoint.timestamp_unit=%s\n",
		    ep->pe.hmac.ts_unit == HMAC_SECONDS ? "seconds" : "milliseconds");
		put(buf, len, "endpoint.key_file=%s\nendpoint.ca_file=%s\n", str(ep->pe.key_file),
		    str(ep->pe.ca_file));
		put(buf, len, "endpoint.cert_cache=%s\nendpoint.audience=%s\n",
		    str(ep->pe.cert_cache), str(ep->pe.audience));
	}
	if (r != NULL) {
		words(buf, len, "endpoint", r->endpoints, r->n_endpoints);
		words(buf, len, "events", r->events, r->n_events);
		put(buf, len, "route.url=%s\nroute.handler=%s\nroute.secret_file=%s\n", str(r->url),
		    str(r->handler), str(r->secret_file));
		put(buf, len, "route.secrets=%zu\n",
		    r->secrets != NULL ? secret_count(r->secrets) : 0);
		put(buf, len, "route.timeout=%d\nroute.max_attempts=%d\n", r->timeout,
		    r->max_attempts);
		put(buf, len, "route.order=%s\nroute.key=%s\n",
		    r->order == ROUTE_ORDER_NONE     ? "none"
		    : r->order == ROUTE_ORDER_OBJECT ? "newest"
						     : "sequence",
		    r->key == ROUTE_KEY_EVENT ? "event" : "object-type");
		put(buf, len, "route.response_ref_header=%s\nroute.reconcile_url=%s\n",
		    str(r->response_ref_header), str(r->reconcile_url));
		put(buf, len, "route.response_ref_field=%s\n", str(r->response_ref_field));
		put(buf, len, "route.concurrency=%d\nroute.rate=%g\n", r->concurrency, r->rate);
		put(buf, len, "route.breaker_failures=%d\nroute.breaker_cooldown=%d\n",
		    r->breaker_failures, r->breaker_cooldown);
	}
}

/* buf has the line "want" */
static bool
has_line(const char *buf, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = buf; (p = strstr(p, want)) != NULL; p++)
		if ((p == buf || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/*
 * One key in its section: a good value and what it reads as, or a bad
 * value and the message at the key's line.  The section "intake" is
 * dumped through endpoint "a" for max_body and tolerance.
 */
typedef struct key_case {
	const char *section, *key, *value;
	const char *want; /* good: "section.key=value" as dumped; NULL: bad */
	const char *msg;  /* bad: the message after "file:line: " */
} key_case;

#define GOOD(s, k, v, w)                                                                           \
	{                                                                                          \
		s, k, v, w, NULL                                                                   \
	}
#define BAD(s, k, v, m)                                                                            \
	{                                                                                          \
		s, k, v, NULL, m                                                                   \
	}

static const key_case key_cases[] = {
	/* [database] */
	GOOD("database", "conninfo", "host=/tmp dbname=hooks",
	     "database.conninfo=host=/tmp dbname=hooks"),
	GOOD("database", "conninfo", "postgresql://u@h/db",
	     "database.conninfo=postgresql://u@h/db"),
	BAD("database", "conninfo", "host=x 'port",
	    "[database] conninfo cannot be parsed by libpq (key=value pairs or a postgresql:// URI)"),
	BAD("database", "conninfo", "nokey=1 password=sekrit",
	    "[database] conninfo cannot be parsed by libpq (key=value pairs or a postgresql:// URI)"),

	/* [intake] */
	GOOD("intake", "max_body", "1", "endpoint.max_body=1"),
	GOOD("intake", "max_body", "67108864", "endpoint.max_body=67108864"),
	BAD("intake", "max_body", "0", "max_body must be an integer between 1 and 67108864"),
	BAD("intake", "max_body", "67108865", "max_body must be an integer between 1 and 67108864"),
	BAD("intake", "max_body", "1k", "max_body must be an integer between 1 and 67108864"),
	BAD("intake", "max_body", "+5", "max_body must be an integer between 1 and 67108864"),
	GOOD("intake", "threads", "1", "intake.threads=1"),
	GOOD("intake", "threads", "256", "intake.threads=256"),
	BAD("intake", "threads", "0", "threads must be an integer between 1 and 256"),
	BAD("intake", "threads", "257", "threads must be an integer between 1 and 256"),
	GOOD("intake", "lock_timeout", "1", "intake.lock_timeout=1"),
	GOOD("intake", "lock_timeout", "600000", "intake.lock_timeout=600000"),
	BAD("intake", "lock_timeout", "0",
	    "lock_timeout must be a number of milliseconds between 1 and 600000"),
	BAD("intake", "lock_timeout", "600001",
	    "lock_timeout must be a number of milliseconds between 1 and 600000"),
	GOOD("intake", "statement_timeout", "1", "intake.statement_timeout=1"),
	GOOD("intake", "statement_timeout", "600000", "intake.statement_timeout=600000"),
	BAD("intake", "statement_timeout", "0",
	    "statement_timeout must be a number of milliseconds between 1 and 600000"),
	BAD("intake", "statement_timeout", "1.5",
	    "statement_timeout must be a number of milliseconds between 1 and 600000"),
	GOOD("intake", "tolerance", "1", "endpoint.tolerance=1"),
	GOOD("intake", "tolerance", "604800", "endpoint.tolerance=604800"),
	BAD("intake", "tolerance", "0",
	    "tolerance must be a number of seconds between 1 and 604800"),
	BAD("intake", "tolerance", "604801",
	    "tolerance must be a number of seconds between 1 and 604800"),

	/* [log] */
	GOOD("log", "format", "text", "log.format=text"),
	GOOD("log", "format", "json", "log.format=json"),
	BAD("log", "format", "xml", "log format must be text or json, not \"xml\""),
	BAD("log", "format", "JSON", "log format must be text or json, not \"JSON\""),

	/* [worker] */
	GOOD("worker", "conninfo", "dbname=w", "worker.conninfo=set"),
	BAD("worker", "conninfo", "dbname",
	    "[worker] conninfo cannot be parsed by libpq (key=value pairs or a postgresql:// URI)"),
	GOOD("worker", "concurrency", "1", "worker.concurrency=1"),
	GOOD("worker", "concurrency", "1024", "worker.concurrency=1024"),
	BAD("worker", "concurrency", "0", "concurrency must be an integer between 1 and 1024"),
	BAD("worker", "concurrency", "1025", "concurrency must be an integer between 1 and 1024"),
	GOOD("worker", "batch", "1", "worker.batch=1"),
	GOOD("worker", "batch", "10000", "worker.batch=10000"),
	BAD("worker", "batch", "0", "batch must be an integer between 1 and 10000"),
	BAD("worker", "batch", "10001", "batch must be an integer between 1 and 10000"),
	GOOD("worker", "lease", "11", "worker.lease=11"),
	GOOD("worker", "lease", "86400", "worker.lease=86400"),
	BAD("worker", "lease", "4", "lease must be an integer between 5 and 86400"),
	BAD("worker", "lease", "86401", "lease must be an integer between 5 and 86400"),
	GOOD("worker", "claim_ahead", "0", "worker.claim_ahead=0"),
	GOOD("worker", "claim_ahead", "2", "worker.claim_ahead=2"),
	BAD("worker", "claim_ahead", "-1", "claim_ahead must be an integer between 0 and 2"),
	BAD("worker", "claim_ahead", "3", "claim_ahead must be an integer between 0 and 2"),
	GOOD("worker", "backoff_base", "1", "worker.backoff_base=1"),
	GOOD("worker", "backoff_base", "86400", "worker.backoff_base=86400"),
	BAD("worker", "backoff_base", "0", "backoff_base must be an integer between 1 and 86400"),
	BAD("worker", "backoff_base", "86401",
	    "backoff_base must be an integer between 1 and 86400"),
	GOOD("worker", "backoff_cap", "1", "worker.backoff_cap=1"),
	GOOD("worker", "backoff_cap", "86400", "worker.backoff_cap=86400"),
	BAD("worker", "backoff_cap", "0", "backoff_cap must be an integer between 1 and 86400"),
	BAD("worker", "backoff_cap", "86401", "backoff_cap must be an integer between 1 and 86400"),
	GOOD("worker", "retry_window", "60", "worker.retry_window=60"),
	GOOD("worker", "retry_window", "2592000", "worker.retry_window=2592000"),
	BAD("worker", "retry_window", "59",
	    "retry_window must be an integer between 60 and 2592000"),
	BAD("worker", "retry_window", "2592001",
	    "retry_window must be an integer between 60 and 2592000"),
	GOOD("worker", "metrics_file", "/var/lib/x.prom", "worker.metrics_file=/var/lib/x.prom"),
	GOOD("worker", "health_max_pending_age", "1", "worker.health_max_pending_age=1"),
	GOOD("worker", "health_max_pending_age", "31536000",
	     "worker.health_max_pending_age=31536000"),
	BAD("worker", "health_max_pending_age", "0",
	    "health_max_pending_age must be an integer between 1 and 31536000"),
	BAD("worker", "health_max_pending_age", "31536001",
	    "health_max_pending_age must be an integer between 1 and 31536000"),
	GOOD("worker", "health_max_parked_age", "1", "worker.health_max_parked_age=1"),
	GOOD("worker", "health_max_parked_age", "31536000",
	     "worker.health_max_parked_age=31536000"),
	BAD("worker", "health_max_parked_age", "0",
	    "health_max_parked_age must be an integer between 1 and 31536000"),
	BAD("worker", "health_max_parked_age", "31536001",
	    "health_max_parked_age must be an integer between 1 and 31536000"),

	/* [endpoint NAME] */
	GOOD("endpoint a", "provider", "github", "endpoint.provider=github"),
	GOOD("endpoint a", "provider", "gitlab", "endpoint.provider=gitlab"),
	BAD("endpoint a", "provider", "Stripe",
	    "unknown provider \"Stripe\" (stripe, github, standard, svix, hmac, shopify, slack, paddle, twilio, gitlab, square, "
	    "adyen_platform, linear, mux, workos, razorpay, discord, zoom, telnyx, intercom, "
	    "bitbucket, typeform, calendly, woocommerce, sentry, pagerduty, vercel, checkout, "
	    "lemonsqueezy, notion, postmark, chargebee, box, webflow, gocardless, meta, clerk, resend, okta, zendesk, "
	    "adyen, sendgrid, hubspot, mailgun, "
	    "braintree, trello, mandrill, twitter, dropbox, asana, twitch, xero, docusign, "
	    "plaid, pubsub, paypal, sns, apple, graph)"),
	GOOD("endpoint a", "secret_file", "secrets", "endpoint.secrets=2"),
	GOOD("endpoint a", "account", "acct_1", "endpoint.account=acct_1"),
	GOOD("endpoint a", "environment", "live", "endpoint.environment=live"),
	GOOD("endpoint a", "public_url", "https://example.com/a",
	     "endpoint.public_url=https://example.com/a"),
	GOOD("endpoint a", "max_body", "1", "endpoint.max_body=1"),
	GOOD("endpoint a", "max_body", "67108864", "endpoint.max_body=67108864"),
	BAD("endpoint a", "max_body", "0", "max_body must be an integer between 1 and 67108864"),
	BAD("endpoint a", "max_body", "67108865",
	    "max_body must be an integer between 1 and 67108864"),
	GOOD("endpoint a", "tolerance", "1", "endpoint.tolerance=1"),
	GOOD("endpoint a", "tolerance", "604800", "endpoint.tolerance=604800"),
	BAD("endpoint a", "tolerance", "0",
	    "tolerance must be a number of seconds between 1 and 604800"),
	BAD("endpoint a", "tolerance", "604801",
	    "tolerance must be a number of seconds between 1 and 604800"),
	GOOD("endpoint a", "header", "X-Signature", "endpoint.header=X-Signature"),
	GOOD("endpoint a", "algorithm", "sha1", "endpoint.algorithm=sha1"),
	GOOD("endpoint a", "algorithm", "sha512", "endpoint.algorithm=sha512"),
	BAD("endpoint a", "algorithm", "md5",
	    "algorithm must be sha256, sha1 or sha512, not \"md5\""),
	GOOD("endpoint a", "encoding", "base64", "endpoint.encoding=base64"),
	BAD("endpoint a", "encoding", "b64", "encoding must be hex or base64, not \"b64\""),
	GOOD("endpoint a", "prefix", "sha256=", "endpoint.prefix=sha256="),
	GOOD("endpoint a", "id_header", "X-Event-Id", "endpoint.id_header=X-Event-Id"),
	GOOD("endpoint a", "id_field", "data.id", "endpoint.id_field=data.id"),
	GOOD("endpoint a", "type_header", "X-Event-Type", "endpoint.type_header=X-Event-Type"),
	GOOD("endpoint a", "type_field", "type", "endpoint.type_field=type"),
	GOOD("endpoint a", "object_field", "data.object.id",
	     "endpoint.object_field=data.object.id"),
	GOOD("endpoint a", "version_field", "created", "endpoint.version_field=created"),
	GOOD("endpoint a", "signed_content", "v0:{timestamp}:{body}",
	     "endpoint.signed_content=v0:{timestamp}:{body}"),
	GOOD("endpoint a", "signed_content", "{header:X-Id}.{method} {url}{{x}}{body}",
	     "endpoint.signed_content={header:X-Id}.{method} {url}{{x}}{body}"),
	BAD("endpoint a", "signed_content", "{timestamp}.{bdy}",
	    "signed_content: unknown placeholder {bdy} (body, timestamp, header:Name, method, url; "
	    "{{ and }} for braces)"),
	BAD("endpoint a", "signed_content", "{timestamp}", "signed_content: must sign {body}"),
	BAD("endpoint a", "signed_content", "{body", "signed_content: '{' at byte 1 is not closed"),
	GOOD("endpoint a", "timestamp_header", "X-Timestamp",
	     "endpoint.timestamp_header=X-Timestamp"),
	BAD("endpoint a", "timestamp_header", "X Timestamp",
	    "timestamp_header must be a header name (letters, digits, '-', '_')"),
	GOOD("endpoint a", "timestamp_unit", "milliseconds",
	     "endpoint.timestamp_unit=milliseconds"),
	BAD("endpoint a", "timestamp_unit", "ms",
	    "timestamp_unit must be seconds or milliseconds, not \"ms\""),
	GOOD("endpoint a", "key_file", "/etc/hookinbox/google.jwks",
	     "endpoint.key_file=/etc/hookinbox/google.jwks"),
	GOOD("endpoint a", "ca_file", "/etc/ssl/certs/ca-certificates.crt",
	     "endpoint.ca_file=/etc/ssl/certs/ca-certificates.crt"),
	GOOD("endpoint a", "cert_cache", "/var/cache/hookinbox/certs",
	     "endpoint.cert_cache=/var/cache/hookinbox/certs"),
	GOOD("endpoint a", "audience", "https://hooks.example.com/in/ps",
	     "endpoint.audience=https://hooks.example.com/in/ps"),

	/* [route NAME] */
	GOOD("route r", "endpoint", "a", "route.endpoint=a"),
	GOOD("route r", "endpoint", "a, a", "route.endpoint=a,a"),
	GOOD("route r", "endpoints", "a", "route.endpoint=a"),
	GOOD("route r", "events", "charge.* invoice.paid,push",
	     "route.events=charge.*,invoice.paid,push"),
	GOOD("route r", "url", "https://example.com/x", "route.url=https://example.com/x"),
	BAD("route r", "url", "ftp://example.com/", "url must start with http:// or https://"),
	BAD("route r", "handler", "app.fn",
	    "handler must be sql:schema.function (lower-case identifiers)"),
	BAD("route r", "handler", "sql:App.fn",
	    "handler must be sql:schema.function (lower-case identifiers)"),
	BAD("route r", "handler", "sql:app",
	    "handler must be sql:schema.function (lower-case identifiers)"),
	BAD("route r", "handler", "sql:a.b.c",
	    "handler must be sql:schema.function (lower-case identifiers)"),
	BAD("route r", "handler", "sql:a.1b",
	    "handler must be sql:schema.function (lower-case identifiers)"),
	GOOD("route r", "secret_file", "secrets", "route.secrets=2"),
	GOOD("route r", "timeout", "1", "route.timeout=1"),
	GOOD("route r", "timeout", "59", "route.timeout=59"),
	BAD("route r", "timeout", "0", "timeout must be a number of seconds between 1 and 3600"),
	BAD("route r", "timeout", "3601", "timeout must be a number of seconds between 1 and 3600"),
	GOOD("route r", "max_attempts", "1", "route.max_attempts=1"),
	GOOD("route r", "max_attempts", "100", "route.max_attempts=100"),
	BAD("route r", "max_attempts", "0", "max_attempts must be an integer between 1 and 100"),
	BAD("route r", "max_attempts", "101", "max_attempts must be an integer between 1 and 100"),
	GOOD("route r", "order", "none", "route.order=none"),
	GOOD("route r", "order", "newest", "route.order=newest"),
	GOOD("route r", "order", "object", "route.order=newest"), /* the older name */
	GOOD("route r", "order", "sequence", "route.order=sequence"),
	BAD("route r", "order", "oldest", "order must be none, newest or sequence, not \"oldest\""),
	GOOD("route r", "key", "event", "route.key=event"),
	GOOD("route r", "key", "object-type", "route.key=object-type"),
	BAD("route r", "key", "object", "key must be event or object-type, not \"object\""),
	GOOD("route r", "response_ref_header", "X-Ref_1", "route.response_ref_header=X-Ref_1"),
	BAD("route r", "response_ref_header", "X Ref",
	    "response_ref_header must be a header name (letters, digits, '-', '_')"),
	GOOD("route r", "response_ref_field", "data.order_id",
	     "route.response_ref_field=data.order_id"),
	BAD("route r", "response_ref_field", "data..id",
	    "response_ref_field must be a dotted path of JSON keys (letters, digits, '_', '-'), "
	    "such as data.id"),
	BAD("route r", "response_ref_field", "id.",
	    "response_ref_field must be a dotted path of JSON keys (letters, digits, '_', '-'), "
	    "such as data.id"),
	GOOD("route r", "reconcile_url", "https://example.com/status/{key}",
	     "route.reconcile_url=https://example.com/status/{key}"),
	BAD("route r", "reconcile_url", "https://example.com/status",
	    "reconcile_url must start with http:// or https:// and hold {key}"),
	BAD("route r", "reconcile_url", "ftp://x/{key}",
	    "reconcile_url must start with http:// or https:// and hold {key}"),
	GOOD("route r", "concurrency", "1", "route.concurrency=1"),
	GOOD("route r", "concurrency", "1000", "route.concurrency=1000"),
	BAD("route r", "concurrency", "0", "concurrency must be an integer between 1 and 1000"),
	BAD("route r", "concurrency", "1001", "concurrency must be an integer between 1 and 1000"),
	GOOD("route r", "rate", "0", "route.rate=0"),
	GOOD("route r", "rate", "100000", "route.rate=100000"),
	BAD("route r", "rate", "-1",
	    "rate must be a number of calls per second between 0 and 100000"),
	BAD("route r", "rate", "0.5",
	    "rate must be a number of calls per second between 0 and 100000"),
	GOOD("route r", "breaker_failures", "0", "route.breaker_failures=0"),
	GOOD("route r", "breaker_failures", "1000", "route.breaker_failures=1000"),
	BAD("route r", "breaker_failures", "1001",
	    "breaker_failures must be an integer between 0 and 1000"),
	GOOD("route r", "breaker_cooldown", "1", "route.breaker_cooldown=1"),
	GOOD("route r", "breaker_cooldown", "86400", "route.breaker_cooldown=86400"),
	BAD("route r", "breaker_cooldown", "0",
	    "breaker_cooldown must be a number of seconds between 1 and 86400"),
	BAD("route r", "breaker_cooldown", "86401",
	    "breaker_cooldown must be a number of seconds between 1 and 86400"),
};
#define N_KEY_CASES (sizeof(key_cases) / sizeof(key_cases[0]))

/* what the base file reads as: every default */
static const char *const defaults[] = {
	"database.conninfo=dbname=x",
	"worker.conninfo=(unset)",
	"log.format=text",
	"intake.threads=1",
	"intake.lock_timeout=1000",
	"intake.statement_timeout=2000",
	"worker.concurrency=16",
	"worker.batch=100",
	"worker.lease=60",
	"worker.claim_ahead=2", /* unset: the most rounds that fit the lease, at most 2 */
	"worker.backoff_base=5",
	"worker.backoff_cap=7200",
	"worker.retry_window=72000",
	"worker.metrics_file=(unset)",
	"worker.health_max_pending_age=900",
	"worker.health_max_parked_age=86400",
	"endpoint.provider=stripe",
	"endpoint.secret_file=secrets",
	"endpoint.account=a", /* the endpoint's name */
	"endpoint.environment=default",
	"endpoint.public_url=(unset)",
	"endpoint.max_body=1048576", /* [intake] max_body */
	"endpoint.tolerance=0",	     /* [intake] tolerance, unset: the provider's */
	"endpoint.secrets=2",
	"endpoint.header=(unset)",
	"endpoint.algorithm=sha256",
	"endpoint.encoding=hex",
	"endpoint.prefix=(unset)",
	"endpoint.id_header=(unset)",
	"endpoint.id_field=(unset)",
	"endpoint.type_header=(unset)",
	"endpoint.type_field=(unset)",
	"endpoint.object_field=(unset)",
	"endpoint.version_field=(unset)",
	"endpoint.signed_content=(unset)",
	"endpoint.timestamp_header=(unset)",
	"endpoint.timestamp_unit=seconds",
	"endpoint.key_file=(unset)",
	"endpoint.ca_file=(unset)",
	"endpoint.cert_cache=(unset)",
	"endpoint.audience=(unset)",
	"route.endpoint=a",
	"route.events=*",
	"route.url=http://example.com/hook",
	"route.handler=(unset)",
	"route.secret_file=(unset)",
	"route.secrets=0",
	"route.timeout=10",
	"route.max_attempts=12",
	"route.order=none",
	"route.key=event",
	"route.response_ref_header=(unset)", /* the worker keeps X-Request-Id */
	"route.reconcile_url=(unset)",
	"route.response_ref_field=(unset)",
	"route.concurrency=0", /* unset: a share of the worker's (worker/gate.c) */
	"route.rate=0",
	"route.breaker_failures=5",
	"route.breaker_cooldown=30",
};

/* a whole file and what it reads as: a dumped line, or "LINE: message" / ": message" */
typedef struct text_case {
	const char *name;
	conf_program prog;
	const char *text;
	const char *want; /* a line of the dump; NULL: bad */
	const char *msg;  /* bad: what follows the file name and ':' */
} text_case;

#define DB "[database]\nconninfo = dbname=x\n"
#define EP "[endpoint a]\nprovider = stripe\nsecret_file = secrets\n"
#define RT "[route r]\nendpoint = a\n"

static const text_case text_cases[] = {
	/* the file's structure */
	{"an empty file", CONF_ALL, "", NULL, " [database] conninfo is not set"},
	{"comments and blank lines", CONF_ALL, "; c\n# c\n\n" DB, "database.conninfo=dbname=x",
	 NULL},
	{"blanks around = and an inline comment", CONF_ALL, "[database]\n  conninfo=dbname=y ; c\n",
	 "database.conninfo=dbname=y", NULL},
	{"a colon for =", CONF_ALL, "[database]\nconninfo: dbname=y\n",
	 "database.conninfo=dbname=y", NULL},
	{"a line longer than libinih's buffer", CONF_ALL,
	 "[database]\nconninfo = dbname=x application_name="
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaa ; comment\n",
	 "database.conninfo=dbname=x application_name="
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaa",
	 NULL},
	{"a line without =", CONF_ALL, DB "garbage\n", NULL,
	 "3: syntax error (expected [section] or key = value)"},
	{"a long line without =", CONF_ALL,
	 DB
	 "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"
	 "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"
	 "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg\n",
	 NULL, "3: syntax error (expected [section] or key = value)"},
	{"a section name too long", CONF_ALL,
	 DB
	 "[endpoint xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]\n",
	 NULL, "3: section name too long"},
	{"a key before any section", CONF_ALL, "conninfo = dbname=x\n" DB, NULL,
	 "1: unknown section []"},
	{"an unknown section", CONF_ALL, DB "[databse]\n", NULL, "3: unknown section [databse]"},
	{"a section kind without its name", CONF_ALL, DB "[endpoint]\n", NULL,
	 "3: unknown section [endpoint]"},
	{"a fixed section with a name", CONF_ALL, DB "[worker w]\n", NULL,
	 "3: unknown section [worker w]"},
	{"an unknown key", CONF_ALL, DB "[intake]\nmax_bdy = 5\n", NULL,
	 "4: unknown key \"max_bdy\" in section [intake]"},
	{"an unknown key in a named section", CONF_ALL, DB EP "url = http://x/\n", NULL,
	 "6: unknown key \"url\" in section [endpoint a]"},
	{"a key of another section", CONF_ALL, DB "[log]\nthreads = 2\n", NULL,
	 "4: unknown key \"threads\" in section [log]"},
	{"a key given twice", CONF_ALL, DB "[intake]\nthreads = 2\nthreads = 2\n", NULL,
	 "5: key \"threads\" is given twice in [intake] (first at line 4)"},
	{"a key given twice, once bad", CONF_ALL, DB "[intake]\nthreads = 2\nthreads = x\n", NULL,
	 "5: key \"threads\" is given twice in [intake] (first at line 4)"},
	{"the same key in two sections", CONF_ALL, DB "[worker]\nconninfo = dbname=x\n",
	 "worker.conninfo=set", NULL},
	{"endpoint and its alias endpoints", CONF_ALL,
	 DB EP "[endpoint b]\nprovider = github\nsecret_file = secrets\n" RT
	       "endpoints = b\nurl = http://x/\n",
	 "route.endpoint=b", NULL},
	{"a section given twice", CONF_ALL, DB "[intake]\n[log]\n[intake]\n", NULL,
	 "5: section [intake] is defined twice (first at line 3)"},
	{"a named section given twice", CONF_ALL, DB EP EP, NULL,
	 "6: section [endpoint a] is defined twice (first at line 3)"},
	{"a bad endpoint name", CONF_ALL, DB "[endpoint a/b]\n", NULL,
	 "3: endpoint name \"a/b\" may hold only letters, digits, '-', '_' and '.'"},
	{"an endpoint name starting with a dot", CONF_ALL, DB "[endpoint .a]\n", NULL,
	 "3: endpoint name \".a\" may hold only letters, digits, '-', '_' and '.'"},
	{"an empty endpoint name", CONF_ALL, DB "[endpoint ]\n", NULL,
	 "3: endpoint name \"\" may hold only letters, digits, '-', '_' and '.'"},
	{"a bad route name", CONF_ALL, DB "[route r r]\n", NULL,
	 "3: route name \"r r\" may hold only letters, digits, '-', '_' and '.'"},

	/* required keys and the program's connection */
	{"no [database] conninfo", CONF_RESPONDER, "[worker]\nconninfo = dbname=w\n", NULL,
	 " [database] conninfo is not set"},
	{"the worker without any conninfo", CONF_WORKER, "[intake]\n", NULL,
	 " [worker] conninfo is not set"},
	{"the worker with [database] conninfo", CONF_WORKER, DB, "database.conninfo=dbname=x",
	 NULL},
	{"the worker prefers [worker] conninfo", CONF_WORKER, DB "[worker]\nconninfo = dbname=w\n",
	 "database.conninfo=dbname=w", NULL},
	{"the responder ignores [worker] conninfo", CONF_RESPONDER,
	 DB "[worker]\nconninfo = dbname=w\n", "database.conninfo=dbname=x", NULL},
	{"an endpoint without provider", CONF_ALL, DB "[endpoint a]\nsecret_file = secrets\n", NULL,
	 "3: endpoint \"a\" has no provider"},
	{"an ordered route naming an endpoint without provider", CONF_WORKER,
	 DB "[endpoint a]\nsecret_file = secrets\n" RT "url = http://x/\norder = object\n", NULL,
	 "3: endpoint \"a\" has no provider"},
	{"an endpoint without secret_file", CONF_ALL, DB "[endpoint a]\nprovider = stripe\n", NULL,
	 "3: endpoint \"a\" has no secret_file"},
	{"provider hmac without header", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nid_field = id\n", NULL,
	 "3: endpoint \"a\": provider hmac needs header"},
	{"provider hmac without an id", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\n", NULL,
	 "3: endpoint \"a\": provider hmac needs id_header or id_field"},
	{"provider hmac with a template", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\nid_field = id\n"
	    "signed_content = {timestamp}.{body}\ntimestamp_header = X-Ts\n",
	 "endpoint.signed_content={timestamp}.{body}", NULL},
	{"a bad template at its line", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\nid_field = id\n"
	    "signed_content = {timestamp}.{body}}\n",
	 NULL, "8: signed_content: '}' at byte 19 closes nothing (write }} for one)"},
	{"{timestamp} without timestamp_header", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\nid_field = id\n"
	    "signed_content = {timestamp}.{body}\n",
	 NULL, "3: endpoint \"a\": signed_content has {timestamp}: set timestamp_header"},
	{"{url} without public_url", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\nid_field = id\n"
	    "signed_content = {url}{body}\n",
	 NULL,
	 "3: endpoint \"a\": signed_content has {url}: set public_url (the URL the provider "
	 "signs)"},
	{"provider twilio without public_url", CONF_ALL,
	 DB "[endpoint a]\nprovider = twilio\nsecret_file = secrets\n", NULL,
	 "3: endpoint \"a\": provider twilio needs public_url (the URL Twilio signs)"},
	{"provider pubsub without key_file", CONF_ALL,
	 DB "[endpoint a]\nprovider = pubsub\nsecret_file = secrets\naudience = x\n", NULL,
	 "3: endpoint \"a\": provider pubsub needs key_file (Google's JWKS) and audience"},
	{"provider pubsub with an unreadable key_file", CONF_ALL,
	 DB "[endpoint a]\nprovider = pubsub\nsecret_file = secrets\naudience = x\n"
	    "key_file = nokeys\n",
	 NULL, "3: endpoint \"a\": cannot read \"DIR/nokeys\": No such file or directory"},
	{"provider pubsub with a key_file of no keys", CONF_ALL,
	 DB "[endpoint a]\nprovider = pubsub\nsecret_file = secrets\naudience = x\n"
	    "key_file = secrets\n",
	 NULL, "3: endpoint \"a\": \"DIR/secrets\": not a JSON object"},
	{"provider plaid with secret lines that are not JWKs", CONF_ALL,
	 DB "[endpoint a]\nprovider = plaid\nsecret_file = secrets\n", NULL,
	 "3: endpoint \"a\": secret_file line 1: not a JSON object (one JWK a line)"},
	{"a route without endpoint", CONF_ALL, DB EP "[route r]\nurl = http://x/\n", NULL,
	 "6: route \"r\" has no endpoint"},
	{"a route with an empty endpoint list", CONF_ALL,
	 DB EP "[route r]\nendpoint = ,\nurl = http://x/\n", NULL,
	 "6: route \"r\" has no endpoint"},
	{"a route naming an unknown endpoint", CONF_ALL,
	 DB EP "[route r]\nendpoint = a b\nurl = http://x/\n", NULL,
	 "6: route \"r\" names unknown endpoint \"b\""},
	{"a route without url or handler", CONF_ALL, DB EP RT, NULL,
	 "6: route \"r\" needs exactly one of url and handler"},
	{"a route with url and handler", CONF_ALL,
	 DB EP RT "url = http://x/\nhandler = sql:app.fn\n", NULL,
	 "6: route \"r\" needs exactly one of url and handler"},
	{"a handler route", CONF_ALL, DB EP RT "handler = sql:app_1.on_event2\n",
	 "route.handler=app_1.on_event2", NULL},
	{"reconcile_url on a handler route", CONF_ALL,
	 DB EP RT "handler = sql:app.fn\nreconcile_url = http://x/{key}\n", NULL,
	 "6: route \"r\": reconcile_url needs url (a handler's outcome is never unknown)"},
	{"secret_file on a handler route", CONF_ALL,
	 DB EP RT "handler = sql:app.fn\nsecret_file = /nonexistent\n", NULL,
	 "6: route \"r\": secret_file needs url (a handler is called in the database: there is "
	 "no request to sign and no answer to read)"},
	{"response_ref_field on a handler route", CONF_ALL,
	 DB EP RT "handler = sql:app.fn\nresponse_ref_field = id\n", NULL,
	 "6: route \"r\": response_ref_field needs url (a handler is called in the database: "
	 "there is no request to sign and no answer to read)"},
	{"rate on a handler route", CONF_ALL, DB EP RT "handler = sql:app.fn\nrate = 5\n", NULL,
	 "6: route \"r\": rate needs url (handlers run one at a time on the worker's database "
	 "connection: no calls to limit)"},
	{"concurrency on a handler route", CONF_ALL,
	 DB EP RT "handler = sql:app.fn\nconcurrency = 2\n", NULL,
	 "6: route \"r\": concurrency needs url (handlers run one at a time on the worker's "
	 "database connection: no calls to limit)"},
	{"an empty events list is every event", CONF_ALL, DB EP RT "url = http://x/\nevents =\n",
	 "route.events=*", NULL},

	/* across keys */
	{"order with an endpoint without versions", CONF_ALL,
	 DB
	 "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\nid_field = id\n" RT
	 "url = http://x/\norder = newest\n",
	 NULL,
	 "8: route \"r\": order needs event versions, and endpoint \"a\" (hmac) has none "
	 "(provider = hmac: set version_field)"},
	{"order with hmac and version_field", CONF_ALL,
	 DB "[endpoint a]\nprovider = hmac\nsecret_file = secrets\nheader = X-Sig\nid_field = id\n"
	    "version_field = created\n" RT "url = http://x/\norder = newest\n",
	 "route.order=newest", NULL},
	{"order with twilio", CONF_ALL,
	 DB "[endpoint a]\nprovider = twilio\nsecret_file = secrets\npublic_url = https://x/\n" RT
	    "url = http://x/\norder = object\n",
	 NULL,
	 "7: route \"r\": order needs event versions, and endpoint \"a\" (twilio) has none "
	 "(provider = hmac: set version_field)"},
	{"a timeout as long as the lease", CONF_ALL, DB EP RT "url = http://x/\ntimeout = 60\n",
	 NULL, "6: route \"r\": timeout (60 s) must be shorter than the worker lease (60 s)"},
	{"a timeout within a longer lease", CONF_ALL,
	 DB "[worker]\nlease = 3600\n" EP RT "url = http://x/\ntimeout = 3599\n",
	 "route.timeout=3599", NULL},
	{"claim_ahead derived from the lease", CONF_ALL,
	 DB "[worker]\nlease = 60\n" EP RT "url = http://x/\ntimeout = 25\n",
	 "worker.claim_ahead=1", NULL},
	{"claim_ahead derived: at least 0", CONF_ALL,
	 DB "[worker]\nlease = 60\n" EP RT "url = http://x/\ntimeout = 59\n",
	 "worker.claim_ahead=0", NULL},
	{"claim_ahead derived without routes", CONF_ALL, DB "[worker]\nlease = 5\n",
	 "worker.claim_ahead=2", NULL},
	/* (reported at the last route's line) */
	{"claim_ahead too large for the lease", CONF_ALL,
	 DB "[worker]\nclaim_ahead = 2\n" EP RT "url = http://x/\ntimeout = 25\n", NULL,
	 "8: claim_ahead = 2 with a route timeout of 25 s needs a lease of at least 75 s, not 60 s"},
	{"claim_ahead that fits", CONF_ALL,
	 DB "[worker]\nclaim_ahead = 1\n" EP RT "url = http://x/\ntimeout = 30\n",
	 "worker.claim_ahead=1", NULL},
	{"max_body and tolerance from [intake]", CONF_ALL,
	 DB "[intake]\nmax_body = 4096\ntolerance = 600\n" EP, "endpoint.max_body=4096", NULL},
	{"an endpoint's own max_body wins", CONF_ALL,
	 DB "[intake]\nmax_body = 4096\n" EP "max_body = 100\n", "endpoint.max_body=100", NULL},
	{"an endpoint's own tolerance wins", CONF_ALL,
	 DB "[intake]\ntolerance = 600\n" EP "tolerance = 30\n", "endpoint.tolerance=30", NULL},
	{"tolerance from [intake]", CONF_ALL, DB "[intake]\ntolerance = 600\n" EP,
	 "endpoint.tolerance=600", NULL},

	/* secret files: each program loads only its own */
	{"a missing endpoint secret file", CONF_RESPONDER,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = missing\n", NULL,
	 "3: could not open secret file \"DIR/missing\": No such file or directory"},
	{"the worker does not read endpoint secrets", CONF_WORKER,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = missing\n", "endpoint.secrets=0", NULL},
	{"a readable secret file", CONF_ALL,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = open\n", NULL,
	 "3: secret file \"DIR/open\" has group or world access (mode 0644); use 0600, or 0640 "
	 "when owned by root"},
	{"an empty secret file", CONF_ALL,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = empty\n", NULL,
	 "3: secret file \"DIR/empty\" holds no secret"},
	{"a directory for a secret file", CONF_ALL,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = subdir\n", NULL,
	 "3: secret file \"DIR/subdir\" is not a regular file"},
	{"an absolute secret file", CONF_ALL,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = DIR/secrets\n", "endpoint.secrets=2",
	 NULL},
	{"a missing route secret file", CONF_WORKER,
	 DB EP RT "url = http://x/\nsecret_file = nope\n", NULL,
	 "6: could not open secret file \"DIR/nope\": No such file or directory"},
	{"the responder does not read route secrets", CONF_RESPONDER,
	 DB EP RT "url = http://x/\nsecret_file = nope\n", "route.secrets=0", NULL},
	{"the backfill reads no endpoint secret", CONF_BACKFILL,
	 DB "[endpoint a]\nprovider = stripe\nsecret_file = missing\n", "endpoint.secrets=0", NULL},
	{"the backfill reads no route secret", CONF_BACKFILL,
	 DB EP RT "url = http://x/\nsecret_file = nope\n", "route.secrets=0", NULL},
	{"the backfill needs [database] conninfo", CONF_BACKFILL, "[worker]\nconninfo = dbname=w\n",
	 NULL, " [database] conninfo is not set"},
};
#define N_TEXT_CASES (sizeof(text_cases) / sizeof(text_cases[0]))

/* s with every "DIR" replaced by the temp directory */
static char *
subst_dir(const char *s)
{
	static char out[8192];
	size_t used = 0;

	for (; *s != '\0' && used < sizeof(out) - sizeof(dir) - 1; s++) {
		if (strncmp(s, "DIR", 3) == 0) {
			memcpy(out + used, dir, strlen(dir));
			used += strlen(dir);
			s += 2;
		} else {
			out[used++] = *s;
		}
	}
	out[used] = '\0';
	return out;
}

static void
run_key_cases(void)
{
	static char got[8192];
	char err[1024], want[1024];

	for (size_t i = 0; i < N_KEY_CASES; i++) {
		const key_case *k = &key_cases[i];
		int line = 0;
		const char *text = with_key(k->section, k->key, k->value, &line);
		conf *c = load_text(text, CONF_ALL, err, sizeof(err));

		if (k->want != NULL) {
			got[0] = '\0';
			if (c != NULL)
				dump(c, got, sizeof(got));
			ok(c != NULL && has_line(got, k->want), "[%s] %s = %s reads as %s",
			   k->section, k->key, k->value, k->want);
			if (c == NULL)
				printf("# %s\n", err);
		} else {
			snprintf(want, sizeof(want), "%s:%d: %s", path, line, k->msg);
			ok(c == NULL && strcmp(err, want) == 0, "[%s] %s = %s: %s", k->section,
			   k->key, k->value, k->msg);
			if (c != NULL || strcmp(err, want) != 0)
				printf("#      got: %s\n# expected: %s\n", c ? "(loaded)" : err,
				       want);
		}
		conf_free(c);
	}
}

static void
run_text_cases(void)
{
	static char got[8192];
	char err[1024], want[1024];

	for (size_t i = 0; i < N_TEXT_CASES; i++) {
		const text_case *t = &text_cases[i];
		conf *c;

		c = load_text(subst_dir(t->text), t->prog, err, sizeof(err));
		if (t->want != NULL) {
			got[0] = '\0';
			if (c != NULL)
				dump(c, got, sizeof(got));
			ok(c != NULL && has_line(got, t->want), "%s: %s", t->name, t->want);
			if (c == NULL)
				printf("# %s\n", err);
		} else {
			snprintf(want, sizeof(want), "%s:%s", path, subst_dir(t->msg));
			ok(c == NULL && strcmp(err, want) == 0, "%s: %s", t->name, t->msg);
			if (c != NULL || strcmp(err, want) != 0)
				printf("#      got: %s\n# expected: %s\n", c ? "(loaded)" : err,
				       want);
		}
		conf_free(c);
	}
}

/* every key of the table has a good case (a key case, or a text case reading it) */
static void
check_table_covered(void)
{
	const char *section, *key;
	size_t n = 0;

	for (size_t i = 0; (key = conf_key_at(i, &section)) != NULL; i++, n++) {
		bool good = false;

		for (size_t j = 0; j < N_KEY_CASES && !good; j++) {
			size_t len = strlen(section);

			good = key_cases[j].want != NULL && strcmp(key_cases[j].key, key) == 0 &&
			       strncmp(key_cases[j].section, section, len) == 0 &&
			       (key_cases[j].section[len] == '\0' ||
				key_cases[j].section[len] == ' ');
		}
		for (size_t j = 0; j < N_TEXT_CASES && !good; j++) {
			char prefix[128];

			snprintf(prefix, sizeof(prefix), "%s.%s=", section, key);
			good = text_cases[j].want != NULL &&
			       strncmp(text_cases[j].want, prefix, strlen(prefix)) == 0;
		}
		ok(good, "key %s in [%s] has a good case", key, section);
	}
	ok(n >= 50, "the table has %zu keys", n);
}

static void
check_defaults(void)
{
	static char got[8192];
	char err[1024];
	int line;
	conf *c = load_text(with_key("intake", "threads", "1", &line), CONF_ALL, err, sizeof(err));

	ok(c != NULL, "the base file loads (%s)", c ? "" : err);
	if (c == NULL)
		return;
	dump(c, got, sizeof(got));
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		ok(has_line(got, defaults[i]), "default %s", defaults[i]);
	conf_free(c);
}

static void
check_odd_files(void)
{
	char err[1024], want[1024], p[sizeof(dir) + 32];
	static const char nul[] = "[database]\nconninfo = db\0name=x\n";
	FILE *fp;
	conf *c;

	/* a NUL byte (write_file stops at one) */
	fp = fopen(path, "w");
	if (fp == NULL || fwrite(nul, 1, sizeof(nul) - 1, fp) != sizeof(nul) - 1 || fclose(fp) != 0)
		exit(2);
	c = conf_load(path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:2: NUL byte in the configuration file", path);
	ok(c == NULL && strcmp(err, want) == 0, "a NUL byte: %s", err);
	conf_free(c);

	snprintf(p, sizeof(p), "%s/nothing.conf", dir);
	c = conf_load(p, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "%s: could not open configuration file: No such file or directory", p);
	ok(c == NULL && strcmp(err, want) == 0, "a missing file: %s", err);
	conf_free(c);
}

/*
 * Every problem of a file in one run, each at its line, in the order read;
 * none that only follows from another (a key of a section in error, a
 * missing key of an endpoint whose key was in error)
 */
static void
check_every_error(void)
{
	char err[4096], want[4096];
	conf *c = load_text("[database]\n"
			    "conninfo = dbname=x\n"
			    "[intake]\n"
			    "threads = 0\n"
			    "this is not a key\n"
			    "[nosuch]\n"
			    "key = 1\n"
			    "[endpoint a]\n"
			    "provider = nosuch\n"
			    "secret_file = s\n"
			    "[endpoint b]\n"
			    "provider = stripe\n"
			    "secret_file = missing\n"
			    "[route r]\n"
			    "endpoint = c\n"
			    "url = http://x/\n",
			    CONF_RESPONDER, err, sizeof(err));

	snprintf(want, sizeof(want),
		 "%s:4: threads must be an integer between 1 and 256\n"
		 "%s:5: syntax error (expected [section] or key = value)\n"
		 "%s:6: unknown section [nosuch]\n"
		 "%s:9: unknown provider \"nosuch\" (",
		 path, path, path, path);
	ok(c == NULL && strncmp(err, want, strlen(want)) == 0, "every error, in order");
	if (c != NULL || strncmp(err, want, strlen(want)) != 0)
		printf("#      got: %s\n# expected: %s...\n", c ? "(loaded)" : err, want);
	snprintf(want, sizeof(want),
		 "\n%s:11: could not open secret file \"%s/missing\": No such file or directory\n"
		 "%s:14: route \"r\" names unknown endpoint \"c\"",
		 path, dir, path);
	ok(c == NULL && strlen(err) > strlen(want) &&
		   strcmp(err + strlen(err) - strlen(want), want) == 0,
	   "and those of the checks between keys, one per endpoint or route");
	if (c == NULL &&
	    (strlen(err) <= strlen(want) || strcmp(err + strlen(err) - strlen(want), want) != 0))
		printf("#      got: %s\n# expected: ...%s\n", err, want);
	ok(c == NULL && strstr(err, "endpoint \"a\" has no provider") == NULL,
	   "not an endpoint's missing provider after its provider line was refused");
	conf_free(c);
}

/* 256 endpoints are allowed, the 257th is not */
static void
check_too_many(void)
{
	static char text[65536];
	char err[1024], want[1024];
	size_t used = 0;
	conf *c;

	used += (size_t)snprintf(text, sizeof(text), DB);
	for (int i = 0; i < 256; i++)
		used += (size_t)snprintf(
			text + used, sizeof(text) - used,
			"[endpoint e%d]\nprovider = stripe\nsecret_file = secrets\n", i);
	c = load_text(text, CONF_WORKER, err, sizeof(err));
	ok(c != NULL && conf_endpoint_count(c) == 256, "256 endpoints");
	conf_free(c);
	snprintf(text + used, sizeof(text) - used, "[endpoint e256]\n");
	c = load_text(text, CONF_WORKER, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:%d: too many endpoints (at most 256)", path, 3 + 256 * 3);
	ok(c == NULL && strcmp(err, want) == 0, "257 endpoints: %s", err);
	conf_free(c);
}

/* conninfo may hold a password: no message shows it */
static void
check_no_echo(void)
{
	char err[1024];
	int line;
	conf *c = load_text(with_key("database", "conninfo", "password=sekrit 'x", &line), CONF_ALL,
			    err, sizeof(err));

	ok(c == NULL && strstr(err, "sekrit") == NULL, "a bad conninfo is not echoed");
	conf_free(c);
	c = load_text(DB "[worker]\nconninfo = password=sekrit\nconninfo = password=sekrit\n",
		      CONF_ALL, err, sizeof(err));
	ok(c == NULL && strstr(err, "sekrit") == NULL, "nor a conninfo given twice");
	conf_free(c);
}

int
main(void)
{
	char p[sizeof(dir) + 32];

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/hookinbox.conf", dir);
	write_file("secrets", "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM=\n# old\nsecond\n", 0600);
	write_file("open", "readable-by-all\n", 0644);
	write_file("empty", "\n# nothing\n", 0600);
	snprintf(p, sizeof(p), "%s/subdir", dir);
	if (mkdir(p, 0700) != 0)
		return 2;

	check_table_covered();
	check_defaults();
	run_key_cases();
	run_text_cases();
	check_odd_files();
	check_every_error();
	check_too_many();
	check_no_echo();

	rmdir(p);
	for (const char *const *f =
		     (const char *const[]){"secrets", "open", "empty", "hookinbox.conf", NULL};
	     *f != NULL; f++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *f);
		unlink(p);
	}
	rmdir(dir);
	return done_testing();
}
