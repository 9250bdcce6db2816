/*
 * main.c - hookinbox-worker: turn accepted events into downstream effects
 *
 * A run fans pending inbox rows out into actions, claims due actions under a
 * lease, calls downstream concurrently (or applies the route's SQL
 * function) and records each outcome under the lease token.  Run from cron
 * with --once (the default) or --max-runtime, or keep it polling with --loop.
 * Overlapping runs on one or several hosts are safe.  --health-check only
 * looks at the queue and says whether it is healthy.
 *
 * Exit codes (sysexits.h): 0 ok, 64 usage, 70 internal error, 75 database
 * unavailable, 78 configuration error; --health-check: 1 unhealthy.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "backoff.h"
#include "claim.h"
#include "clock.h"
#include "conf.h"
#include "db.h"
#include "dbcheck.h"
#include "decimal.h"
#include "deliver.h"
#include "failpoint.h"
#include "fanout.h"
#include "job.h"
#include "log.h"
#include "metrics.h"
#include "queue.h"
#include "record.h"
#include "sqlfn.h"
#include "xalloc.h"

#define PROG "hookinbox-worker"
#define METRICS_EVERY_MS 15000 /* --loop: the metrics file is rewritten this often */
#define EX_UNHEALTHY 1	       /* --health-check: a threshold is exceeded */

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
	bool check;	/* --check: the configuration only, then exit */
	bool connect;	/* --check --connect: and the database */
	bool verbose;	/* -v: a line per call and a summary; else only failures */
} options;

typedef struct counters {
	long fanned_out, unrouted, actions, sent, done, retry, parked, stale, lost;
	int64_t fanout_us, claim_us, record_us; /* time in the database, by step */
} counters;

typedef struct worker {
	conf *c; /* replaced by a reload between sweeps, when no job borrows a route */
	options opt;
	PGconn *conn;
	deliver *dl;
	backoff_policy policy;
	int concurrency, batch;
	job **claimed; /* from the last claim, not yet started */
	size_t n_claimed, cap_claimed;
	job **finished; /* waiting to be recorded */
	size_t n_finished, cap_finished;
	counters n;
	job **done;	/* deliver_poll's output, concurrency entries */
	bool in_db;	/* inside db_exec: the connection is busy */
	bool pumping;	/* inside pump: w->done and w->claimed are being walked */
	bool db_failed;
	metrics *m;
	int64_t started_wall, started_ms, last_metrics_ms;
} worker;

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
	fprintf(f, "Usage: " PROG " [OPTION]...\n"
		   "Deliver accepted webhook events to their routes.\n\n"
		   "  -c, --config=FILE      configuration file (default: $HOOKINBOX_CONFIG,\n"
		   "                         else " CONF_DEFAULT_PATH ")\n"
		   "      --once             drain what is due now and exit (default)\n"
		   "      --loop             keep polling (about once a second when idle)\n"
		   "      --max-runtime=SECS stop claiming after SECS, finish and record the calls\n"
		   "                         in flight, exit\n"
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
		   "SIGTERM or SIGINT: stop claiming, finish the calls in flight, exit.\n"
		   "SIGHUP (--loop): reload the configuration between sweeps.\n\n"
		   "The worker connects with [worker] conninfo (else [database] conninfo).\n"
		   "Exit status: 0 ok, 64 usage error, 70 internal error, 75 database\n"
		   "unavailable (try again later), 78 configuration error; with\n"
		   "--health-check, 1 unhealthy.\n");
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
					ch == OPT_MAX_PENDING_AGE ? "max-pending-age" : "max-parked-age",
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
		fprintf(stderr, PROG ": --health-check runs no sweep: drop --once, --loop, --max-runtime\n");
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
		fprintf(stderr, PROG ": --max-pending-age and --max-parked-age go with --health-check\n");
		return -1;
	}
	return 0;
}

static int64_t
now_ms(void)
{
	return clock_mono_us() / 1000;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL); /* a signal cuts it short, as it should */
}

