/*
 * main.c - hookinbox-worker: turn accepted events into downstream effects
 *
 * A run fans pending inbox rows out into actions, claims due actions under a
 * lease, calls downstream concurrently (or applies the route's SQL
 * function) and records each outcome under the lease token.  Run from cron
 * with --once (the default) or --max-runtime, or keep it polling with --loop.
 * Overlapping runs on one or several hosts are safe.
 *
 * Exit codes (sysexits.h): 0 ok, 64 usage, 70 internal error, 75 database
 * unavailable, 78 configuration error.
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
#include "deliver.h"
#include "failpoint.h"
#include "fanout.h"
#include "job.h"
#include "log.h"
#include "record.h"
#include "sqlfn.h"
#include "xalloc.h"

#define PROG "hookinbox-worker"

static volatile sig_atomic_t stop_requested;

typedef struct options {
	const char *config;
	bool loop;
	long max_runtime; /* seconds, 0 = none */
	int concurrency;  /* 0 = from the configuration */
	int batch;
} options;

typedef struct counters {
	long fanned_out, unrouted, actions, sent, done, retry, parked, stale, lost;
} counters;

typedef struct worker {
	const conf *c;
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
	bool db_failed;
} worker;

static void
on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
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
		   "  -h, --help             show this help and exit\n"
		   "  -V, --version          show the version and exit\n\n"
		   "SIGTERM or SIGINT: stop claiming, finish the calls in flight, exit.\n\n"
		   "Exit status: 0 ok, 64 usage error, 70 internal error, 75 database\n"
		   "unavailable (try again later), 78 configuration error.\n");
}

/* strict decimal in [min, max]; 0 or -1 */
static int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_options(int argc, char **argv, options *o)
{
	enum { OPT_ONCE = 256, OPT_LOOP, OPT_MAX_RUNTIME, OPT_CONCURRENCY, OPT_BATCH };
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"once", no_argument, NULL, OPT_ONCE},
		{"loop", no_argument, NULL, OPT_LOOP},
		{"max-runtime", required_argument, NULL, OPT_MAX_RUNTIME},
		{"concurrency", required_argument, NULL, OPT_CONCURRENCY},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	bool once = false;
	long v;
	int ch;

	while ((ch = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
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
			if (parse_long(optarg, 1, 86400 * 7, &v) != 0) {
				fprintf(stderr, PROG ": invalid --max-runtime \"%s\"\n", optarg);
				return -1;
			}
			o->max_runtime = v;
			break;
		case OPT_CONCURRENCY:
			if (parse_long(optarg, 1, 1024, &v) != 0) {
				fprintf(stderr, PROG ": invalid --concurrency \"%s\"\n", optarg);
				return -1;
			}
			o->concurrency = (int)v;
			break;
		case OPT_BATCH:
			if (parse_long(optarg, 1, 10000, &v) != 0) {
				fprintf(stderr, PROG ": invalid --batch \"%s\"\n", optarg);
				return -1;
			}
			o->batch = (int)v;
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
	       "error", j->error[0] ? j->error : NULL, NULL);
}

/* a job whose call is over (or never started): decide, log, queue for recording */
static void
finished(worker *w, job *j)
{
	decide(w, j);
	log_call(j);
	if (j->outcome == JOB_DONE && j->route && j->route->handler) {
		/* already recorded in the handler's transaction */
		w->n.done++;
		job_free(j);
		return;
	}
	if (j->outcome == JOB_LOST) {
		w->n.lost++;
		job_free(j);
		return;
	}
	push(&w->finished, &w->n_finished, &w->cap_finished, j);
}

