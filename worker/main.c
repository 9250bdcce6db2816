/* SPDX-License-Identifier: ISC */
/*
 * main.c - hookinbox-worker: turn accepted events into downstream effects
 *
 * The options, the signals and the run's summary.  The engine (fan out,
 * claim under a lease, call, record) is loop.c, the health check health.c.
 * Run from cron with --once (the default) or --max-runtime, or keep it
 * polling with --loop.  Overlapping runs on one or several hosts are safe.
 *
 * Exit codes (sysexits.h): 0 ok, 64 usage, 70 internal error, 75 database
 * unavailable, 78 configuration error (also: the database refuses the
 * worker's role, or its schema is too old); --health-check: 1 unhealthy.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "clock.h"
#include "conf.h"
#include "dbcheck.h"
#include "decimal.h"
#include "deliver.h"
#include "health.h"
#include "log.h"
#include "loop.h"

#define PROG "hookinbox-worker"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

typedef struct options {
	const char *config;
	bool loop;
	long max_runtime; /* seconds, 0 = none */
	int concurrency;  /* 0 = from the configuration */
	int batch;
	const char *metrics_file; /* NULL = [worker] metrics_file */
	bool health_check;
	bool nagios;	      /* --health-check in the Nagios plugin convention */
	long max_pending_age; /* seconds, 0 = from the configuration */
	long max_parked_age;
	bool check;   /* --check: the configuration only, then exit */
	bool connect; /* --check --connect: and the database */
	bool verbose; /* -v: a line per call and a summary; else only failures */
} options;

static void
on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTION]...\n"
		"Deliver accepted webhook events to their routes.\n\n"
		"  -c, --config=FILE      configuration file (default: $HOOKINBOX_CONFIG,\n"
		"                         else " CONF_DEFAULT_PATH ")\n"
		"      --once             drain what is due now and exit (default)\n"
		"      --loop             keep polling (about once a second when idle);\n"
		"                         reconnect with backoff when the database goes away\n"
		"      --max-runtime=SECS end within SECS: start only calls that can end in\n"
		"                         time, hand the rest back unclaimed, record, exit\n"
		"      --concurrency=N    calls in flight at once ([worker] concurrency)\n"
		"      --batch=N          rows per fan-out and claim ([worker] batch)\n"
		"      --metrics-file=PATH  write Prometheus metrics there ([worker] metrics_file)\n"
		"      --health-check     check the queue, print one line, exit 0 healthy,\n"
		"                         1 unhealthy, 75 database unavailable\n"
		"      --max-pending-age=SECS  unhealthy when a pending event or action is\n"
		"                         older ([worker] health_max_pending_age, 900)\n"
		"      --max-parked-age=SECS   unhealthy when a parked action is older\n"
		"                         ([worker] health_max_parked_age, 86400)\n"
		"      --nagios           with --health-check: the Nagios plugin convention\n"
		"                         (HOOKINBOX OK|CRITICAL - ... | perfdata; exit 0 or 2)\n"
		"      --check            load and check the configuration, then exit\n"
		"      --connect          with --check: also connect with [worker] conninfo and\n"
		"                         check the schema and the role's privileges\n"
		"  -v, --verbose          log every call and a summary of the run; without\n"
		"                         it a run that goes well prints nothing (cron)\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and exit\n\n"
		"SIGTERM or SIGINT: stop claiming, hand back what has not started, finish\n"
		"the calls in flight, exit.\n"
		"SIGHUP (--loop): reload the configuration between sweeps.\n\n"
		"The worker connects with [worker] conninfo (else [database] conninfo).\n"
		"Exit status: 0 ok, 64 usage error, 70 internal error, 75 database\n"
		"unavailable (try again later), 78 configuration error (also when the\n"
		"database refuses the role, or its schema is older than this worker);\n"
		"with --health-check, 1 unhealthy.\n");
}