static void
push(job ***arr, size_t *n, size_t *cap, job *j)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*arr = xrealloc(*arr, *cap * sizeof(**arr));
	}
	(*arr)[(*n)++] = j;
}

static const char *
outcome_name(job_outcome o)
{
	switch (o) {
	case JOB_DONE:
		return "done";
	case JOB_RETRY:
		return "retry";
	case JOB_PARK:
		return "parked";
	case JOB_LOST:
		break;
	}
	return "lease-lost";
}

/* append "; what" to j->error, truncating */
static void
error_append(job *j, const char *what)
{
	size_t len = strlen(j->error);

	snprintf(j->error + len, sizeof(j->error) - len, "%s%s", len ? "; " : "", what);
}

/*
 * Decide what a finished call means: done, retry after a delay, or park.
 * Handler jobs that sqlfn.c already recorded (done) or lost keep that.
 */
static void
decide(worker *w, job *j)
{
	call_class cls;
	double delay;

	if (j->route != NULL && j->route->handler != NULL) {
		if (j->outcome == JOB_DONE || j->outcome == JOB_LOST)
			return; /* sqlfn.c recorded it, or the lease was lost */
		cls = CALL_RETRY;
	} else if (j->outcome == JOB_PARK) {
		return; /* decided before any call (payload purged) */
	} else if (j->status > 0)
		cls = backoff_classify(j->status);
	else
		cls = CALL_RETRY;
	if (cls == CALL_SUCCESS) {
		j->outcome = JOB_DONE;
		return;
	}
	if (cls == CALL_FATAL) {
		j->outcome = JOB_PARK;
		return;
	}
	delay = backoff_delay(&w->policy, j->attempt, drand48(), j->retry_after_s);
	if (backoff_exhausted(&w->policy, j->attempt, j->max_attempts, j->age_s, delay)) {
		error_append(j, j->attempt >= j->max_attempts ? "attempts exhausted"
							      : "retry window exhausted");
		j->outcome = JOB_PARK;
		return;
	}
	j->outcome = JOB_RETRY;
	j->delay_s = delay;
}

static void
log_call(const job *j)
{
	char id[24], attempt[16], status[16], ms[24], delay[24];

	snprintf(id, sizeof(id), "%lld", (long long)j->action_id);
	snprintf(attempt, sizeof(attempt), "%d", j->attempt);
	snprintf(status, sizeof(status), "%ld", j->status);
	snprintf(ms, sizeof(ms), "%lld", (long long)j->duration_ms);
	snprintf(delay, sizeof(delay), "%.1f", j->delay_s);
	log_kv("call", "route", j->route_name, "action", id, "attempt", attempt, "status", status,
	       "duration_ms", ms, "outcome", outcome_name(j->outcome),
	       "retry_in_s", j->outcome == JOB_RETRY ? delay : NULL,
	       "error", j->error[0] ? j->error : NULL, LOG_END);
}

/* count a finished call by route and status class, with its duration */
static void
count_call(worker *w, const job *j)
{
	call_kind k;

	if (j->route != NULL && j->route->handler != NULL)
		k = j->outcome == JOB_DONE ? CALL_OK : CALL_ERROR;
	else if (j->status >= 200 && j->status <= 299)
		k = CALL_2XX;
	else if (j->status >= 300 && j->status <= 399)
		k = CALL_3XX;
	else if (j->status >= 400 && j->status <= 499)
		k = CALL_4XX;
	else if (j->status >= 500 && j->status <= 599)
		k = CALL_5XX;
	else if (j->timed_out)
		k = CALL_TIMEOUT;
	else
		k = CALL_ERROR;
	metrics_call(w->m, j->route_name, k, (double)j->duration_ms / 1000.0);
}

