/* SPDX-License-Identifier: ISC */
/*
 * hookinbox-send - sign a payload the way a provider does and POST it
 *
 *   hookinbox-send --provider stripe --secret-file s --url http://.../in/stripe event.json
 *
 * The signature headers come from providers/ (sign.h), so what this program
 * sends is what the intake verifies.  --repeat sends the same signed
 * delivery several times (a provider's retry), --concurrency runs that
 * many transfers at once with libcurl multi (one job struct per transfer
 * through CURLOPT_PRIVATE, as curl's 10-at-a-time.c).
 */
#include "endpoint.h"
#include "decimal.h"
#include "dynbuf.h"
#include "hex.h"
#include "hmac.h"
#include "secret.h"
#include "sign.h"
#include "wipe.h"
#include "xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sysexits.h>
#include <time.h>

#include <curl/curl.h>

#define PAYLOAD_MAX (64L * 1024 * 1024)
#define RESPONSE_MAX (64 * 1024)
#define REPEAT_MAX 1000000
#define CONCURRENCY_MAX 1000
#define TIMEOUT_SECONDS 30L

static const char *progname = "hookinbox-send";

typedef struct job {
	CURL *easy;
	int n;	     /* 1-based send number */
	dynbuf resp; /* capped at RESPONSE_MAX */
	bool truncated;
	char errbuf[CURL_ERROR_SIZE];
} job;

static void
usage(FILE *f)
{
	char names[1024];

	provider_names(names, sizeof(names));
	fprintf(f,
		"%s signs a webhook payload as a provider does and POSTs it.\n\n"
		"Usage:\n"
		"  %s --provider P --secret-file F --url URL [OPTION]... [PAYLOAD-FILE|-]\n\n"
		"Options:\n"
		"  -p, --provider=P          the provider to play (the list is below)\n"
		"  -s, --secret-file=F       file holding the secret (first secret is used; mode 0600)\n"
		"  -u, --url=URL             where to POST, and the URL signed by a provider that\n"
		"                            signs one\n"
		"  -i, --event-id=ID         event id header (webhook-id, X-GitHub-Delivery,\n"
		"                            X-Shopify-Webhook-Id, X-Gitlab-Event-UUID, ...);\n"
		"                            default: a random one (stripe: the id is in the body)\n"
		"  -t, --type=T              event type header where the provider has one\n"
		"                            (X-GitHub-Event, X-Shopify-Topic, X-Gitlab-Event);\n"
		"                            sns: the message Type (SubscriptionConfirmation, ...)\n"
		"  -o, --timestamp-offset=S  sign with now + S seconds (negative: in the past)\n"
		"  -n, --repeat=N            send the same signed delivery N times [1]\n"
		"  -c, --concurrency=N       N transfers at once [1]\n"
		"  -H, --header='K: V'       extra request header (repeatable; overrides Content-Type)\n"
		"      --hmac-header=H       hmac provider: signature header [X-Signature]\n"
		"      --hmac-alg=A          hmac provider: sha1, sha256 or sha512 [sha256]\n"
		"      --hmac-encoding=E     hmac provider: hex or base64 [hex]\n"
		"      --hmac-prefix=P       hmac provider: prefix before the signature\n"
		"      --hmac-id-header=H    hmac provider: header carrying --event-id\n"
		"      --hmac-signed-content=T\n"
		"                            hmac provider: what is signed, as the endpoint's\n"
		"                            signed_content says ({body}, {timestamp},\n"
		"                            {header:Name}, {method}, {url}); a signed header\n"
		"                            that is not the id, type or timestamp comes from\n"
		"                            --header [{body}]\n"
		"      --hmac-timestamp-header=H\n"
		"                            hmac provider: header carrying the timestamp\n"
		"      --hmac-timestamp-unit=U\n"
		"                            hmac provider: seconds or milliseconds [seconds]\n"
		"  -h, --help                show this help and exit\n"
		"  -V, --version             show the version and exit\n\n"
		"The payload is read from PAYLOAD-FILE, or standard input when it is \"-\" or absent,\n"
		"and sent unchanged, except where the provider signs inside the body (adyen: each\n"
		"item gets its additionalData.hmacSignature; mailgun: the payload is the event-data;\n"
		"sns: the payload is the Message of a Notification; apple: the payload is the\n"
		"decoded notification, sent as its signedPayload; graph: each notification gets\n"
		"its clientState).  One line is printed per response: the send number, the HTTP\n"
		"status and the response body.\n\n"
		"Exit status: 0 all responses were 2xx, 1 otherwise, 64 usage error, 66 payload\n"
		"unreadable, 70 internal error, 78 secret file unusable.\n\n"
		"Providers: %s.\n",
		progname, progname, names);
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry \"%s --help\" for more information.\n", progname);
	exit(EX_USAGE);
}