/* start or carry out each claimed job */
static void
dispatch(worker *w)
{
	for (size_t i = 0; i < w->n_claimed; i++) {
		job *j = w->claimed[i];

		if (w->db_failed) {
			/* the connection is gone: it waits for its lease to expire */
			job_free(j);
			continue;
		}
		int64_t t0 = clock_mono_us();

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
	w->n_claimed = 0;
}

static int
flush(worker *w)
{
	int rc = record_run(w->conn, w->finished, w->n_finished);

	for (size_t i = 0; i < w->n_finished; i++) {
		job *j = w->finished[i];

		if (rc != 0)
			w->n.lost++;
		else if (j->outcome == JOB_DONE)
			w->n.done++;
		else if (j->outcome == JOB_RETRY)
			w->n.retry++;
		else if (j->outcome == JOB_PARK)
			w->n.parked++;
		else {
			char id[24];

			snprintf(id, sizeof(id), "%lld", (long long)j->action_id);
			log_kv("lease-lost", "route", j->route_name, "action", id, NULL);
			w->n.lost++;
		}
		job_free(j);
	}
	w->n_finished = 0;
	if (rc != 0 && db_lost(w->conn))
		w->db_failed = true;
	return rc;
}

static void
write_metrics(const worker *w, int64_t duration_ms)
{
	const char *path = conf_worker(w->c)->metrics_file;
	char *tmp;
	FILE *f;

	if (path == NULL)
		return;
	tmp = xasprintf("%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL) {
		log_warn("could not write metrics file \"%s\": %s", tmp, strerror(errno));
		free(tmp);
		return;
	}
	fprintf(f,
		"# hookinbox-worker: the last run\n"
		"hookinbox_worker_last_run_timestamp_seconds %lld\n"
		"hookinbox_worker_last_run_duration_seconds %.3f\n"
		"hookinbox_worker_last_run_fanned_out %ld\n"
		"hookinbox_worker_last_run_unrouted %ld\n"
		"hookinbox_worker_last_run_sent %ld\n"
		"hookinbox_worker_last_run_done %ld\n"
		"hookinbox_worker_last_run_retry %ld\n"
		"hookinbox_worker_last_run_parked %ld\n"
		"hookinbox_worker_last_run_stale %ld\n"
		"hookinbox_worker_last_run_lease_lost %ld\n"
		"hookinbox_worker_last_run_ok %d\n",
		(long long)clock_now(), (double)duration_ms / 1000.0, w->n.fanned_out, w->n.unrouted,
		w->n.sent, w->n.done, w->n.retry, w->n.parked, w->n.stale, w->n.lost,
		w->db_failed ? 0 : 1);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		log_warn("could not write metrics file \"%s\": %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
}

static void
run(worker *w)
{
	int64_t start = now_ms(), next_fan = 0, next_claim = 0, last_flush = start;
	int64_t deadline = w->opt.max_runtime ? start + w->opt.max_runtime * 1000 : 0;
	bool stopping = false, fan_idle = false, claim_idle = false;
	job **done = xcalloc((size_t)w->concurrency, sizeof(*done));

	for (;;) {
		int64_t now = now_ms();
		bool busy = false;
		size_t inflight, got;

		if (!stopping && (stop_requested || (deadline && now >= deadline)))
			stopping = true;

		if (!stopping && now >= next_fan) {
			fanout_result fr;

			if (fanout_run(w->conn, w->c, w->batch, &fr) != 0) {
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
		}

		inflight = deliver_inflight(w->dl);
		if (!stopping && now >= next_claim && inflight < (size_t)w->concurrency &&
		    (inflight == 0 || (size_t)w->concurrency - inflight >= (size_t)(w->concurrency + 3) / 4)) {
			int want = w->concurrency - (int)inflight;
			claim_counts cc;

			if (want > w->batch)
				want = w->batch;
			if (claim_run(w->conn, w->c, want, &w->claimed, &w->n_claimed, &w->cap_claimed, &cc) !=
			    0) {
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
				dispatch(w);
				if (w->db_failed)
					break;
			}
		}

		got = deliver_poll(w->dl, deliver_inflight(w->dl) > 0 ? 50 : 0, done,
				   (size_t)w->concurrency);
		for (size_t i = 0; i < got; i++) {
			if (done[i]->status >= 200 && done[i]->status <= 299)
				FAILPOINT("worker-after-call");
			finished(w, done[i]);
		}
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
		}

		if (inflight == 0 && w->n_finished == 0) {
			if (stopping)
				break;
			if (fan_idle && claim_idle) {
				if (!w->opt.loop)
					break;
				for (int i = 0; i < 10 && !stop_requested; i++)
					sleep_ms(100);
				fan_idle = claim_idle = false;
				next_fan = next_claim = 0;
			} else if (!busy) {
				sleep_ms(50);
			}
		}
	}
	free(done);
}

int
main(int argc, char **argv)
{
	options opt = {.config = NULL};
	worker w = {.c = NULL};
	char err[1024];
	conf *c;
	struct sigaction sa;
	int64_t t0;
	int status = EX_OK;

	log_init(PROG);
	if (parse_options(argc, argv, &opt) != 0) {
		usage(stderr);
		return EX_USAGE;
	}
	c = conf_load(conf_default_path(opt.config), err, sizeof(err));
	if (c == NULL) {
		log_error("%s", err);
		return EX_CONFIG;
	}
	if (strcmp(conf_log_format(c), "json") == 0)
		log_set_format(LOG_FORMAT_JSON);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	if (deliver_global_init() != 0) {
		log_error("could not initialise libcurl");
		conf_free(c);
		return EX_SOFTWARE;
	}
	w.c = c;
	w.opt = opt;
	w.concurrency = opt.concurrency ? opt.concurrency : conf_worker(c)->concurrency;
	w.batch = opt.batch ? opt.batch : conf_worker(c)->batch;
	w.policy = (backoff_policy){.base_s = conf_worker(c)->backoff_base,
				    .cap_s = conf_worker(c)->backoff_cap,
				    .retry_window_s = conf_worker(c)->retry_window};
	srand48((long)clock_mono_us() ^ ((long)getpid() << 16));

	t0 = now_ms();
	w.conn = db_connect(conf_conninfo(c));
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
		char b[10][24];

		snprintf(b[0], sizeof(b[0]), "%ld", w.n.fanned_out);
		snprintf(b[1], sizeof(b[1]), "%ld", w.n.unrouted);
		snprintf(b[2], sizeof(b[2]), "%ld", w.n.sent);
		snprintf(b[3], sizeof(b[3]), "%ld", w.n.done);
		snprintf(b[4], sizeof(b[4]), "%ld", w.n.retry);
		snprintf(b[5], sizeof(b[5]), "%ld", w.n.parked);
		snprintf(b[6], sizeof(b[6]), "%ld", w.n.stale);
		snprintf(b[7], sizeof(b[7]), "%ld", w.n.lost);
		snprintf(b[8], sizeof(b[8]), "%lld", (long long)(now_ms() - t0));
		snprintf(b[9], sizeof(b[9]), "%d", status);
		log_kv("summary", "fanned_out", b[0], "unrouted", b[1], "sent", b[2], "done", b[3],
		       "retry", b[4], "parked", b[5], "stale", b[6], "lease_lost", b[7],
		       "duration_ms", b[8], "exit", b[9], NULL);
		write_metrics(&w, now_ms() - t0);
	}
	for (size_t i = 0; i < w.n_claimed; i++)
		job_free(w.claimed[i]);
	free(w.claimed);
	for (size_t i = 0; i < w.n_finished; i++)
		job_free(w.finished[i]);
	free(w.finished);
	deliver_free(w.dl);
	PQfinish(w.conn);
	deliver_global_cleanup();
	conf_free(c);
	return status;
}