/* a job whose call is over (or never started): decide, log, queue for recording */
static void
finished(worker *w, job *j)
{
	decide(w, j);
	log_call(j);
	if (j->called)
		count_call(w, j);
	if (j->outcome == JOB_DONE && j->route && j->route->handler) {
		/* already recorded in the handler's transaction */
		w->n.done++;
		metrics_action(w->m, j->route_name, ACT_DONE);
		job_free(j);
		return;
	}
	if (j->outcome == JOB_LOST) {
		w->n.lost++;
		metrics_action(w->m, j->route_name, ACT_LEASE_LOST);
		job_free(j);
		return;
	}
	push(&w->finished, &w->n_finished, &w->cap_finished, j);
}

/*
 * Start claimed jobs while a call slot is free, or carry them out at once
 * (SQL handlers, jobs that cannot be sent); the rest wait in w->claimed
 * for the next slot.  Claiming ahead like this keeps every slot busy while
 * the worker is inside a database round trip.
 */
static void
dispatch(worker *w)
{
	size_t keep = 0;

	for (size_t i = 0; i < w->n_claimed; i++) {
		job *j = w->claimed[i];
		bool call = j->route != NULL && j->route->handler == NULL && j->body != NULL;
		int64_t t0;

		if (w->db_failed) {
			/* the connection is gone: it waits for its lease to expire */
			job_free(j);
			continue;
		}
		/* no free slot; or a handler while the connection is busy */
		if ((call && deliver_inflight(w->dl) >= (size_t)w->concurrency) ||
		    (!call && w->in_db)) {
			w->claimed[keep++] = j;
			continue;
		}
		t0 = clock_mono_us();
		if (j->route == NULL) {
			snprintf(j->error, sizeof(j->error), "route \"%s\" is not configured",
				 j->route_name);
			finished(w, j);
			continue;
		}
		if (j->body == NULL) {
			snprintf(j->error, sizeof(j->error), "payload purged");
			j->outcome = JOB_PARK;
			finished(w, j);
			continue;
		}
		w->n.sent++;
		j->called = true;
		if (j->route->handler != NULL) {
			if (sqlfn_apply(w->conn, j) != 0)
				w->db_failed = true;
			j->duration_ms = (clock_mono_us() - t0) / 1000;
			finished(w, j);
			continue;
		}
		if (deliver_start(w->dl, j) != 0)
			finished(w, j);
	}
	w->n_claimed = keep;
}

/* collect the calls that have finished and refill their slots */
static size_t
pump(worker *w, int timeout_ms)
{
	size_t got = deliver_poll(w->dl, timeout_ms, w->done, (size_t)w->concurrency);

	w->pumping = true;
	for (size_t i = 0; i < got; i++) {
		if (w->done[i]->status >= 200 && w->done[i]->status <= 299)
			FAILPOINT("worker-after-call");
		finished(w, w->done[i]);
	}
	dispatch(w);
	w->pumping = false;
	return got;
}

/* db_exec's idle function: calls keep moving while a statement runs */
static void
while_in_db(void *arg, int pg_socket)
{
	worker *w = arg;

	deliver_wait(w->dl, pg_socket, 50);
	/* a statement of pump's own (an SQL handler) only waits: no nesting */
	if (w->pumping)
		return;
	w->in_db = true;
	pump(w, 0);
	w->in_db = false;
}

static int
flush(worker *w)
{
	/* calls that finish while this records go to a fresh list */
	job **batch = w->finished;
	size_t n = w->n_finished;
	int64_t t0 = clock_mono_us();
	int rc;

	w->finished = NULL;
	w->n_finished = w->cap_finished = 0;
	rc = record_run(w->conn, batch, n);
	w->n.record_us += clock_mono_us() - t0;

	for (size_t i = 0; i < n; i++) {
		job *j = batch[i];

		if (rc != 0) {
			w->n.lost++;
			metrics_action(w->m, j->route_name, ACT_LEASE_LOST);
		} else if (j->outcome == JOB_DONE) {
			w->n.done++;
			metrics_action(w->m, j->route_name, ACT_DONE);
		} else if (j->outcome == JOB_RETRY) {
			w->n.retry++;
			metrics_action(w->m, j->route_name, ACT_RETRY);
		} else if (j->outcome == JOB_PARK) {
			w->n.parked++;
			metrics_action(w->m, j->route_name, ACT_PARKED);
		} else {
			char id[24];

			snprintf(id, sizeof(id), "%lld", (long long)j->action_id);
			log_kv("lease-lost", "route", j->route_name, "action", id, LOG_END);
			w->n.lost++;
			metrics_action(w->m, j->route_name, ACT_LEASE_LOST);
		}
		job_free(j);
	}
	free(batch);
	if (rc != 0 && db_lost(w->conn))
		w->db_failed = true;
	return rc;
}