/* strict decimal in [lo, hi] */
static long long
parse_number(const char *opt, const char *s, long long lo, long long hi)
{
	long long v;

	if (decimal_parse(s, lo, hi, &v) != 0) {
		fprintf(stderr, "%s: invalid value \"%s\" for option %s\n", progname, s, opt);
		fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
		exit(EX_USAGE);
	}
	return v;
}

static unsigned char *
read_payload(const char *path, size_t *len)
{
	bool own = strcmp(path, "-") != 0;
	FILE *f = own ? fopen(path, "rb") : stdin;
	dynbuf b;

	if (f == NULL) {
		fprintf(stderr, "%s: could not open payload file \"%s\": %s\n", progname, path,
			strerror(errno));
		exit(EX_NOINPUT);
	}
	dynbuf_init(&b, (size_t)PAYLOAD_MAX);
	for (;;) {
		char chunk[65536];
		size_t n = fread(chunk, 1, sizeof(chunk), f);

		if (n == 0)
			break;
		if (dynbuf_add(&b, chunk, n) != 0) {
			fprintf(stderr, "%s: payload file \"%s\" is too large\n", progname, path);
			exit(EX_NOINPUT);
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: could not read payload file \"%s\": %s\n", progname, path,
			strerror(errno));
		exit(EX_NOINPUT);
	}
	if (own)
		fclose(f);
	return (unsigned char *)dynbuf_detach(&b, len);
}

static char *
random_id(void)
{
	unsigned char r[12];
	char hex[2 * sizeof(r) + 1];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: could not read random bytes: %s\n", progname,
				strerror(errno));
			exit(EX_SOFTWARE);
		}
		got += (size_t)n;
	}
	hex_encode(r, sizeof(r), hex);
	return xasprintf("msg_%s", hex);
}

static size_t
on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	job *j = userdata;
	size_t n = size * nmemb, room = j->resp.max - j->resp.len;

	if (n > room) {
		j->truncated = true;
		n = room;
	}
	if (dynbuf_add(&j->resp, ptr, n) != 0)
		j->truncated = true;
	return size * nmemb; /* keep reading; the rest is dropped */
}

/* the response on one line: control bytes shown as spaces */
static void
print_result(job *j, CURLcode rc, long status)
{
	if (rc != CURLE_OK) {
		printf("%d error %s\n", j->n,
		       j->errbuf[0] != '\0' ? j->errbuf : curl_easy_strerror(rc));
		return;
	}
	size_t len = j->resp.len;

	printf("%d %ld ", j->n, status);
	while (len > 0 && (j->resp.buf[len - 1] == '\n' || j->resp.buf[len - 1] == '\r'))
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)j->resp.buf[i];

		putchar(c < 0x20 || c == 0x7f ? ' ' : c);
	}
	if (j->truncated)
		fputs(" [truncated]", stdout);
	putchar('\n');
}

static CURL *
make_easy(job *j, const char *url, struct curl_slist *hdrs, const unsigned char *body, size_t len)
{
	CURL *e = curl_easy_init();

	if (e == NULL) {
		fprintf(stderr, "%s: could not create a transfer\n", progname);
		exit(EX_SOFTWARE);
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, (const char *)body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, j);
	curl_easy_setopt(e, CURLOPT_PRIVATE, j);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, j->errbuf);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, TIMEOUT_SECONDS);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "hookinbox-send/" HOOKINBOX_VERSION);
	j->easy = e;
	return e;
}

/* send n copies, conc at a time; returns the number of non-2xx results */
static long
send_all(const char *url, struct curl_slist *hdrs, const unsigned char *body, size_t len, long n,
	 long conc)
{
	CURLM *multi = curl_multi_init();
	long started = 0, done = 0, failed = 0, active = 0;

	if (multi == NULL) {
		fprintf(stderr, "%s: could not create a transfer set\n", progname);
		exit(EX_SOFTWARE);
	}
	while (done < n) {
		int running, left;
		CURLMsg *m;

		while (active < conc && started < n) {
			job *j = xcalloc(1, sizeof(*j));

			j->n = (int)++started;
			dynbuf_init(&j->resp, RESPONSE_MAX);
			curl_multi_add_handle(multi, make_easy(j, url, hdrs, body, len));
			active++;
		}
		curl_multi_perform(multi, &running);
		while ((m = curl_multi_info_read(multi, &left)) != NULL) {
			job *j = NULL;
			long status = 0;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&j);
			curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
			print_result(j, m->data.result, status);
			if (m->data.result != CURLE_OK || status < 200 || status > 299)
				failed++;
			curl_multi_remove_handle(multi, j->easy);
			curl_easy_cleanup(j->easy);
			dynbuf_release(&j->resp);
			free(j);
			active--;
			done++;
		}
		if (done < n && running > 0)
			curl_multi_poll(multi, NULL, 0, 1000, NULL);
	}
	fflush(stdout);
	curl_multi_cleanup(multi);
	return failed;
}

