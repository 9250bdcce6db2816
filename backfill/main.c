/* SPDX-License-Identifier: ISC */
/*
 * main.c - hookinbox-backfill: store what the provider sent and the inbox lacks
 *
 * After an outage (the responder down, the database lost, a provider that
 * gave up retrying), asks the provider's API which events it sent in a
 * time range and stores each one the inbox lacks under the delivery key a
 * live delivery has (provider, account, environment, event id), marked
 * backfilled; the worker then delivers it like any other, and a later
 * redelivery is its duplicate.  The options, the credential and the walk
 * are here; each provider's API is in its own file (source.h).
 *
 * Exit codes (sysexits.h): 0 ok, 1 partial failure (some events not
 * stored, or the listing broke off), 64 usage, 75 database unavailable,
 * 78 configuration, credential or permission problem.
 */
#include <getopt.h>
#include <search.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>
#include <time.h>

#include "bf_store.h"
#include "clock.h"
#include "conf.h"
#include "decimal.h"
#include "dynbuf.h"
#include "envelope.h"
#include "log.h"
#include "rfc3339.h"
#include "secret.h"
#include "source.h"
#include "verify.h"
#include "xalloc.h"

#define PROG "hookinbox-backfill"
#define EXIT_PARTIAL 1
/* --max-pages' default: 100 events or deliveries a page */
#define MAX_PAGES_DEFAULT 1000

typedef struct options {
	const char *config;
	const char *endpoint;
	const char *since;
	const char *until;
	const char *credential;
	const char *api_url;
	const char *conninfo;
	source_query q;
	long max_pages;
	bool dry_run;
} options;

/* what a run did, for the summary line */
typedef struct figures {
	long listed, known, stored, raced, failed;
} figures;

/* everything the walk needs */
typedef struct run {
	const options *o;
	const endpoint_conf *ep;
	const source_ops *ops;
	api_http *http;
	bf_store *store;
	bf_key key;
	figures f;
	void *seen; /* tsearch tree of the event ids listed so far */
} run;

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " --endpoint=NAME --since=TIME [OPTION]...\n"
		"Store the events a provider's API says it sent and the inbox lacks.\n\n"
		"  -c, --config=FILE      configuration file (default: $HOOKINBOX_CONFIG,\n"
		"                         else " CONF_DEFAULT_PATH ")\n"
		"      --endpoint=NAME    the [endpoint NAME] whose events to reconcile\n"
		"                         (provider stripe or github)\n"
		"      --since=TIME       from this time (RFC 3339, or unix seconds)\n"
		"      --until=TIME       to this time, included (default: now)\n"
		"      --credential=FILE  the API credential, one line (Stripe: a secret or\n"
		"                         restricted key that can read events; GitHub: a token\n"
		"                         that can read the hook); mode 0600, or 0640 owned by\n"
		"                         root, as the secret files\n"
		"      --repo=OWNER/NAME  github: the repository of the webhook\n"
		"      --hook-id=N        github: the webhook's number\n"
		"      --api-url=URL      the API base (default: https://api.stripe.com,\n"
		"                         https://api.github.com); https, http only on loopback\n"
		"      --conninfo=STRING  connect with this (default: [database] conninfo as\n"
		"                         user hookinbox_backfill)\n"
		"      --max-pages=N      stop after N pages of the API's listing (default 1000;\n"
		"                         100 events a page); exit 1 when more remain\n"
		"      --dry-run          list what would be stored, store nothing\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and exit\n\n"
		"Exit status: 0 ok, 1 partial failure (some events not stored, or the\n"
		"listing broke off or went round in a loop: run it again), 64 usage error, 75 database unavailable,\n"
		"78 configuration, credential or permission problem (also: the API\n"
		"refused the credential).\n");
}

/* RFC 3339 or unix seconds */
static int
parse_time(const char *s, int64_t *out)
{
	long long secs;
	int64_t us;

	if (decimal_parse(s, 0, LLONG_MAX, &secs) == 0) {
		*out = secs;
		return 0;
	}
	if (rfc3339_us(s, &us) != 0)
		return -1;
	*out = us / 1000000;
	return 0;
}