static const char *
metrics_path(const worker *w)
{
	return w->opt.metrics_file ? w->opt.metrics_file : conf_worker(w->c)->metrics_file;
}

/* the metrics file, with the database-wide figures when the database answers */
static void
write_metrics(worker *w)
{
	const char *path = metrics_path(w);
	queue_snapshot q = {.n_ep = 0};
	bool have_q = false;
	metrics_run run;

	w->last_metrics_ms = now_ms();
	if (path == NULL)
		return;
	if (w->conn != NULL && !w->db_failed && !db_lost(w->conn))
		have_q = queue_snapshot_take(w->conn, &q) == 0;
	run = (metrics_run){.started = w->started_wall,
			    .now = clock_now(),
			    .duration_s = (double)(now_ms() - w->started_ms) / 1000.0,
			    .ok = w->conn != NULL && !w->db_failed,
			    .fanned_out = w->n.fanned_out,
			    .unrouted = w->n.unrouted,
			    .sent = w->n.sent,
			    .done = w->n.done,
			    .retry = w->n.retry,
			    .parked = w->n.parked,
			    .stale = w->n.stale,
			    .lost = w->n.lost};
	(void)metrics_write(w->m, path, have_q ? &q : NULL, &run);
	queue_snapshot_release(&q);
}

/* the settings that follow from the configuration (and the options) */
static void
configure(worker *w)
{
	const worker_conf *wc = conf_worker(w->c);

	w->concurrency = w->opt.concurrency ? w->opt.concurrency : wc->concurrency;
	w->batch = w->opt.batch ? w->opt.batch : wc->batch;
	w->policy = (backoff_policy){.base_s = wc->backoff_base,
				     .cap_s = wc->backoff_cap,
				     .retry_window_s = wc->retry_window};
	log_set_format(strcmp(conf_log_format(w->c), "json") == 0 ? LOG_FORMAT_JSON
								   : LOG_FORMAT_TEXT);
	for (size_t i = 0; i < conf_route_count(w->c); i++)
		metrics_route(w->m, conf_route_at(w->c, i)->name);
}

/*
 * SIGHUP: load the configuration again.  Called between sweeps, when no
 * job borrows a route of the running one.  A bad file, or a new conninfo
 * that does not connect, keeps the running configuration.
 */
static void
reload(worker *w)
{
	char err[1024];
	conf *nc;
	int old_concurrency = w->concurrency;

	reload_requested = 0;
	nc = conf_load_for(conf_path(w->c), CONF_WORKER, err, sizeof(err));
	if (nc == NULL) {
		log_error("reload failed, keeping the running configuration: %s", err);
		return;
	}
	if (strcmp(conf_conninfo(nc), conf_conninfo(w->c)) != 0) {
		PGconn *conn = db_connect(conf_conninfo(nc));

		if (conn == NULL) {
			log_error("reload failed, keeping the running configuration: the new conninfo "
				  "does not connect");
			conf_free(nc);
			return;
		}
		PQfinish(w->conn);
		w->conn = conn;
	}
	conf_free(w->c);
	w->c = nc;
	configure(w);
	if (w->concurrency != old_concurrency) {
		deliver_free(w->dl); /* idle: nothing in flight */
		w->dl = deliver_new(w->concurrency);
	}
	log_kv("reload", "config", conf_path(w->c), LOG_END);
}

