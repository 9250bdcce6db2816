/* SPDX-License-Identifier: ISC */
/*
 * metrics.c - the worker's Prometheus text-format metrics file
 *
 * Route names come from the configuration and the database; both keep them
 * to [A-Za-z0-9._-] (conf.c's valid_name), but labels are escaped anyway.
 *
 * The counters and the histogram count across runs: the file is their
 * store.  Each write reads the counters the file holds, adds what this
 * process counted since its last write and writes the sums, under an
 * exclusive lock on PATH.lock, so runs that overlap (cron, several --loop
 * workers on one host) add up instead of overwriting each other, and rate()
 * sees one counter that only grows.  Removing the file starts them again at
 * zero, which Prometheus reads as a counter reset.
 */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decimal.h"
#include "dynbuf.h"
#include "failpoint.h"
#include "log.h"
#include "xalloc.h"

/* upper bounds of the latency buckets, seconds; +Inf follows */
static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define N_BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

/* the responder counts the duplicates it answers under this reason */
#define DUPLICATE_REASON "duplicate"

static const char *const call_names[CALL__COUNT] = {
	[CALL_2XX] = "2xx",	    [CALL_3XX] = "3xx",	    [CALL_4XX] = "4xx", [CALL_5XX] = "5xx",
	[CALL_TIMEOUT] = "timeout", [CALL_ERROR] = "error", [CALL_OK] = "ok",
};

static const char *const action_names[ACT__COUNT] = {
	[ACT_DONE] = "done",   [ACT_RETRY] = "retry",		[ACT_PARKED] = "parked",
	[ACT_STALE] = "stale", [ACT_LEASE_LOST] = "lease_lost",
};

typedef struct route_stat {
	char *name;
	unsigned long long calls[CALL__COUNT];
	unsigned long long actions[ACT__COUNT];
	unsigned long long bucket[N_BUCKETS]; /* non-cumulative; summed when written */
	unsigned long long count;
	double sum;
} route_stat;

struct metrics {
	route_stat *rt;
	size_t n, cap;
	struct metrics *written; /* what the file already holds of this process's counts */
};

metrics *
metrics_new(void)
{
	return xcalloc(1, sizeof(metrics));
}

void
metrics_free(metrics *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->rt[i].name);
	free(m->rt);
	metrics_free(m->written);
	free(m);
}

static route_stat *
find(metrics *m, const char *route)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->rt[i].name, route) == 0)
			return &m->rt[i];
	m->rt = xgrow(m->rt, m->n + 1, &m->cap, sizeof(*m->rt));
	memset(&m->rt[m->n], 0, sizeof(m->rt[m->n]));
	m->rt[m->n].name = xstrdup(route);
	return &m->rt[m->n++];
}

void
metrics_route(metrics *m, const char *route)
{
	(void)find(m, route);
}

void
metrics_call(metrics *m, const char *route, call_kind k, double seconds)
{
	route_stat *r = find(m, route);
	size_t b = 0;

	r->calls[k]++;
	while (b < N_BUCKETS && seconds > buckets[b])
		b++;
	if (b < N_BUCKETS)
		r->bucket[b]++;
	r->count++;
	r->sum += seconds;
}

void
metrics_action(metrics *m, const char *route, action_kind k)
{
	find(m, route)->actions[k]++;
}