static int
parse_options(int argc, char **argv, options *o)
{
	enum {
		OPT_ENDPOINT = 256,
		OPT_SINCE,
		OPT_UNTIL,
		OPT_CREDENTIAL,
		OPT_REPO,
		OPT_HOOK_ID,
		OPT_API_URL,
		OPT_CONNINFO,
		OPT_MAX_PAGES,
		OPT_DRY_RUN
	};
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"endpoint", required_argument, NULL, OPT_ENDPOINT},
		{"since", required_argument, NULL, OPT_SINCE},
		{"until", required_argument, NULL, OPT_UNTIL},
		{"credential", required_argument, NULL, OPT_CREDENTIAL},
		{"repo", required_argument, NULL, OPT_REPO},
		{"hook-id", required_argument, NULL, OPT_HOOK_ID},
		{"api-url", required_argument, NULL, OPT_API_URL},
		{"conninfo", required_argument, NULL, OPT_CONNINFO},
		{"max-pages", required_argument, NULL, OPT_MAX_PAGES},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case OPT_ENDPOINT:
			o->endpoint = optarg;
			break;
		case OPT_SINCE:
			o->since = optarg;
			break;
		case OPT_UNTIL:
			o->until = optarg;
			break;
		case OPT_CREDENTIAL:
			o->credential = optarg;
			break;
		case OPT_REPO:
			source_query_set(&o->q, "repo", optarg);
			break;
		case OPT_HOOK_ID:
			source_query_set(&o->q, "hook-id", optarg);
			break;
		case OPT_API_URL:
			o->api_url = optarg;
			break;
		case OPT_CONNINFO:
			o->conninfo = optarg;
			break;
		case OPT_MAX_PAGES: {
			long long n;

			if (decimal_parse(optarg, 1, 1000000, &n) != 0) {
				log_error("--max-pages must be a number between 1 and 1000000, not "
					  "\"%s\"",
					  optarg);
				return -1;
			}
			o->max_pages = (long)n;
			break;
		}
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf(PROG " " HOOKINBOX_VERSION "\n");
			exit(0);
		default:
			fprintf(stderr, "Try \"" PROG " --help\" for more information.\n");
			return -1;
		}
	}
	if (optind < argc) {
		log_error("unexpected argument \"%s\"", argv[optind]);
		return -1;
	}
	if (o->endpoint == NULL || o->since == NULL || o->credential == NULL) {
		log_error("--endpoint, --since and --credential are required");
		return -1;
	}
	if (parse_time(o->since, &o->q.since) != 0) {
		log_error("--since \"%s\" is not an RFC 3339 time or unix seconds", o->since);
		return -1;
	}
	o->q.until = clock_now();
	if (o->until != NULL && parse_time(o->until, &o->q.until) != 0) {
		log_error("--until \"%s\" is not an RFC 3339 time or unix seconds", o->until);
		return -1;
	}
	if (o->q.since > o->q.until) {
		log_error("--since is after --until");
		return -1;
	}
	return 0;
}

/* the item's headers, as request_view.header() looks them up */
static const char *
item_header(const void *ctx, const char *name)
{
	const bf_item *it = ctx;

	for (size_t i = 0; i < it->n_headers; i++)
		if (strcasecmp(it->headers[i].name, name) == 0)
			return it->headers[i].value;
	if (strcasecmp(name, "Content-Type") == 0)
		return "application/json"; /* the body is the API's JSON */
	return NULL;
}