static void
run(worker *w)
{
	int64_t start = now_ms(), next_fan = 0, next_claim = 0, last_flush = start;
	int64_t deadline = w->opt.max_runtime ? start + w->opt.max_runtime * 1000 : 0;
	bool stopping = false, fan_idle = false, claim_idle = false;

	w->done = xcalloc((size_t)w->concurrency, sizeof(*w->done));
	db_set_idle(while_in_db, w);

	for (;;) {
		int64_t now = now_ms();
		bool busy = false;
		size_t inflight, got;

		if (!stopping && (stop_requested || (deadline && now >= deadline)))
			stopping = true;
		if (w->opt.loop && now - w->last_metrics_ms >= METRICS_EVERY_MS)
			write_metrics(w);

		if (!stopping && now >= next_fan) {
			fanout_result fr;

			int64_t t0 = clock_mono_us();
			int frc = fanout_run(w->conn, w->c, w->batch, &fr);

			w->n.fanout_us += clock_mono_us() - t0;
			if (frc != 0) {
				if (db_lost(w->conn)) {
					w->db_failed = true;
					break;
				}
				next_fan = now + 1000;
			} else {
				w->n.fanned_out += fr.rows;
				w->n.unrouted += fr.unrouted;
				w->n.actions += fr.actions;
				fan_idle = fr.rows < w->batch;
				next_fan = fan_idle ? now + 1000 : now;
				busy = fr.rows > 0;
			}
			pump(w, 0);
		}

		/*
		 * Claim ahead: up to two more rounds of calls wait in w->claimed, so
		 * that a fan-out or record statement of several round-trip times
		 * (slots refill from w->claimed while it runs) does not leave slots
		 * idle.  One round ahead measured 0.70-0.89x of the ideal rate in
		 * the benchmark, two 0.89-0.92x, three no better.
		 */
		inflight = deliver_inflight(w->dl);
		if (!stopping && now >= next_claim && w->n_claimed < 2 * (size_t)w->concurrency &&
		    inflight + w->n_claimed < 3 * (size_t)w->concurrency) {
			int want = 3 * w->concurrency - (int)(inflight + w->n_claimed);
			claim_counts cc;

			if (want > w->batch)
				want = w->batch;
			int64_t t0 = clock_mono_us();
			int crc = claim_run(w->conn, w->c, want, &w->claimed, &w->n_claimed, &w->cap_claimed,
					    &cc, w->m);

			w->n.claim_us += clock_mono_us() - t0;
			if (crc != 0) {
				if (db_lost(w->conn)) {
					w->db_failed = true;
					break;
				}
				next_claim = now + 1000;
			} else {
				w->n.stale += cc.stale;
				w->n.parked += cc.parked;
				claim_idle = cc.claimed + cc.stale + cc.parked < want;
				next_claim = claim_idle ? now + 500 : now;
				busy = busy || cc.claimed > 0;
				pump(w, 0);
				if (w->db_failed)
					break;
			}
		}

		got = pump(w, deliver_inflight(w->dl) > 0 ? 50 : 0);
		if (w->db_failed)
			break;
		busy = busy || got > 0;

		now = now_ms();
		inflight = deliver_inflight(w->dl);
		if (w->n_finished > 0 && (w->n_finished >= (size_t)w->batch || inflight == 0 ||
					  now - last_flush >= 200 || stopping)) {
			(void)flush(w);
			last_flush = now;
			next_claim = now;
			if (w->db_failed)
				break;
			pump(w, 0);
		}

		if (inflight == 0 && w->n_finished == 0 && w->n_claimed == 0) {
			if (stopping)
				break;
			if (fan_idle && claim_idle) {
				if (!w->opt.loop)
					break;
				if (reload_requested) {
					reload(w);
					w->done = xrealloc(w->done, (size_t)w->concurrency * sizeof(*w->done));
				}
				for (int i = 0; i < 10 && !stop_requested && !reload_requested; i++)
					sleep_ms(100);
				fan_idle = claim_idle = false;
				next_fan = next_claim = 0;
			} else if (!busy) {
				sleep_ms(50);
			}
		}
	}
	db_set_idle(NULL, NULL);
	free(w->done);
	w->done = NULL;
}