/* a label value with \, " and newline escaped, as the text format wants */
static void
put_label(FILE *f, const char *v)
{
	if (v == NULL)
		return;
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void
header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
series(FILE *f, const char *name, const char *label, const char *value, const char *label2,
       const char *value2, const char *num)
{
	fputs(name, f);
	if (label != NULL) {
		fprintf(f, "{%s=\"", label);
		put_label(f, value);
		fputc('"', f);
		if (label2 != NULL) {
			fprintf(f, ",%s=\"", label2);
			put_label(f, value2);
			fputc('"', f);
		}
		fputc('}', f);
	}
	fprintf(f, " %s\n", num);
}

static void
series_l(FILE *f, const char *name, const char *label, const char *value, const char *label2,
	 const char *value2, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	series(f, name, label, value, label2, value2, num);
}

static void
series_d(FILE *f, const char *name, const char *label, const char *value, double v)
{
	char num[48];

	snprintf(num, sizeof(num), "%.3f", v);
	series(f, name, label, value, NULL, NULL, num);
}

static void
write_counters(FILE *f, const metrics *m)
{
	header(f, "hookinbox_worker_calls_total", "counter",
	       "Downstream calls and SQL handler runs by route and status class "
	       "(2xx 3xx 4xx 5xx timeout error; ok for a committed SQL handler).");
	for (size_t i = 0; i < m->n; i++)
		for (int k = 0; k < CALL__COUNT; k++)
			series_l(f, "hookinbox_worker_calls_total", "route", m->rt[i].name, "class",
				 call_names[k], (long long)m->rt[i].calls[k]);

	header(f, "hookinbox_worker_call_duration_seconds", "histogram",
	       "Duration of downstream calls and SQL handler runs.");
	for (size_t i = 0; i < m->n; i++) {
		const route_stat *r = &m->rt[i];
		unsigned long long cum = 0;
		char le[32];

		for (size_t b = 0; b < N_BUCKETS; b++) {
			cum += r->bucket[b];
			snprintf(le, sizeof(le), "%g", buckets[b]);
			series_l(f, "hookinbox_worker_call_duration_seconds_bucket", "route",
				 r->name, "le", le, (long long)cum);
		}
		series_l(f, "hookinbox_worker_call_duration_seconds_bucket", "route", r->name, "le",
			 "+Inf", (long long)r->count);
		series_d(f, "hookinbox_worker_call_duration_seconds_sum", "route", r->name, r->sum);
		series_l(f, "hookinbox_worker_call_duration_seconds_count", "route", r->name, NULL,
			 NULL, (long long)r->count);
	}

	header(f, "hookinbox_worker_actions_total", "counter",
	       "Actions this worker recorded by route and outcome "
	       "(done retry parked stale lease_lost).");
	for (size_t i = 0; i < m->n; i++)
		for (int k = 0; k < ACT__COUNT; k++)
			series_l(f, "hookinbox_worker_actions_total", "route", m->rt[i].name,
				 "outcome", action_names[k], (long long)m->rt[i].actions[k]);
}

/* name{k1="v1",...} num, for n label pairs (kv: key, value, key, value ...) */
static void
series_kv(FILE *f, const char *name, const char *const *kv, size_t n, const char *num)
{
	fputs(name, f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%c%s=\"", i == 0 ? '{' : ',', kv[2 * i]);
		put_label(f, kv[2 * i + 1]);
		fputc('"', f);
	}
	fprintf(f, "%s %s\n", n > 0 ? "}" : "", num);
}

/*
 * The responders' request durations, named and labelled after OpenTelemetry's
 * http.server.request.duration (seconds, its advised buckets): counted since
 * the install in hookinbox.request_duration, so they only grow.
 */
static void
write_durations(FILE *f, const queue_snapshot *q)
{
	static const char name[] = "hookinbox_http_server_request_duration_seconds";
	char metric[96], num[48], status[16];

	header(f, name, "histogram",
	       "Duration of webhook requests in the responders, from the request's parameters to "
	       "the reply written, by endpoint, provider, outcome (accepted duplicate review "
	       "rejected error handshake) and status.");
	for (size_t i = 0; i < q->n_dur; i++) {
		const queue_duration *d = &q->dur[i];
		const char *kv[10] = {"endpoint",
				      d->endpoint,
				      "provider",
				      d->provider,
				      "outcome",
				      d->outcome,
				      "http_response_status_code",
				      status,
				      "le",
				      NULL};
		long long cum = 0;

		snprintf(status, sizeof(status), "%d", d->status);
		snprintf(metric, sizeof(metric), "%s_bucket", name);
		for (size_t b = 0; b <= q->n_bounds; b++) {
			cum += d->buckets[b];
			kv[9] = b < q->n_bounds ? q->bounds[b] : "+Inf";
			snprintf(num, sizeof(num), "%lld", cum);
			series_kv(f, metric, kv, 5, num);
		}
		snprintf(metric, sizeof(metric), "%s_sum", name);
		snprintf(num, sizeof(num), "%.6f", d->sum);
		series_kv(f, metric, kv, 4, num);
		snprintf(metric, sizeof(metric), "%s_count", name);
		snprintf(num, sizeof(num), "%lld", cum);
		series_kv(f, metric, kv, 4, num);
	}
}