/* the headers a live delivery keeps (fcgi/handler.c), as a JSON object */
static char *
headers_json(const bf_item *it)
{
	json_object *o = json_object_new_object();
	char *out;

	json_object_object_add(o, "Content-Type",
			       json_object_new_string(item_header(it, "Content-Type")));
	for (size_t i = 0; i < it->n_headers; i++)
		if (strcasecmp(it->headers[i].name, "Content-Type") != 0)
			json_object_object_add(o, it->headers[i].name,
					       json_object_new_string(it->headers[i].value));
	out = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

/* how a store error ends the run: 0 to go on (counted as failed), else the exit code */
static int
store_exit(bf_store_err why)
{
	switch (why) {
	case BF_STORE_UNAVAILABLE:
		return EX_TEMPFAIL;
	case BF_STORE_REFUSED:
		return EX_CONFIG;
	case BF_STORE_FAILED:
		break;
	}
	return 0;
}

/* one event the inbox lacks: fetch it if need be, read its envelope, store it */
static int
backfill_item(run *rn, bf_item *it)
{
	request_view rv = {.header = item_header, .ctx = it, .now = clock_now()};
	envelope env = {0};
	const char *reason = NULL;
	source_error e = {0};
	char err[512];
	char *hdrs = NULL;
	bf_store_err why;
	int64_t id;
	bool dup;
	int rc = 0;

	if (rn->ops->fetch != NULL && rn->ops->fetch(rn->http, &rn->o->q, it, &e) != 0) {
		log_error("event %s: %s", it->id, e.msg);
		rn->f.failed++;
		return e.status == 401 || e.status == 403 ? EX_CONFIG : 0;
	}
	rv.body = (const unsigned char *)it->body;
	rv.body_len = it->body_len;
	if (envelope_extract(&rn->ep->pe, &rv, &env, &reason) != 0 ||
	    strcmp(env.event_id, it->id) != 0) {
		log_error("event %s: %s", it->id,
			  reason != NULL ? reason : "its body names another event id");
		rn->f.failed++;
		goto out;
	}
	if (rn->o->dry_run) {
		printf("would store %s (%s)\n", it->id,
		       env.event_type[0] != '\0' ? env.event_type : "no type");
		rn->f.stored++;
		goto out;
	}
	hdrs = headers_json(it);
	bf_row row = {.event_id = env.event_id,
		      .event_type = envelope_or_null(env.event_type),
		      .object_id = envelope_or_null(env.object_id),
		      .version = env.version,
		      .has_version = env.has_version,
		      .headers_json = hdrs,
		      .body = it->body,
		      .body_len = it->body_len,
		      .note = env.note};
	if (bf_store_put(rn->store, &rn->key, &row, &id, &dup, err, sizeof(err), &why) != 0) {
		log_error("event %s: %s", it->id, err);
		rn->f.failed++;
		rc = store_exit(why);
		goto out;
	}
	if (dup) {
		/* stored meanwhile: by a live delivery or an overlapping run */
		printf("already in the inbox %s (intake id %lld)\n", it->id, (long long)id);
		rn->f.raced++;
	} else {
		printf("stored %s (%s) as intake id %lld\n", it->id,
		       env.event_type[0] != '\0' ? env.event_type : "no type", (long long)id);
		rn->f.stored++;
	}
out:
	free(hdrs);
	envelope_release(&env);
	return rc;
}

/* the order of run.seen */
static int
id_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* one page: which of its events the inbox lacks, and those stored */
static int
backfill_page(run *rn, bf_page *page, int n)
{
	const char **ids = xcalloc(page->n + 1, sizeof(*ids));
	bf_item **items = xcalloc(page->n + 1, sizeof(*items));
	bool *known = xcalloc(page->n + 1, sizeof(*known));
	char err[512];
	bf_store_err why;
	size_t m = 0;
	long had = 0;
	int rc = 0;

	/* an event listed on an earlier page (a GitHub redelivery) counts once */
	for (size_t i = 0; i < page->n; i++) {
		char *id = xstrdup(page->items[i].id);
		char **found = tsearch(id, &rn->seen, id_cmp);

		if (found == NULL)
			abort(); /* out of memory */
		if (*found != id) {
			free(id);
			continue;
		}
		items[m] = &page->items[i];
		ids[m++] = page->items[i].id;
	}
	rn->f.listed += (long)m;
	if (bf_store_known(rn->store, &rn->key, ids, m, known, err, sizeof(err), &why) != 0) {
		log_error("%s", err);
		rn->f.failed += (long)m;
		rc = store_exit(why) ? store_exit(why) : EXIT_PARTIAL;
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		known[i] = known[i] || items[i]->answered; /* stored once: maybe purged since */
		had += known[i];
	}
	rn->f.known += had;
	printf("page %d: %zu listed, %ld in the inbox\n", n, m, had);
	for (size_t i = 0; i < m && rc == 0; i++)
		if (!known[i])
			rc = backfill_item(rn, items[i]);
out:
	free(ids);
	free(items);
	free(known);
	return rc;
}

/*
 * Whether cursor was handed out before (then the listing goes round in a
 * loop: an API answering has_more with the same page, a next link to
 * itself); else it is remembered.  seen holds count cursors.
 */
static bool
cursor_repeats(char ***seen, long *count, size_t *alloc, const char *cursor)
{
	for (long i = 0; i < *count; i++)
		if (strcmp((*seen)[i], cursor) == 0)
			return true;
	*seen = xgrow(*seen, (size_t)*count + 1, alloc, sizeof(**seen));
	(*seen)[(*count)++] = xstrdup(cursor);
	return false;
}

static int
backfill(run *rn)
{
	char *cursor = NULL, **seen = NULL;
	size_t seen_alloc = 0;
	long nseen = 0, max_pages = rn->o->max_pages ? rn->o->max_pages : MAX_PAGES_DEFAULT;
	bool done = false;
	int rc = 0;

	for (long n = 1; !done && rc == 0; n++) {
		bf_page page = {0};
		source_error e = {0};

		if (n > max_pages) {
			log_error(
				"stopped after %ld pages (--max-pages): the listing has more; run "
				"again with a later --since or a larger --max-pages",
				max_pages);
			rc = EXIT_PARTIAL;
			break;
		}
		if (cursor != NULL && cursor_repeats(&seen, &nseen, &seen_alloc, cursor)) {
			log_error("the API's listing went round in a loop (page %ld is one listed "
				  "before): stopped",
				  n);
			rc = EXIT_PARTIAL;
			break;
		}
		if (rn->ops->next_page(rn->http, &rn->o->q, &cursor, &page, &done, &e) != 0) {
			log_error("%s", e.msg);
			rc = e.status == 401 || e.status == 403 || e.status == 404 ? EX_CONFIG
										   : EXIT_PARTIAL;
		} else {
			rc = backfill_page(rn, &page, (int)n);
		}
		bf_page_release(&page);
	}
	for (long i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	free(cursor);
	return rc;
}

int
main(int argc, char **argv)
{
	options o = {0};
	char err[4096];
	conf *c = NULL;
	secret_set *cred = NULL;
	run rn = {.o = &o};
	bf_store_err why;
	const char *problem;
	const unsigned char *token;
	size_t token_len;
	int rc = EX_CONFIG;

	log_init(PROG);
	if (parse_options(argc, argv, &o) != 0)
		return EX_USAGE;
	c = conf_load_for(conf_default_path(o.config), CONF_BACKFILL, err, sizeof(err));
	if (c == NULL) {
		log_errors(err);
		goto out;
	}
	rn.ep = conf_endpoint(c, o.endpoint);
	if (rn.ep == NULL) {
		log_error("%s: no endpoint \"%s\"", conf_path(c), o.endpoint);
		goto out;
	}
	rn.ops = source_get(rn.ep->pe.provider);
	if (rn.ops == NULL) {
		log_error("endpoint \"%s\": backfill can ask the API of provider stripe or github, "
			  "not %s",
			  o.endpoint, provider_name(rn.ep->pe.provider));
		rc = EX_USAGE;
		goto out;
	}
	if ((problem = source_check(rn.ops, &o.q, err, sizeof(err))) != NULL) {
		log_error("%s", problem);
		rc = EX_USAGE;
		goto out;
	}
	cred = secret_set_load(o.credential, err, sizeof(err));
	if (cred == NULL) {
		log_error("credential: %s", err);
		goto out;
	}
	if (secret_count(cred) != 1) {
		log_error("credential file \"%s\" must hold one line, not %zu", o.credential,
			  secret_count(cred));
		goto out;
	}
	token = secret_get(cred, 0, &token_len);
	rn.http = api_http_new(o.api_url ? o.api_url : rn.ops->default_base, token, token_len,
			       rn.ops->headers, err, sizeof(err));
	if (rn.http == NULL) {
		log_error("%s", err);
		rc = EX_USAGE;
		goto out;
	}
	secret_set_free(cred);
	cred = NULL;
	rn.store =
		bf_store_connect(o.conninfo ? o.conninfo : conf_conninfo(c),
				 o.conninfo ? NULL : "hookinbox_backfill", err, sizeof(err), &why);
	if (rn.store == NULL) {
		log_error("%s", err);
		rc = store_exit(why) ? store_exit(why) : EX_TEMPFAIL;
		goto out;
	}
	rn.key = (bf_key){.endpoint = rn.ep->name,
			  .provider = provider_name(rn.ep->pe.provider),
			  .account = rn.ep->account,
			  .environment = rn.ep->environment,
			  .body_dedup = !provider_endpoint_id_signed(&rn.ep->pe)};
	rc = backfill(&rn);
	if (rc == 0 && rn.f.failed > 0)
		rc = EXIT_PARTIAL;
	printf("%s: listed %ld, already in the inbox %ld, %s %ld, failed %ld\n", o.endpoint,
	       rn.f.listed, rn.f.known + rn.f.raced, o.dry_run ? "would store" : "stored",
	       rn.f.stored, rn.f.failed);
out:
	fflush(stdout);
	tdestroy(rn.seen, free);
	bf_store_free(rn.store);
	api_http_free(rn.http);
	secret_set_free(cred);
	conf_free(c);
	return rc;
}