/* " over N s" part of a health line; appends to buf */
static void
health_append(char *buf, size_t cap, const char *what, double age, const char *label,
	      const char *name, long limit)
{
	size_t len = strlen(buf);

	snprintf(buf + len, cap - len, "%s%s is %.0f s old (%s \"%s\"), over %ld s", len ? "; " : "",
		 what, age, label, name ? name : "?", limit);
}

/*
 * One line on stdout and the exit status: as is, or with --nagios in the
 * plugin convention (status word, performance data, 0 OK or 2 CRITICAL; a
 * database that does not answer is critical for the service too).
 */
static int
health_report(const options *opt, int rc, const char *line, const char *perf)
{
	if (!opt->nagios) {
		printf("%s\n", line);
		return rc;
	}
	printf("HOOKINBOX %s - %s%s%s\n", rc == EX_OK ? "OK" : "CRITICAL", line, perf[0] ? " | " : "",
	       perf);
	return rc == EX_OK ? 0 : 2;
}

/*
 * --health-check: one line on stdout and EX_OK, EX_UNHEALTHY, or
 * EX_TEMPFAIL when the database does not answer.
 */
static int
health_check(const conf *c, const options *opt)
{
	const worker_conf *wc = conf_worker(c);
	long max_pending = opt->max_pending_age ? opt->max_pending_age : wc->health_max_pending_age;
	long max_parked = opt->max_parked_age ? opt->max_parked_age : wc->health_max_parked_age;
	queue_snapshot q = {.n_ep = 0};
	const char *ev_name, *act_name, *park_name;
	double ev_age, act_age, park_age;
	char bad[768] = "", line[1024], perf[256] = "";
	PGconn *conn = db_connect(conf_conninfo(c));
	int rc;

	if (conn == NULL)
		return health_report(opt, EX_TEMPFAIL, "unavailable: could not connect to the database", "");
	if (queue_snapshot_take(conn, &q) != 0) {
		rc = health_report(opt, EX_TEMPFAIL, "unavailable: could not query the queue", "");
		goto out;
	}
	ev_age = queue_oldest_pending_event(&q, &ev_name);
	act_age = queue_oldest_pending_action(&q, &act_name);
	park_age = queue_oldest_parked_action(&q, &park_name);
	if (ev_age > (double)max_pending)
		health_append(bad, sizeof(bad), "oldest pending event", ev_age, "endpoint", ev_name,
			      max_pending);
	if (act_age > (double)max_pending)
		health_append(bad, sizeof(bad), "oldest pending action", act_age, "route", act_name,
			      max_pending);
	if (park_age > (double)max_parked)
		health_append(bad, sizeof(bad), "oldest parked action", park_age, "route", park_name,
			      max_parked);
	snprintf(perf, sizeof(perf),
		 "pending_event_age=%.0fs;;%ld pending_action_age=%.0fs;;%ld parked_action_age=%.0fs;;%ld",
		 ev_age < 0 ? 0 : ev_age, max_pending, act_age < 0 ? 0 : act_age, max_pending,
		 park_age < 0 ? 0 : park_age, max_parked);
	if (bad[0] != '\0') {
		snprintf(line, sizeof(line), "unhealthy: %s", bad);
		rc = health_report(opt, EX_UNHEALTHY, line, perf);
		goto out;
	}
	snprintf(line, sizeof(line),
		 "ok: oldest pending event %.0f s, oldest pending action %.0f s (limit %ld s), "
		 "oldest parked action %.0f s (limit %ld s)",
		 ev_age < 0 ? 0 : ev_age, act_age < 0 ? 0 : act_age, max_pending,
		 park_age < 0 ? 0 : park_age, max_parked);
	rc = health_report(opt, EX_OK, line, perf);
out:
	queue_snapshot_release(&q);
	PQfinish(conn);
	return rc;
}