static bool
looks_like_json(const unsigned char *b, size_t len)
{
	size_t i = 0;

	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		i++;
	return i < len && (b[i] == '{' || b[i] == '[');
}

enum {
	OPT_HMAC_HEADER = 256,
	OPT_HMAC_ALG,
	OPT_HMAC_ENCODING,
	OPT_HMAC_PREFIX,
	OPT_HMAC_ID_HEADER,
	OPT_HMAC_SIGNED_CONTENT,
	OPT_HMAC_TIMESTAMP_HEADER,
	OPT_HMAC_TIMESTAMP_UNIT
};

int main(int argc, char **argv);

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"provider", required_argument, NULL, 'p'},
		{"secret-file", required_argument, NULL, 's'},
		{"url", required_argument, NULL, 'u'},
		{"event-id", required_argument, NULL, 'i'},
		{"type", required_argument, NULL, 't'},
		{"timestamp-offset", required_argument, NULL, 'o'},
		{"repeat", required_argument, NULL, 'n'},
		{"concurrency", required_argument, NULL, 'c'},
		{"header", required_argument, NULL, 'H'},
		{"hmac-header", required_argument, NULL, OPT_HMAC_HEADER},
		{"hmac-alg", required_argument, NULL, OPT_HMAC_ALG},
		{"hmac-encoding", required_argument, NULL, OPT_HMAC_ENCODING},
		{"hmac-prefix", required_argument, NULL, OPT_HMAC_PREFIX},
		{"hmac-id-header", required_argument, NULL, OPT_HMAC_ID_HEADER},
		{"hmac-signed-content", required_argument, NULL, OPT_HMAC_SIGNED_CONTENT},
		{"hmac-timestamp-header", required_argument, NULL, OPT_HMAC_TIMESTAMP_HEADER},
		{"hmac-timestamp-unit", required_argument, NULL, OPT_HMAC_TIMESTAMP_UNIT},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *pname = NULL, *secret_file = NULL, *url = NULL, *event_id = NULL, *type = NULL;
	const char *payload_path = "-";
	char **extra = NULL;
	size_t n_extra = 0, extra_alloc = 0;
	long long offset = 0;
	long repeat = 1, conc = 1, failed;
	provider prov = provider_unset(); /* --provider is required */
	char hmac_header[] = "X-Signature";
	hmac_conf hc;
	secret_set *secrets;
	char err[512], *id = NULL, *send_url = NULL, *ctype = NULL;
	unsigned char *body;
	size_t body_len, slen;
	const unsigned char *secret;
	sign_input in;
	sign_output out = {.n = 0};
	struct curl_slist *hdrs = NULL;
	bool have_ctype = false;
	int c, status;

	memset(&hc, 0, sizeof(hc));
	hc.header = hmac_header;
	hc.alg = HMAC_SHA256;
	hc.enc = HMAC_HEX;

	while ((c = getopt_long(argc, argv, "p:s:u:i:t:o:n:c:H:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pname = optarg;
			break;
		case 's':
			secret_file = optarg;
			break;
		case 'u':
			url = optarg;
			break;
		case 'i':
			event_id = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case 'o':
			offset = parse_number("--timestamp-offset", optarg, -100000000000LL,
					      100000000000LL);
			break;
		case 'n':
			repeat = (long)parse_number("--repeat", optarg, 1, REPEAT_MAX);
			break;
		case 'c':
			conc = (long)parse_number("--concurrency", optarg, 1, CONCURRENCY_MAX);
			break;
		case 'H':
			if (strchr(optarg, ':') == NULL || optarg[0] == ':')
				usage_error("invalid header \"%s\": expected \"Name: value\"",
					    optarg);
			extra = xgrow(extra, n_extra + 1, &extra_alloc, sizeof(*extra));
			extra[n_extra++] = optarg;
			break;
		case OPT_HMAC_HEADER:
			hc.header = optarg;
			break;
		case OPT_HMAC_ALG:
			if (strcmp(optarg, "sha1") == 0)
				hc.alg = HMAC_SHA1;
			else if (strcmp(optarg, "sha256") == 0)
				hc.alg = HMAC_SHA256;
			else if (strcmp(optarg, "sha512") == 0)
				hc.alg = HMAC_SHA512;
			else
				usage_error("unknown hmac algorithm \"%s\"", optarg);
			break;
		case OPT_HMAC_ENCODING:
			if (strcmp(optarg, "hex") == 0)
				hc.enc = HMAC_HEX;
			else if (strcmp(optarg, "base64") == 0)
				hc.enc = HMAC_BASE64;
			else
				usage_error("unknown hmac encoding \"%s\"", optarg);
			break;
		case OPT_HMAC_PREFIX:
			hc.prefix = optarg;
			break;
		case OPT_HMAC_ID_HEADER:
			hc.id_header = optarg;
			break;
		case OPT_HMAC_SIGNED_CONTENT:
			hc.signed_content = optarg;
			break;
		case OPT_HMAC_TIMESTAMP_HEADER:
			hc.timestamp_header = optarg;
			break;
		case OPT_HMAC_TIMESTAMP_UNIT:
			if (strcmp(optarg, "seconds") == 0)
				hc.ts_unit = HMAC_SECONDS;
			else if (strcmp(optarg, "milliseconds") == 0)
				hc.ts_unit = HMAC_MILLISECONDS;
			else
				usage_error("unknown hmac timestamp unit \"%s\"", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s %s\n", progname, HOOKINBOX_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
			return EX_USAGE;
		}
	}
	if (optind < argc)
		payload_path = argv[optind++];
	if (optind < argc)
		usage_error("too many arguments (first extra: \"%s\")", argv[optind]);
	if (pname == NULL)
		usage_error("no provider given (--provider)");
	if (provider_from_name(pname, &prov) < 0)
		usage_error("unknown provider \"%s\"", pname);
	if (secret_file == NULL)
		usage_error("no secret file given (--secret-file)");
	if (url == NULL)
		usage_error("no URL given (--url)");

	secrets = secret_set_load(secret_file, err, sizeof(err));
	if (secrets == NULL) {
		fprintf(stderr, "%s: %s\n", progname, err);
		return EX_CONFIG;
	}
	secret = secret_get(secrets, 0, &slen);
	body = read_payload(payload_path, &body_len);

	for (size_t i = 0; i < n_extra; i++) {
		if (strncasecmp(extra[i], "Content-Type:", 13) == 0)
			have_ctype = true;
	}
	if (!have_ctype) {
		bool form = sign_form_bodies(prov) && !looks_like_json(body, body_len);

		ctype = xstrdup(form ? "Content-Type: application/x-www-form-urlencoded"
				     : "Content-Type: application/json");
	}

	id = event_id != NULL ? xstrdup(event_id) : sign_id_in_body(prov) ? NULL : random_id();
	/* a provider may sign a JSON body through the URL (Twilio's bodySHA256) */
	if (looks_like_json(body, body_len))
		send_url = sign_json_body_url(prov, url, body, body_len);
	else
		send_url = xstrdup(url);

	memset(&in, 0, sizeof(in));
	in.provider = prov;
	in.hmac = &hc; /* read by provider = hmac only */
	in.secret = secret;
	in.secret_len = slen;
	in.event_id = id;
	in.event_type = type;
	in.timestamp = (int64_t)time(NULL) + offset;
	in.body = body;
	in.body_len = body_len;
	in.url = send_url;
	in.headers = (const char *const *)extra; /* a template may sign them */
	in.n_headers = n_extra;
	if (sign_headers(&in, &out, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: could not sign: %s\n", progname, err);
		status = EX_CONFIG;
		goto out;
	}

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "%s: could not initialise libcurl\n", progname);
		status = EX_SOFTWARE;
		goto out;
	}
	for (size_t i = 0; i < out.n; i++) {
		char *h = xasprintf("%s: %s", out.h[i].name, out.h[i].value);

		hdrs = curl_slist_append(hdrs, h);
		secure_wipe(h, strlen(h));
		free(h);
	}
	if (ctype != NULL)
		hdrs = curl_slist_append(hdrs, ctype);
	hdrs = curl_slist_append(hdrs, "Expect:");
	for (size_t i = 0; i < n_extra; i++)
		hdrs = curl_slist_append(hdrs, extra[i]);
	if (hdrs == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		status = EX_SOFTWARE;
	} else {
		/* a provider that signs inside the body (adyen, mailgun, sns, ...) rewrote it */
		failed = send_all(send_url, hdrs, out.body != NULL ? out.body : body,
				  out.body != NULL ? out.body_len : body_len, repeat, conc);
		status = failed == 0 ? 0 : 1;
	}
	curl_slist_free_all(hdrs);
	curl_global_cleanup();
out:
	sign_release(&out);
	secret_set_free(secrets);
	free(extra);
	free(ctype);
	free(id);
	free(send_url);
	free(body);
	return status;
}