/* counts by age (older_than) and the oldest, per endpoint or route */
static void
write_aged(FILE *f, const queue_aged *v, size_t n, const char *label, const char *count_name,
	   const char *count_help, const char *age_name, const char *age_help)
{
	header(f, count_name, "gauge", count_help);
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < QUEUE_AGES; a++)
			series_l(f, count_name, label, v[i].name, "older_than", queue_age_labels[a],
				 v[i].older_than[a]);
	header(f, age_name, "gauge", age_help);
	for (size_t i = 0; i < n; i++)
		series_d(f, age_name, label, v[i].name, v[i].oldest_s < 0 ? 0 : v[i].oldest_s);
}

/* what blocks each route an operator or a downstream stopped: a route with no row is free */
static void
write_blocked(FILE *f, const queue_snapshot *q)
{
	header(f, "hookinbox_route_paused", "gauge",
	       "1 while an operator has paused the route (sql/route.sql -v do=resume ends it).");
	for (size_t i = 0; i < q->n_blocked; i++)
		series_l(f, "hookinbox_route_paused", "route", q->blocked[i].name, NULL, NULL,
			 q->blocked[i].paused);
	header(f, "hookinbox_route_hold_remaining_seconds", "gauge",
	       "Seconds until the route's hold ends (a Retry-After, an open breaker's "
	       "cool-down; sql/route.sql -v do=clear ends it), 0 when not held.");
	for (size_t i = 0; i < q->n_blocked; i++)
		series_d(f, "hookinbox_route_hold_remaining_seconds", "route", q->blocked[i].name,
			 q->blocked[i].hold_s);
	header(f, "hookinbox_route_breaker_open", "gauge",
	       "1 while the route's circuit breaker is open or probing.");
	for (size_t i = 0; i < q->n_blocked; i++)
		series_l(f, "hookinbox_route_breaker_open", "route", q->blocked[i].name, NULL, NULL,
			 q->blocked[i].breaker_open);
}