/* --check [--connect]: one line on stdout when good, on stderr when not */
static int
check(const conf *c, const options *opt)
{
	char msg[512] = "";
	bool unavailable;

	if (opt->connect && dbcheck_connect(conf_conninfo(c), DBCHECK_WORKER, PROG " --check", msg,
					    sizeof(msg), &unavailable) != 0) {
		log_error("%s: %s", conf_path(c), msg);
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
	worker w = {.c = NULL};
	char err[1024];
	conf *c;
	struct sigaction sa;
	int status = EX_OK;

	log_init(PROG);
	if (parse_options(argc, argv, &opt) != 0) {
		usage(stderr);
		return EX_USAGE;
	}
	log_set_quiet(!opt.verbose);
	c = conf_load_for(conf_default_path(opt.config), CONF_WORKER, err, sizeof(err));
	if (c == NULL) {
		log_error("%s", err);
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
		status = health_check(c, &opt);
		conf_free(c);
		return status;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	if (deliver_global_init() != 0) {
		log_error("could not initialise libcurl");
		conf_free(c);
		return EX_SOFTWARE;
	}
	w.c = c;
	w.opt = opt;
	w.m = metrics_new();
	configure(&w);
	srand48((long)clock_mono_us() ^ ((long)getpid() << 16));

	w.started_ms = w.last_metrics_ms = now_ms();
	w.started_wall = clock_now();
	w.conn = db_connect(conf_conninfo(w.c));
	if (w.conn == NULL) {
		status = EX_TEMPFAIL;
		goto out;
	}
	w.dl = deliver_new(w.concurrency);
	run(&w);
	if (w.db_failed) {
		log_error("lost the database connection; unrecorded calls are retried after their "
			  "leases expire");
		status = EX_TEMPFAIL;
	}
out:
	{
		char b[13][24];

		snprintf(b[0], sizeof(b[0]), "%ld", w.n.fanned_out);
		snprintf(b[1], sizeof(b[1]), "%ld", w.n.unrouted);
		snprintf(b[2], sizeof(b[2]), "%ld", w.n.sent);
		snprintf(b[3], sizeof(b[3]), "%ld", w.n.done);
		snprintf(b[4], sizeof(b[4]), "%ld", w.n.retry);
		snprintf(b[5], sizeof(b[5]), "%ld", w.n.parked);
		snprintf(b[6], sizeof(b[6]), "%ld", w.n.stale);
		snprintf(b[7], sizeof(b[7]), "%ld", w.n.lost);
		snprintf(b[8], sizeof(b[8]), "%lld", (long long)(now_ms() - w.started_ms));
		snprintf(b[9], sizeof(b[9]), "%d", status);
		snprintf(b[10], sizeof(b[10]), "%lld", (long long)(w.n.fanout_us / 1000));
		snprintf(b[11], sizeof(b[11]), "%lld", (long long)(w.n.claim_us / 1000));
		snprintf(b[12], sizeof(b[12]), "%lld", (long long)(w.n.record_us / 1000));
		log_kv("summary", "fanned_out", b[0], "unrouted", b[1], "sent", b[2], "done", b[3],
		       "retry", b[4], "parked", b[5], "stale", b[6], "lease_lost", b[7],
		       "duration_ms", b[8], "fanout_ms", b[10], "claim_ms", b[11], "record_ms", b[12],
		       "exit", b[9], LOG_END);
		write_metrics(&w);
	}
	for (size_t i = 0; i < w.n_claimed; i++)
		job_free(w.claimed[i]);
	free(w.claimed);
	for (size_t i = 0; i < w.n_finished; i++)
		job_free(w.finished[i]);
	free(w.finished);
	deliver_free(w.dl);
	PQfinish(w.conn);
	metrics_free(w.m);
	deliver_global_cleanup();
	conf_free(w.c);
	return status;
}