static int
parse_options(int argc, char **argv, options *o)
{
	enum {
		OPT_ONCE = 256,
		OPT_LOOP,
		OPT_MAX_RUNTIME,
		OPT_CONCURRENCY,
		OPT_BATCH,
		OPT_METRICS_FILE,
		OPT_HEALTH_CHECK,
		OPT_MAX_PENDING_AGE,
		OPT_MAX_PARKED_AGE,
		OPT_CHECK,
		OPT_CONNECT,
		OPT_NAGIOS
	};
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"once", no_argument, NULL, OPT_ONCE},
		{"loop", no_argument, NULL, OPT_LOOP},
		{"max-runtime", required_argument, NULL, OPT_MAX_RUNTIME},
		{"concurrency", required_argument, NULL, OPT_CONCURRENCY},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"metrics-file", required_argument, NULL, OPT_METRICS_FILE},
		{"health-check", no_argument, NULL, OPT_HEALTH_CHECK},
		{"max-pending-age", required_argument, NULL, OPT_MAX_PENDING_AGE},
		{"max-parked-age", required_argument, NULL, OPT_MAX_PARKED_AGE},
		{"check", no_argument, NULL, OPT_CHECK},
		{"connect", no_argument, NULL, OPT_CONNECT},
		{"nagios", no_argument, NULL, OPT_NAGIOS},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	bool once = false;
	long long v;
	int ch;

	while ((ch = getopt_long(argc, argv, "c:hvV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->config = optarg;
			break;
		case OPT_ONCE:
			once = true;
			break;
		case OPT_LOOP:
			o->loop = true;
			break;
		case OPT_MAX_RUNTIME:
			if (decimal_parse(optarg, 1, 86400 * 7, &v) != 0) {
				fprintf(stderr, PROG ": invalid --max-runtime \"%s\"\n", optarg);
				return -1;
			}
			o->max_runtime = v;
			break;
		case OPT_CONCURRENCY:
			if (decimal_parse(optarg, 1, 1024, &v) != 0) {
				fprintf(stderr, PROG ": invalid --concurrency \"%s\"\n", optarg);
				return -1;
			}
			o->concurrency = (int)v;
			break;
		case OPT_BATCH:
			if (decimal_parse(optarg, 1, 10000, &v) != 0) {
				fprintf(stderr, PROG ": invalid --batch \"%s\"\n", optarg);
				return -1;
			}
			o->batch = (int)v;
			break;
		case OPT_METRICS_FILE:
			if (*optarg == '\0') {
				fprintf(stderr, PROG ": invalid --metrics-file \"\"\n");
				return -1;
			}
			o->metrics_file = optarg;
			break;
		case OPT_HEALTH_CHECK:
			o->health_check = true;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_CONNECT:
			o->connect = true;
			break;
		case OPT_NAGIOS:
			o->nagios = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_MAX_PENDING_AGE:
		case OPT_MAX_PARKED_AGE:
			if (decimal_parse(optarg, 1, 365L * 86400, &v) != 0) {
				fprintf(stderr, PROG ": invalid --%s \"%s\"\n",
					ch == OPT_MAX_PENDING_AGE ? "max-pending-age"
								  : "max-parked-age",
					optarg);
				return -1;
			}
			if (ch == OPT_MAX_PENDING_AGE)
				o->max_pending_age = v;
			else
				o->max_parked_age = v;
			break;
		case 'h':
			usage(stdout);
			exit(EX_OK);
		case 'V':
			printf(PROG " " HOOKINBOX_VERSION "\n");
			exit(EX_OK);
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (once && o->loop) {
		fprintf(stderr, PROG ": --once and --loop exclude each other\n");
		return -1;
	}
	if (o->health_check && (once || o->loop || o->max_runtime)) {
		fprintf(stderr, PROG
			": --health-check runs no sweep: drop --once, --loop, --max-runtime\n");
		return -1;
	}
	if (o->check && (once || o->loop || o->max_runtime || o->health_check)) {
		fprintf(stderr, PROG ": --check runs no sweep: drop --once, --loop, --max-runtime, "
				     "--health-check\n");
		return -1;
	}
	if (o->nagios && !o->health_check) {
		fprintf(stderr, PROG ": --nagios goes with --health-check\n");
		return -1;
	}
	if (o->connect && !o->check) {
		fprintf(stderr, PROG ": --connect goes with --check\n");
		return -1;
	}
	if (!o->health_check && (o->max_pending_age || o->max_parked_age)) {
		fprintf(stderr,
			PROG ": --max-pending-age and --max-parked-age go with --health-check\n");
		return -1;
	}
	return 0;
}

static bool
stop_wanted(void *arg)
{
	(void)arg;
	return stop_requested != 0;
}

static bool
reload_wanted(void *arg)
{
	(void)arg;
	if (!reload_requested)
		return false;
	reload_requested = 0;
	return true;
}

/* one event=summary line for the run */
static void
summary(const loop_ctl *ctl, int64_t duration_ms, int status)
{
	const loop_counters *n = &ctl->n;
	char b[17][24];

	snprintf(b[0], sizeof(b[0]), "%ld", n->fanned_out);
	snprintf(b[1], sizeof(b[1]), "%ld", n->unrouted);
	snprintf(b[2], sizeof(b[2]), "%ld", n->sent);
	snprintf(b[3], sizeof(b[3]), "%ld", n->done);
	snprintf(b[4], sizeof(b[4]), "%ld", n->retry);
	snprintf(b[5], sizeof(b[5]), "%ld", n->parked);
	snprintf(b[6], sizeof(b[6]), "%ld", n->stale);
	snprintf(b[7], sizeof(b[7]), "%ld", n->lost);
	snprintf(b[8], sizeof(b[8]), "%lld", (long long)duration_ms);
	snprintf(b[9], sizeof(b[9]), "%d", status);
	snprintf(b[10], sizeof(b[10]), "%lld", (long long)(n->fanout_us / 1000));
	snprintf(b[11], sizeof(b[11]), "%lld", (long long)(n->claim_us / 1000));
	snprintf(b[12], sizeof(b[12]), "%lld", (long long)(n->record_us / 1000));
	snprintf(b[13], sizeof(b[13]), "%d", conf_worker(ctl->c)->claim_ahead);
	snprintf(b[14], sizeof(b[14]), "%ld", n->renewed);
	snprintf(b[15], sizeof(b[15]), "%ld", n->released);
	snprintf(b[16], sizeof(b[16]), "%ld", n->reconnects);
	log_kv("summary", LOG_NUM, "fanned_out", b[0], LOG_NUM, "unrouted", b[1], LOG_NUM, "sent",
	       b[2], LOG_NUM, "done", b[3], LOG_NUM, "retry", b[4], LOG_NUM, "parked", b[5],
	       LOG_NUM, "stale", b[6], LOG_NUM, "lease_lost", b[7], LOG_NUM, "duration_ms", b[8],
	       LOG_NUM, "fanout_ms", b[10], LOG_NUM, "claim_ms", b[11], LOG_NUM, "record_ms", b[12],
	       LOG_NUM, "claim_ahead", b[13], LOG_NUM, "renewed", b[14], LOG_NUM, "released", b[15],
	       LOG_NUM, "reconnects", b[16], LOG_NUM, "exit", b[9], LOG_END);
}

/* --check [--connect]: one line on stdout when good, on stderr when not */
static int
check(const conf *c, const options *opt)
{
	char msg[512] = "";
	bool unavailable;

	if (opt->connect && dbcheck_connect(conf_conninfo(c), DBCHECK_WORKER, PROG " --check", msg,
					    sizeof(msg), &unavailable) != 0) {
		log_error("%s: %s (with [%s] conninfo)", conf_path(c), msg,
			  conf_worker_conninfo_set(c) ? "worker" : "database");
		return unavailable ? EX_TEMPFAIL : EX_CONFIG;
	}
	printf("%s: ok (%zu routes; connects with [%s] conninfo)%s%s\n", conf_path(c),
	       conf_route_count(c), conf_worker_conninfo_set(c) ? "worker" : "database",
	       opt->connect ? "; database: " : "", msg);
	return EX_OK;
}

int
main(int argc, char **argv)
{
	options opt = {.config = NULL};
	loop_ctl ctl;
	char err[4096];
	conf *c;
	struct sigaction sa;
	int64_t started_us;
	int status;

	/* First: a reload asked for while the configuration is still being
	 * read must not end the process (SIGHUP's default action). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	log_init(PROG);
	if (parse_options(argc, argv, &opt) != 0) {
		usage(stderr);
		return EX_USAGE;
	}
	log_set_quiet(!opt.verbose);
	c = conf_load_for(conf_default_path(opt.config), CONF_WORKER, err, sizeof(err));
	if (c == NULL) {
		log_errors(err);
		return EX_CONFIG;
	}
	if (strcmp(conf_log_format(c), "json") == 0)
		log_set_format(LOG_FORMAT_JSON);
	if (opt.check) {
		status = check(c, &opt);
		conf_free(c);
		return status;
	}
	if (opt.health_check) {
		const worker_conf *wc = conf_worker(c);

		status = health_check(
			c, opt.max_pending_age ? opt.max_pending_age : wc->health_max_pending_age,
			opt.max_parked_age ? opt.max_parked_age : wc->health_max_parked_age,
			opt.nagios);
		conf_free(c);
		return status;
	}

	if (deliver_global_init() != 0) {
		log_error("could not initialise libcurl");
		conf_free(c);
		return EX_SOFTWARE;
	}
	srand48((long)clock_mono_us() ^ ((long)getpid() << 16));
	ctl = (loop_ctl){.c = c,
			 .loop = opt.loop,
			 .max_runtime_s = opt.max_runtime,
			 .concurrency = opt.concurrency,
			 .batch = opt.batch,
			 .metrics_file = opt.metrics_file,
			 .stop_requested = stop_wanted,
			 .reload_requested = reload_wanted,
			 .arg = NULL};
	log_kv("start", "version", HOOKINBOX_VERSION, "config", conf_path(c),
	       LOG_END); /* -v only */
	started_us = clock_mono_us();
	status = loop_run(&ctl);
	summary(&ctl, (clock_mono_us() - started_us) / 1000, status);
	deliver_global_cleanup();
	conf_free(ctl.c);
	return status;
}