static void
write_queue(FILE *f, const queue_snapshot *q)
{
	static const char *const states[] = {"pending", "retrying", "in_flight", "parked",
					     "review"};
	static const struct {
		const char *name, *help;
		double (*age)(const queue_snapshot *q, const char **which);
	} oldest[] = {
		{"hookinbox_oldest_pending_event_age_seconds",
		 "Age of the oldest accepted event not yet fanned out (0 when none).",
		 queue_oldest_pending_event},
		{"hookinbox_oldest_pending_action_age_seconds",
		 "Age of the oldest pending action since it was made (0 when none).",
		 queue_oldest_pending_action},
		{"hookinbox_oldest_parked_action_age_seconds",
		 "Time since the oldest parked action was parked (0 when none).",
		 queue_oldest_parked_action},
	};
	const char *which;
	double age;

	header(f, "hookinbox_inbox_pending_events", "gauge",
	       "Accepted events not yet fanned out into actions, by endpoint.");
	for (size_t i = 0; i < q->n_ep; i++)
		series_l(f, "hookinbox_inbox_pending_events", "endpoint", q->ep[i].name, NULL, NULL,
			 q->ep[i].pending);
	header(f, "hookinbox_inbox_accepted_last_hour", "gauge",
	       "Events accepted (inbox rows received) in the last hour, by endpoint.");
	for (size_t i = 0; i < q->n_ep; i++)
		series_l(f, "hookinbox_inbox_accepted_last_hour", "endpoint", q->ep[i].name, NULL,
			 NULL, q->ep[i].accepted_hour);

	header(f, "hookinbox_actions", "gauge",
	       "Open actions by route and state: pending (all), retrying (pending with "
	       "attempts > 0), in_flight (pending under a lease), parked, review (an ordered "
	       "route could not place it: sql/order-review.sql).");
	for (size_t i = 0; i < q->n_rt; i++) {
		const queue_route *r = &q->rt[i];
		const long v[] = {r->pending, r->retrying, r->in_flight, r->parked, r->review};

		for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++)
			series_l(f, "hookinbox_actions", "route", r->name, "state", states[s],
				 v[s]);
	}

	header(f, "hookinbox_rejections_total", "counter",
	       "Requests the responders rejected, by endpoint and reason (hookinbox.rejection, "
	       "flushed every 10 s; the retention purge drops the oldest hours).");
	for (size_t i = 0; i < q->n_rej; i++)
		if (strcmp(q->rej[i].reason, DUPLICATE_REASON) != 0)
			series_l(f, "hookinbox_rejections_total", "endpoint", q->rej[i].endpoint,
				 "reason", q->rej[i].reason, q->rej[i].count);
	/* a duplicate is answered 200: not a refusal, but worth watching apart */
	header(f, "hookinbox_inbox_duplicates_total", "counter",
	       "Deliveries answered as duplicates of a stored one (200, nothing stored), by "
	       "endpoint (hookinbox.rejection reason 'duplicate', flushed every 10 s).");
	for (size_t i = 0; i < q->n_rej; i++)
		if (strcmp(q->rej[i].reason, DUPLICATE_REASON) == 0)
			series_l(f, "hookinbox_inbox_duplicates_total", "endpoint",
				 q->rej[i].endpoint, NULL, NULL, q->rej[i].count);

	for (size_t i = 0; i < sizeof(oldest) / sizeof(oldest[0]); i++) {
		age = oldest[i].age(q, &which);
		header(f, oldest[i].name, "gauge", oldest[i].help);
		series_d(f, oldest[i].name, NULL, NULL, age < 0 ? 0 : age);
	}

	header(f, "hookinbox_route_oldest_pending_action_age_seconds", "gauge",
	       "Age of the route's oldest pending action since it was made (0 when none).");
	for (size_t i = 0; i < q->n_rt; i++)
		series_d(f, "hookinbox_route_oldest_pending_action_age_seconds", "route",
			 q->rt[i].name,
			 q->rt[i].oldest_pending_s < 0 ? 0 : q->rt[i].oldest_pending_s);
	write_aged(f, q->parked, q->n_parked, "route", "hookinbox_parked_actions",
		   "Parked actions by route, counting those parked longer than older_than "
		   "(0s: all).",
		   "hookinbox_route_oldest_parked_action_age_seconds",
		   "Time since the route's oldest parked action was parked.");
	write_aged(f, q->held, q->n_held, "endpoint", "hookinbox_inbox_held_events",
		   "Deliveries held for review (sql/review.sql) by endpoint, counting those "
		   "received longer ago than older_than (0s: all).",
		   "hookinbox_inbox_oldest_held_event_age_seconds",
		   "Age of the endpoint's oldest delivery held for review.");
	write_blocked(f, q);
	write_durations(f, q);
}

