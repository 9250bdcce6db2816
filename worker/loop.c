/* SPDX-License-Identifier: ISC */
/*
 * loop.c - the worker's engine: fan out, claim, call, record
 *
 * One sweep fans pending inbox rows out into actions, claims due actions
 * under a lease, calls downstream concurrently (or applies the route's SQL
 * function) and records each outcome under the lease token, until nothing
 * is due (--once), or it is told to stop, or its deadline nears.  With
 * --loop it sleeps about a second when idle, reloads on SIGHUP (when busy,
 * once the calls in flight are recorded, claiming nothing meanwhile) and
 * reconnects with backoff when the database goes away.
 *
 * Everything the engine uses is in one struct worker on loop_run's stack:
 * the settings, the calls (a dispatch: dispatch.c starts, collects and
 * records them), what it tells other workers, and the running sweep's
 * pace.  A sweep is a round of steps (sweep_watch, fan_out with top_up,
 * claim_step, deliver_step, record_step, settle) over that one struct.  The
 * database connection carries the engine's idle function (while a
 * statement runs, calls keep moving), given when the connection is made.
 */
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "backoff.h"
#include "claim.h"
#include "clock.h"
#include "db.h"
#include "decimal.h"
#include "deliver.h"
#include "dispatch.h"
#include "fanout.h"
#include "gate.h"
#include "log.h"
#include "metrics.h"
#include "queue.h"
#include "route_report.h"
#include "tally.h"
#include "xalloc.h"

#define METRICS_EVERY_MS 15000 /* --loop: the metrics file is rewritten this often */
/* --loop: the routes are compared with other workers' this often, so that a
 * worker that runs for weeks still hears of a host with other routes */
#define ROUTES_CHECK_EVERY_MS 300000
#ifdef HOOKINBOX_TEST
/* tests shorten it (HOOKINBOX_ROUTES_CHECK_MS) */
static int64_t
routes_check_every_ms(void)
{
	const char *v = getenv("HOOKINBOX_ROUTES_CHECK_MS");
	long long ms;

	return v != NULL && decimal_parse(v, 0, INT64_MAX, &ms) == 0 ? ms : ROUTES_CHECK_EVERY_MS;
}
#else
#define routes_check_every_ms() ROUTES_CHECK_EVERY_MS
#endif
#define SCHEMA_MIGRATION 13	/* the newest migration this worker needs */
#define RECONNECT_FIRST_MS 1000 /* --loop: first wait before reconnecting, doubling */
#define RECONNECT_MAX_MS 30000

/* one sweep's pace: when each step is due next, and what the last found */
typedef struct sweep_state {
	int64_t now;		      /* this round's clock (ms) */
	int64_t next_fan, next_claim; /* when to fan out, to claim next */
	int64_t last_flush;	      /* when outcomes were last recorded */
	bool fan_idle, claim_idle;    /* nothing more was there to fan out, to claim */
	bool busy;		      /* this round did something */
	size_t inflight;	      /* calls in flight as the record step saw them */
} sweep_state;

typedef struct worker {
	loop_ctl *ctl;
	/* what follows from the configuration and the options (configure) */
	int batch, claim_ahead;
	int64_t shortest_timeout_ms;
	/* the calls, the connection they share and the limits they work under */
	dispatch d;
	size_t claim_first; /* the route the next claim starts with (taken in turn) */
	/* what this worker tells others, and when it last did */
	char routes_fp[64]; /* this configuration's routes fingerprint ("": unknown) */
	int64_t last_routes_check_ms;
	int64_t started_wall, started_ms, last_metrics_ms; /* the metrics file */
	sweep_state sw;					   /* the running sweep */
} worker;

/* the key the worker's conninfo comes from, for what a refusal says */
static const char *
conninfo_name(const conf *c)
{
	return conf_worker_conninfo_set(c) ? "[worker] conninfo" : "[database] conninfo";
}

/*
 * How long a statement of the sweep may go unanswered (db_connect): a
 * lease, past which what it claims or renews has run out anyway.
 */
static int
answer_bound_ms(const conf *c)
{
	return conf_worker(c)->lease * 1000;
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

static bool
stop_requested(const worker *w)
{
	return w->ctl->stop_requested != NULL && w->ctl->stop_requested(w->ctl->arg);
}

/* the database refused the worker for good (db_refusal) */
static bool
refused(const worker *w)
{
	return w->d.conn != NULL && db_refusal(w->d.conn) != NULL;
}

/* the connection's idle function: calls keep moving while a statement runs */
static void
while_in_db(void *arg, int pg_socket)
{
	worker *w = arg;

	deliver_wait(w->d.dl, pg_socket, 50);
	/* a statement of pump's own (an SQL handler, a renewal) only waits: no nesting */
	if (w->d.pumping)
		return;
	w->d.in_db = true;
	dispatch_pump(&w->d, 0);
	w->d.in_db = false;
}

/* the metrics file, with the database-wide figures when the database answers */
static void
write_metrics(worker *w)
{
	const char *path =
		w->ctl->metrics_file ? w->ctl->metrics_file : conf_worker(w->ctl->c)->metrics_file;
	queue_snapshot q = {.n_ep = 0};
	bool have_q = false, ok = w->d.conn != NULL && !w->d.db_failed && !refused(w);
	const loop_counters *n = w->d.n;
	metrics_run run;

	w->last_metrics_ms = now_ms();
	if (path == NULL)
		return;
	if (ok && !db_lost(w->d.conn))
		have_q = queue_snapshot_take(w->d.conn, &q) == 0;
	run = (metrics_run){.started = w->started_wall,
			    .now = clock_now(),
			    .duration_s = (double)(now_ms() - w->started_ms) / 1000.0,
			    .ok = ok,
			    .fanned_out = n->fanned_out,
			    .unrouted = n->unrouted,
			    .sent = n->sent,
			    .done = n->done,
			    .retry = n->retry,
			    .parked = n->parked,
			    .stale = n->stale,
			    .lost = n->lost};
	(void)metrics_write(w->d.m, path, have_q ? &q : NULL, &run);
	queue_snapshot_release(&q);
}

/* the settings that follow from the configuration (and the options) */
static void
configure(worker *w)
{
	const conf *c = w->ctl->c;
	const worker_conf *wc = conf_worker(c);

	w->d.concurrency = w->ctl->concurrency ? w->ctl->concurrency : wc->concurrency;
	w->batch = w->ctl->batch ? w->ctl->batch : wc->batch;
	w->claim_ahead = wc->claim_ahead;
	w->d.lease_s = wc->lease;
	w->d.policy = (backoff_policy){.base_s = wc->backoff_base,
				       .cap_s = wc->backoff_cap,
				       .retry_window_s = wc->retry_window};
	w->shortest_timeout_ms = 0;
	for (size_t i = 0; i < conf_route_count(c); i++) {
		int64_t t = (int64_t)conf_route_at(c, i)->timeout * 1000;

		if (w->shortest_timeout_ms == 0 || t < w->shortest_timeout_ms)
			w->shortest_timeout_ms = t;
	}
	log_set_format(strcmp(conf_log_format(c), "json") == 0 ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT);
	for (size_t i = 0; i < conf_route_count(c); i++)
		metrics_route(w->d.m, conf_route_at(c, i)->name);
	dispatch_resize(&w->d);
	{
		size_t n = conf_route_count(c);
		const route_conf **routes = xcalloc(n + 1, sizeof(*routes));

		for (size_t i = 0; i < n; i++)
			routes[i] = conf_route_at(c, i);
		gate_free(w->d.gate);
		w->d.gate = gate_new(routes, n, w->d.concurrency);
		free(routes);
	}
}

/* write the gate's route reports (the connection must be free) */
static void
write_route_reports(worker *w)
{
	if (route_report_flush(w->d.conn, w->d.gate) != 0)
		w->d.db_failed = true;
}

/*
 * A new connection: the schema must have this worker's migration; the
 * routes with due actions this configuration lacks are named once.
 * Returns 0, or -1 (refused, or the database went away again).
 */
static int
connected(worker *w)
{
	if (db_check_schema(w->d.conn, SCHEMA_MIGRATION) != 0 ||
	    route_report_unserved(w->d.conn, w->ctl->c) != 0 ||
	    route_report_check(w->d.conn, w->ctl->c, w->routes_fp, sizeof(w->routes_fp)) != 0) {
		w->d.db_failed = !refused(w);
		return -1;
	}
	w->last_routes_check_ms = now_ms();
	return 0;
}

/*
 * SIGHUP: load the configuration again.  Called between sweeps, when no
 * job borrows a route of the running one.  A bad file, or a new conninfo
 * that does not connect, keeps the running configuration.
 */
static void
reload(worker *w)
{
	char err[4096];
	conf *nc = conf_load_for(conf_path(w->ctl->c), CONF_WORKER, err, sizeof(err));
	int old_concurrency = w->d.concurrency;

	if (nc == NULL) {
		log_error("reload failed, keeping the running configuration");
		log_errors(err);
		return;
	}
	if (strcmp(conf_conninfo(nc), conf_conninfo(w->ctl->c)) != 0) {
		PGconn *conn = db_connect(conf_conninfo(nc), conninfo_name(nc), while_in_db, w,
					  answer_bound_ms(nc), NULL);

		if (conn == NULL) {
			log_error(
				"reload failed, keeping the running configuration: the new conninfo "
				"does not connect");
			conf_free(nc);
			return;
		}
		PQfinish(w->d.conn);
		w->d.conn = conn;
	}
	conf_free(w->ctl->c);
	w->ctl->c = nc;
	configure(w);
	if (w->d.concurrency != old_concurrency) {
		deliver_free(w->d.dl); /* idle: nothing in flight */
		w->d.dl = deliver_new(w->d.concurrency);
	}
	log_kv("reload", "config", conf_path(w->ctl->c), LOG_END);
	w->last_routes_check_ms = now_ms();
	if ((route_report_unserved(w->d.conn, w->ctl->c) != 0 ||
	     route_report_check(w->d.conn, w->ctl->c, w->routes_fp, sizeof(w->routes_fp)) != 0) &&
	    db_lost(w->d.conn))
		w->d.db_failed = true;
}

/* --loop, between sweeps: sleep about a second, reload when asked */
static void
idle(worker *w)
{
	loop_ctl *ctl = w->ctl;

	if (ctl->reload_requested != NULL && ctl->reload_requested(ctl->arg))
		reload(w);
	else if (now_ms() - w->last_routes_check_ms >= routes_check_every_ms()) {
		w->last_routes_check_ms = now_ms();
		if (route_report_check(w->d.conn, ctl->c, w->routes_fp, sizeof(w->routes_fp)) !=
			    0 &&
		    db_lost(w->d.conn))
			w->d.db_failed = true;
	}
	for (int i = 0; i < 10 && !stop_requested(w); i++)
		sleep_ms(100);
}

/* the database is gone or refuses the worker: the sweep ends */
static bool
sweep_failed(const worker *w)
{
	return w->d.db_failed || refused(w);
}

/* all calls recorded, nothing claimed or to hand back */
static bool
drained(const worker *w)
{
	return w->sw.inflight == 0 && w->d.finished.n == 0 && w->d.claimed.n == 0 &&
	       w->d.handback.n == 0;
}

/* fan out and claim again at once */
static void
sweep_restart(worker *w)
{
	w->sw.fan_idle = w->sw.claim_idle = false;
	w->sw.next_fan = w->sw.next_claim = 0;
}

/* the start of a round: stop, write the metrics, note a reload when asked */
static void
sweep_watch(worker *w)
{
	const loop_ctl *ctl = w->ctl;
	int64_t now = w->sw.now;

	if (!w->d.stopping && (stop_requested(w) || (w->d.deadline_ms && now >= w->d.deadline_ms)))
		w->d.stopping = true;
	if (ctl->loop && now - w->last_metrics_ms >= METRICS_EVERY_MS)
		write_metrics(w);
	if (ctl->loop && !w->d.reload_pending && ctl->reload_requested != NULL &&
	    ctl->reload_requested(ctl->arg))
		w->d.reload_pending = true;
}

/* top-up: the actions of this configuration's routes for what another fanned out */
static int
top_up(worker *w, const char *fp)
{
	fanout_result fr;

	if (fanout_topup(w->d.conn, w->ctl->c, w->batch, fp, &fr) != 0)
		return -1;
	w->d.n->actions += fr.actions;
	w->sw.fan_idle = fr.rows < w->batch;
	w->sw.busy = w->sw.busy || fr.rows > 0;
	return 0;
}

/* fan-out: pending inbox rows into actions.  Returns -1 when the sweep must end */
static int
fan_out(worker *w)
{
	sweep_state *s = &w->sw;
	const char *fp = w->routes_fp[0] != '\0' ? w->routes_fp : NULL;
	int64_t t0 = clock_mono_us();
	fanout_result fr;
	int rc;

	if (w->d.stopping || w->d.reload_pending || s->now < s->next_fan)
		return 0;
	rc = fanout_run(w->d.conn, w->ctl->c, w->batch, fp, &fr);
	if (rc == 0) {
		w->d.n->fanned_out += fr.rows;
		w->d.n->unrouted += fr.unrouted;
		w->d.n->actions += fr.actions;
		s->fan_idle = fr.rows < w->batch;
		s->busy = s->busy || fr.rows > 0;
		if (s->fan_idle)
			rc = top_up(w, fp);
	}
	w->d.n->fanout_us += clock_mono_us() - t0;
	if (rc != 0) {
		if (db_lost(w->d.conn))
			w->d.db_failed = true;
		if (sweep_failed(w))
			return -1;
		s->next_fan = s->now + 1000;
	} else
		s->next_fan = s->fan_idle ? s->now + 1000 : s->now;
	dispatch_pump(&w->d, 0);
	return 0;
}

/*
 * Claim ahead: up to claim_ahead more rounds of calls wait in w->d.claimed,
 * so that a fan-out or record statement of several round-trip times (slots
 * refill from w->d.claimed while it runs) does not leave slots idle.  One
 * round ahead measured 0.70-0.89x of the ideal rate in the benchmark, two
 * 0.89-0.92x, three no better.  The configuration keeps the rounds within
 * the lease (conf.c).  Near the deadline, when even the shortest call could
 * not end in time, nothing more is claimed.
 */
static bool
may_claim(const worker *w, size_t inflight)
{
	const sweep_state *s = &w->sw;
	size_t ahead = (size_t)(w->claim_ahead > 0 ? w->claim_ahead : 1);

	return !w->d.stopping && !w->d.reload_pending && s->now >= s->next_claim &&
	       (w->d.deadline_ms == 0 || s->now + w->shortest_timeout_ms <= w->d.deadline_ms) &&
	       w->d.claimed.n < ahead * (size_t)w->d.concurrency &&
	       inflight + w->d.claimed.n < (size_t)(w->claim_ahead + 1) * (size_t)w->d.concurrency;
}

/* claim up to want actions within the route room, and pace the next claim */
static int
claim_some(worker *w, int want)
{
	sweep_state *s = &w->sw;
	claim_result cr;
	int64_t t0 = clock_mono_us();
	int rc = 0;
	bool filled;

	claim_result_init(&cr, conf_route_count(w->ctl->c));
	if (want > 0) {
		claim_request req = {.c = w->ctl->c,
				     .limit = want,
				     .route_limits = gate_room_limits(w->d.gate),
				     .first = w->claim_first++};

		rc = claim_run(w->d.conn, &req, &w->d.claimed, &cr);
	}
	w->d.n->claim_us += clock_mono_us() - t0;
	if (rc != 0) {
		claim_result_release(&cr);
		if (db_lost(w->d.conn))
			w->d.db_failed = true;
		if (sweep_failed(w))
			return -1;
		s->next_claim = s->now + 1000;
		return 0;
	}
	tally_claim(w->d.n, w->d.m, w->ctl->c, &cr);
	/* want 0: every route is held, or at its cap (claim again when a call
	 * ends: not idle while any is out) */
	filled = want > 0 && (cr.claimed + cr.stale + cr.parked + cr.review >= want ||
			      gate_room_filled(w->d.gate, cr.route_got));
	/* idle: nothing more is due.  A route at its cap may have more: claim
	 * again when a call ends (flush) */
	s->claim_idle = !filled && !gate_room_capped(w->d.gate);
	s->next_claim = filled ? s->now : s->now + 500;
	s->busy = s->busy || cr.claimed > 0;
	claim_result_release(&cr);
	dispatch_pump(&w->d, 0);
	return 0;
}

/* claim: what is due, up to the rounds ahead, the batch and the route room */
static int
claim_step(worker *w)
{
	sweep_state *s = &w->sw;
	size_t inflight = deliver_inflight(w->d.dl);
	int want;
	long room;

	if (!may_claim(w, inflight)) {
		if (!w->d.stopping && w->d.deadline_ms != 0 &&
		    s->now + w->shortest_timeout_ms > w->d.deadline_ms)
			s->claim_idle = true;
		return 0;
	}
	want = (w->claim_ahead + 1) * w->d.concurrency - (int)(inflight + w->d.claimed.n);
	write_route_reports(w);
	if (w->d.db_failed)
		return -1;
	if (deliver_inflight(w->d.dl) == 0)
		gate_no_calls(w->d.gate);
	room = gate_room(w->d.gate, w->d.claimed.v, w->d.claimed.n, w->claim_ahead, s->now);
	if (want > w->batch)
		want = w->batch;
	if (want > room)
		want = (int)room;
	return claim_some(w, want);
}

/* deliver: collect finished calls and start claimed ones */
static int
deliver_step(worker *w)
{
	size_t got = dispatch_pump(&w->d, deliver_inflight(w->d.dl) > 0 ? 50 : 0);

	if (sweep_failed(w))
		return -1;
	w->sw.busy = w->sw.busy || got > 0;
	return 0;
}

/* record: write the finished outcomes when there are enough, or now and then */
static int
record_step(worker *w)
{
	sweep_state *s = &w->sw;

	s->now = now_ms();
	s->inflight = deliver_inflight(w->d.dl);
	if (w->d.finished.n == 0 || !(w->d.finished.n >= (size_t)w->batch || s->inflight == 0 ||
				      s->now - s->last_flush >= 200 || w->d.stopping))
		return 0;
	dispatch_flush(&w->d);
	s->last_flush = s->now;
	s->next_claim = s->now;
	s->claim_idle = false; /* what was recorded may make more due (order) */
	if (sweep_failed(w))
		return -1;
	dispatch_pump(&w->d, 0);
	return 0;
}

/*
 * The end of a round: once drained, reload when asked, end the sweep when
 * stopping or done, idle (--loop); else wait a little when nothing moved.
 * Returns true when the sweep is over.
 */
static bool
settle(worker *w)
{
	sweep_state *s = &w->sw;

	if (s->inflight == 0 && w->d.claimed.n > 0 && !s->busy)
		sleep_ms(10); /* claimed jobs wait for their route's rate */
	if (w->d.reload_pending && drained(w)) {
		/* no job borrows a route of the running configuration now */
		w->d.reload_pending = false;
		if (!w->d.stopping)
			reload(w);
		if (w->d.db_failed)
			return true;
		sweep_restart(w);
		return false;
	}
	if (!drained(w))
		return false;
	if (w->d.stopping) {
		write_route_reports(w);
		return true;
	}
	if (s->fan_idle && s->claim_idle) {
		write_route_reports(w);
		if (!w->ctl->loop ||
		    (w->d.deadline_ms != 0 && s->now + w->shortest_timeout_ms > w->d.deadline_ms))
			return true;
		idle(w);
		if (w->d.db_failed)
			return true;
		sweep_restart(w);
	} else if (!s->busy) {
		sleep_ms(50);
	}
	return false;
}

/*
 * Fan out, claim, call, record until nothing is due (--once), or stopping
 * and everything claimed is finished or handed back, or the database is
 * gone or refuses the worker.
 */
static void
sweep(worker *w)
{
	w->sw = (sweep_state){.last_flush = now_ms()};
	for (;;) {
		w->sw.now = now_ms();
		w->sw.busy = false;
		sweep_watch(w);
		if (fan_out(w) != 0 || claim_step(w) != 0 || sweep_failed(w) ||
		    deliver_step(w) != 0 || record_step(w) != 0 || settle(w))
			break;
	}
}

/*
 * --loop: connect again, waiting 1 s, 2 s, 4 s ... up to 30 s between
 * tries; calls in flight go on meanwhile and are recorded once connected.
 * Returns 0, EX_CONFIG (refused) or EX_TEMPFAIL (told to stop).
 */
static int
reconnect(worker *w)
{
	long delay = RECONNECT_FIRST_MS;

	PQfinish(w->d.conn);
	w->d.conn = NULL;
	for (;;) {
		int64_t until = now_ms() + delay;
		bool refused_us = false;

		while (now_ms() < until && !stop_requested(w)) {
			if (deliver_inflight(w->d.dl) > 0)
				(void)dispatch_pump(&w->d, 100);
			else
				sleep_ms(100);
		}
		if (stop_requested(w))
			return EX_TEMPFAIL;
		w->d.conn = db_connect(conf_conninfo(w->ctl->c), conninfo_name(w->ctl->c),
				       while_in_db, w, answer_bound_ms(w->ctl->c), &refused_us);
		if (w->d.conn != NULL) {
			w->d.db_failed = false;
			if (connected(w) == 0) {
				w->d.n->reconnects++;
				log_kv("reconnected", LOG_END);
				return 0;
			}
			if (refused(w))
				return EX_CONFIG;
			PQfinish(w->d.conn);
			w->d.conn = NULL;
		} else if (refused_us) {
			return EX_CONFIG;
		}
		delay = delay * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : delay * 2;
	}
}

int
loop_run(loop_ctl *ctl)
{
	worker w = {.ctl = ctl};
	int status = EX_OK;
	bool refused_us = false;

	dispatch_init(&w.d);
	w.d.n = &ctl->n;
	w.d.m = metrics_new();
	configure(&w);
	w.started_ms = w.last_metrics_ms = now_ms();
	w.started_wall = clock_now();
	if (ctl->max_runtime_s > 0)
		w.d.deadline_ms = w.started_ms + ctl->max_runtime_s * 1000;
	w.d.dl = deliver_new(w.d.concurrency);

	w.d.conn = db_connect(conf_conninfo(ctl->c), conninfo_name(ctl->c), while_in_db, &w,
			      answer_bound_ms(ctl->c), &refused_us);
	if (w.d.conn == NULL) {
		w.d.db_failed = true;
		status = refused_us ? EX_CONFIG : EX_TEMPFAIL;
		if (!refused_us && ctl->loop)
			status = reconnect(&w);
	} else if (connected(&w) != 0) {
		status = refused(&w) ? EX_CONFIG : EX_TEMPFAIL;
		if (status == EX_TEMPFAIL && ctl->loop)
			status = reconnect(&w);
	}
	while (status == EX_OK) {
		sweep(&w);
		if (refused(&w)) {
			status = EX_CONFIG;
			break;
		}
		if (!w.d.db_failed)
			break;
		if (!ctl->loop || w.d.stopping) {
			log_error(
				"lost the database connection; unrecorded calls are retried after "
				"their leases expire");
			status = EX_TEMPFAIL;
			break;
		}
		log_error("lost the database connection; reconnecting (calls in flight go on)");
		status = reconnect(&w);
	}
	if (status == EX_CONFIG && refused(&w))
		log_error("stopping: %s (a configuration error: check the role in %s "
			  "and its grants, and that sql/install.sql has run)",
			  db_refusal(w.d.conn), conninfo_name(ctl->c));
	write_metrics(&w);
	dispatch_release(&w.d);
	gate_free(w.d.gate);
	deliver_free(w.d.dl);
	PQfinish(w.d.conn);
	metrics_free(w.d.m);
	return status;
}