static void
write_run(FILE *f, const metrics_run *run, int64_t now)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} last[] = {
		{"fanned_out", "Inbox rows fanned out.", offsetof(metrics_run, fanned_out)},
		{"unrouted", "Inbox rows no route took.", offsetof(metrics_run, unrouted)},
		{"sent", "Calls started (HTTP or SQL handler).", offsetof(metrics_run, sent)},
		{"done", "Actions recorded done.", offsetof(metrics_run, done)},
		{"retry", "Actions recorded for a retry.", offsetof(metrics_run, retry)},
		{"parked", "Actions parked.", offsetof(metrics_run, parked)},
		{"stale", "Actions found stale.", offsetof(metrics_run, stale)},
		{"lease_lost", "Outcomes not recorded: the lease was lost.",
		 offsetof(metrics_run, lost)},
	};
	char name[96], help[160];

	header(f, "hookinbox_build_info", "gauge", "The worker's version; always 1.");
	fprintf(f, "hookinbox_build_info{program=\"hookinbox-worker\",version=\"%s\"} 1\n",
		HOOKINBOX_VERSION);
	header(f, "hookinbox_worker_last_run_timestamp_seconds", "gauge",
	       "When this file was written (end of a run; every 15 s with --loop).");
	series_l(f, "hookinbox_worker_last_run_timestamp_seconds", NULL, NULL, NULL, NULL, now);
	header(f, "hookinbox_worker_start_time_seconds", "gauge", "When the run started.");
	series_l(f, "hookinbox_worker_start_time_seconds", NULL, NULL, NULL, NULL, run->started);
	header(f, "hookinbox_worker_last_run_duration_seconds", "gauge",
	       "Duration of the run (--loop: so far).");
	series_d(f, "hookinbox_worker_last_run_duration_seconds", NULL, NULL, run->duration_s);
	header(f, "hookinbox_worker_last_run_ok", "gauge",
	       "1 unless the run lost its database connection.");
	series_l(f, "hookinbox_worker_last_run_ok", NULL, NULL, NULL, NULL, run->ok ? 1 : 0);
	for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
		snprintf(name, sizeof(name), "hookinbox_worker_last_run_%s", last[i].name);
		snprintf(help, sizeof(help), "%s (this run)", last[i].help);
		header(f, name, "gauge", help);
		series_l(f, name, NULL, NULL, NULL, NULL,
			 *(const long *)(const void *)((const char *)run + last[i].off));
	}
}

/*
 * One line of our own counter series: name{k="v",k2="v2"} value (the
 * value without the newline).  Returns false for anything else (gauges,
 * comments, a line cut short).
 */
static bool
parse_series(char *line, char **name, char *keys[2], char *vals[2], char **value)
{
	char *p = strchr(line, '{'), *w;
	int n = 0;

	if (p == NULL)
		return false;
	*p++ = '\0';
	*name = line;
	keys[0] = keys[1] = vals[0] = vals[1] = NULL;
	while (*p != '}') {
		char *eq = strchr(p, '=');

		if (n == 2 || eq == NULL || eq[1] != '"')
			return false;
		*eq = '\0';
		keys[n] = p;
		vals[n] = w = eq + 2;
		for (p = eq + 2; *p != '"'; p++) {
			if (*p == '\0')
				return false;
			if (*p == '\\' && p[1] != '\0')
				p++, *w++ = *p == 'n' ? '\n' : *p;
			else
				*w++ = *p;
		}
		*w = '\0';
		n++;
		p++;
		if (*p == ',')
			p++;
	}
	if (p[1] != ' ')
		return false;
	*value = p + 2;
	(*value)[strcspn(*value, "\n")] = '\0';
	return true;
}

static int
index_of(const char *const *names, int count, const char *v)
{
	for (int i = 0; v != NULL && i < count; i++)
		if (strcmp(names[i], v) == 0)
			return i;
	return -1;
}

/* the counters PATH holds now, into an empty *base (a missing file: none) */
static void
read_counters(const char *path, metrics *base)
{
	FILE *f = fopen(path, "r");
	char line[1024];

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *name, *keys[2], *vals[2], *value;
		route_stat *r;
		unsigned long long v;
		long long n;
		int k;

		if (strncmp(line, "hookinbox_worker_", 17) != 0 ||
		    !parse_series(line, &name, keys, vals, &value) || keys[0] == NULL ||
		    strcmp(keys[0], "route") != 0)
			continue;
		r = find(base, vals[0]);
		if (strcmp(name, "hookinbox_worker_call_duration_seconds_sum") == 0) {
			if (decimal_real(value, &r->sum) != 0)
				r->sum = 0;
			continue;
		}
		if (decimal_parse(value, 0, LLONG_MAX, &n) != 0)
			continue;
		v = (unsigned long long)n;
		if (strcmp(name, "hookinbox_worker_calls_total") == 0 &&
		    (k = index_of(call_names, CALL__COUNT, vals[1])) >= 0)
			r->calls[k] = v;
		else if (strcmp(name, "hookinbox_worker_actions_total") == 0 &&
			 (k = index_of(action_names, ACT__COUNT, vals[1])) >= 0)
			r->actions[k] = v;
		else if (strcmp(name, "hookinbox_worker_call_duration_seconds_count") == 0)
			r->count = v;
		else if (strcmp(name, "hookinbox_worker_call_duration_seconds_bucket") == 0 &&
			 vals[1] != NULL) {
			/* cumulative in the file; kept cumulative here until merged */
			for (size_t b = 0; b < N_BUCKETS; b++) {
				char le[32];

				snprintf(le, sizeof(le), "%g", buckets[b]);
				if (strcmp(le, vals[1]) == 0)
					r->bucket[b] = v;
			}
		}
	}
	fclose(f);
	/* the file's buckets are cumulative, ours are not */
	for (size_t i = 0; i < base->n; i++)
		for (size_t b = N_BUCKETS; b-- > 1;)
			base->rt[i].bucket[b] =
				base->rt[i].bucket[b] >= base->rt[i].bucket[b - 1]
					? base->rt[i].bucket[b] - base->rt[i].bucket[b - 1]
					: 0;
}

/* out += what m counted since m->written */
static void
add_unwritten(metrics *out, const metrics *m)
{
	for (size_t i = 0; i < m->n; i++) {
		const route_stat *now = &m->rt[i];
		const route_stat zero = {.name = NULL};
		const route_stat *was = &zero;
		route_stat *o = find(out, now->name);

		for (size_t j = 0; m->written != NULL && j < m->written->n; j++)
			if (strcmp(m->written->rt[j].name, now->name) == 0)
				was = &m->written->rt[j];
		for (int k = 0; k < CALL__COUNT; k++)
			o->calls[k] += now->calls[k] - was->calls[k];
		for (int k = 0; k < ACT__COUNT; k++)
			o->actions[k] += now->actions[k] - was->actions[k];
		for (size_t b = 0; b < N_BUCKETS; b++)
			o->bucket[b] += now->bucket[b] - was->bucket[b];
		o->count += now->count - was->count;
		o->sum += now->sum - was->sum;
	}
}

/* m->written = a copy of m's counts */
static void
mark_written(metrics *m)
{
	metrics *w = metrics_new();

	for (size_t i = 0; i < m->n; i++) {
		route_stat *r = find(w, m->rt[i].name);
		char *name = r->name;

		*r = m->rt[i];
		r->name = name;
	}
	metrics_free(m->written);
	m->written = w;
}

int
metrics_write(metrics *m, const char *path, const queue_snapshot *q, const metrics_run *run)
{
	char *tmp = xasprintf("%s.tmp", path);
	char *lockpath = xasprintf("%s.lock", path);
	metrics *sum = metrics_new();
	int rc = -1, lock;
	FILE *f = NULL;

	lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0 || flock(lock, LOCK_EX) != 0) {
		log_warn("could not lock metrics file \"%s\": %s", lockpath, strerror(errno));
		goto out;
	}
	read_counters(path, sum);
	FAILPOINT_PAUSE("metrics-write"); /* tests: widen the read-to-rename window */
	add_unwritten(sum, m);
	f = fopen(tmp, "w");
	if (f == NULL) {
		log_warn("could not write metrics file \"%s\": %s", tmp, strerror(errno));
		goto out;
	}
	/* node_exporter runs as another user: readable whatever the caller's umask */
	if (fchmod(fileno(f), 0644) != 0)
		log_warn("could not make metrics file \"%s\" readable: %s", tmp, strerror(errno));
	write_run(f, run, run->now);
	write_counters(f, sum);
	if (q != NULL)
		write_queue(f, q);
	if (ferror(f)) {
		log_warn("could not write metrics file \"%s\": %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		goto out;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		log_warn("could not write metrics file \"%s\": %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	mark_written(m);
	rc = 0;
out:
	if (lock >= 0)
		close(lock); /* and the lock with it */
	metrics_free(sum);
	free(lockpath);
	free(tmp);
	return rc;
}
