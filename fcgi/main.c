/* SPDX-License-Identifier: ISC */
/*
 * main.c - hookinbox.fcgi: the FastCGI responder
 *
 * Verify-and-insert only: every request is answered by handler_serve; no
 * business work happens here.  Run by the web server (lighttpd bin-path,
 * spawn-fcgi, mod_fcgid, systemd socket) with the listening socket on
 * stdin, or as plain CGI (GATEWAY_INTERFACE set); started by hand, with
 * neither, it says so and exits 64.
 */
#include "conf.h"
#include "dbcheck.h"
#include "decimal.h"
#include "handler.h"
#include "log.h"
#include "server.h"
#include "store.h"
#include "watch.h"
#include "xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

/* how long a stop or reload waits for requests in progress */
#define DRAIN_TIMEOUT_MS 30000
/* deliveries per group commit at most */
#define GROUP_MAX_BATCH 256
/*
 * how often the configuration and secret files are looked at: a rotated
 * secret is in use this long after it is written, in every process
 */
#define WATCH_INTERVAL_S 5
/* the request count handed over a re-execution (handler_requests) */
#define REQUESTS_ENV "HOOKINBOX_REQUESTS"

static void
usage(FILE *fp)
{
	fprintf(fp,
		"Usage: hookinbox.fcgi [-c FILE] [--check [--connect]]\n"
		"FastCGI responder of hookinbox: verifies signed webhooks and stores them.\n"
		"Started by a web server: with a listening socket on stdin (lighttpd\n"
		"bin-path, mod_fcgid, spawn-fcgi, a systemd socket unit) it serves FastCGI;\n"
		"run as CGI (GATEWAY_INTERFACE set) it answers one request.\n\n"
		"  -c, --config FILE  configuration (default: $HOOKINBOX_CONFIG, else %s)\n"
		"  --check            load and check the configuration, then exit\n"
		"  --connect          with --check: also connect with [database] conninfo and\n"
		"                     check the schema and the role's privileges\n"
		"  -h, --help         show this help\n"
		"  -V, --version      show the version\n\n"
		"Signals: SIGHUP checks the configuration and, if it is good, finishes the\n"
		"requests in progress and re-executes itself with it (the listening socket\n"
		"stays open, so no request is dropped); SIGTERM, SIGINT and SIGUSR1 finish\n"
		"the requests in progress (at most 30 s) and exit.\n"
		"Exit status: 0 ok, 64 usage error (also: started by hand, outside a web\n"
		"server), 70 internal error, 75 database unavailable (--check --connect),\n"
		"78 configuration error.\n",
		CONF_DEFAULT_PATH);
}

static conf *
load(const char *path)
{
	char err[4096];
	conf *c = conf_load_for(path, CONF_RESPONDER, err, sizeof(err));

	if (c == NULL)
		log_errors(err);
	else
		log_set_format(strcmp(conf_log_format(c), "json") == 0 ? LOG_FORMAT_JSON
								       : LOG_FORMAT_TEXT);
	return c;
}

/*
 * The responder's own bound on one delivery's wait for the database:
 * statement_timeout, which the server enforces when it is alive (its
 * error is the clearer one), plus this margin.
 */
#define WAIT_MARGIN_MS 500

static store_options
store_opts(const conf *cfg)
{
	return (store_options){conf_conninfo(cfg), conf_lock_timeout_ms(cfg),
			       conf_statement_timeout_ms(cfg),
			       conf_statement_timeout_ms(cfg) + WAIT_MARGIN_MS};
}

static const char *
cgi_param(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static char *const *
cgi_params(void *ctx)
{
	(void)ctx;
	return environ;
}

static ssize_t
cgi_read(void *ctx, void *buf, size_t len)
{
	ssize_t n;

	(void)ctx;
	do
		n = read(STDIN_FILENO, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

static void
cgi_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	fwrite(buf, 1, len, stdout);
}

/*
 * Plain CGI, for hosts that allow nothing else: the same handler, one
 * request per process, so every request pays for exec, configuration and
 * secret loading and a new database connection.
 */
static void
serve_cgi(const conf *cfg)
{
	const http_io io = {cgi_param, cgi_read, cgi_write, NULL, cgi_params};
	store_options opt = store_opts(cfg);
	store *st = store_new(&opt);
	handler *h = handler_new(cfg, st);

	handler_serve(h, &io);
	fflush(stdout);
	handler_free(h);
	store_free(st);
}

/*
 * One line when serving starts (and after each reload): version,
 * configuration file, endpoints as name:provider (never a secret or its
 * file) and the commit mode.
 */
static void
log_start(const conf *cfg, const char *path)
{
	size_t n = conf_endpoint_count(cfg), cap = 1, len = 0;
	char *list, threads[16], pid[24];

	for (size_t i = 0; i < n; i++) {
		const endpoint_conf *ep = conf_endpoint_at(cfg, i);

		cap += strlen(ep->name) + strlen(provider_name(ep->pe.provider)) + 2;
	}
	list = xmalloc(cap);
	list[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const endpoint_conf *ep = conf_endpoint_at(cfg, i);

		len += (size_t)snprintf(list + len, cap - len, "%s%s:%s", i ? "," : "", ep->name,
					provider_name(ep->pe.provider));
	}
	snprintf(threads, sizeof(threads), "%d", conf_threads(cfg));
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	log_kv("start", "version", HOOKINBOX_VERSION, "config", path, "endpoints", list, "mode",
	       conf_threads(cfg) > 1 ? "group-commit" : "single-row", LOG_NUM, "threads", threads,
	       LOG_NUM, "pid", pid, LOG_END);
	free(list);
}

/*
 * Blocked before any thread starts, so in every thread: only the sigwait in
 * serve() sees them.  Blocked from the start of main, a reload or stop that
 * arrives while the configuration loads waits for serve() instead of ending
 * the process; the mask survives the re-exec of a reload.
 */
static void
block_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1); /* lighttpd's and mod_fcgid's graceful stop */
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

/*
 * Serve until a stop signal.  Returns 0 to exit, 1 to re-execute with a
 * configuration that has just been checked: after a SIGHUP, or when the
 * configuration file or a secret file changed on disk.
 */
static int
serve(conf *cfg, const char *path)
{
	sigset_t set;
	store_options opt = store_opts(cfg);
	const struct timespec every = {.tv_sec = WATCH_INTERVAL_S, .tv_nsec = 0};
	watch *files = watch_new(cfg, path);
	store *st;
	server *srv;
	int sig, rc;

	block_stop_signals(&set);
	if (conf_threads(cfg) > 1) {
		st = store_new_group(&opt, GROUP_MAX_BATCH);
	} else {
		/*
		 * One request thread, and this one only waits for signals: let it
		 * allocate from the main arena instead of a heap of its own (about
		 * 100 KB less private memory per process, times max-procs).
		 */
		mallopt(M_ARENA_MAX, 1);
		st = store_new(&opt);
	}
	log_start(cfg, path);
	srv = server_start(cfg, st, conf_threads(cfg));

	for (;;) {
		sig = sigtimedwait(&set, NULL, &every);
		if (sig < 0) {
			if (errno != EAGAIN || !watch_changed(files))
				continue;
			log_info("configuration or secret file changed: reloading");
			sig = SIGHUP;
		}
		if (sig != SIGHUP) {
			rc = 0;
			break;
		}
		{
			conf *fresh = load(path);

			if (fresh == NULL) {
				log_error("configuration not reloaded: keeping the running one");
				continue;
			}
			conf_free(fresh);
			rc = 1;
			break;
		}
	}
	watch_free(files);
	if (server_stop(srv, DRAIN_TIMEOUT_MS) != 0)
		_exit(EX_SOFTWARE); /* threads still use st and cfg: do not free them */
	store_free(st);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'k'},
		{"connect", no_argument, NULL, 'C'},	  {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},	  {NULL, 0, NULL, 0},
	};
	const char *opt_config = NULL;
	bool check_only = false, check_connect = false;
	const char *path;
	conf *cfg;
	int c, rc;

	log_init("hookinbox.fcgi");
	while ((c = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opt_config = optarg;
			break;
		case 'k':
			check_only = true;
			break;
		case 'C':
			check_connect = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("hookinbox.fcgi %s\n", HOOKINBOX_VERSION);
			return 0;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hookinbox.fcgi: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return EX_USAGE;
	}
	if (check_connect && !check_only) {
		fprintf(stderr, "hookinbox.fcgi: --connect goes with --check\n");
		usage(stderr);
		return EX_USAGE;
	}
	if (FCGX_Init() != 0) {
		log_error("could not initialise libfcgi");
		return EX_SOFTWARE;
	}
	if (!check_only && FCGX_IsCGI() && getenv("GATEWAY_INTERFACE") == NULL) {
		/* by hand, from a shell: neither a FastCGI socket nor a CGI request */
		fprintf(stderr,
			"hookinbox.fcgi: not started by a web server: it serves FastCGI on a "
			"listening socket on stdin (lighttpd bin-path, mod_fcgid, spawn-fcgi, "
			"hookinbox-fcgi.socket) or one CGI request; to check a configuration "
			"run hookinbox.fcgi --check [--connect] [-c FILE]\n");
		return EX_USAGE;
	}
	if (!check_only && !FCGX_IsCGI()) {
		sigset_t set;

		block_stop_signals(&set);
	}
	path = conf_default_path(opt_config);
	cfg = load(path);
	if (cfg == NULL)
		return EX_CONFIG;
	if (check_only) {
		char msg[512];
		bool unavailable;

		rc = 0;
		if (check_connect &&
		    dbcheck_connect(conf_conninfo(cfg), DBCHECK_INTAKE, "hookinbox.fcgi --check",
				    msg, sizeof(msg), &unavailable) != 0) {
			log_error("%s: %s", path, msg);
			rc = unavailable ? EX_TEMPFAIL : EX_CONFIG;
		} else {
			printf("%s: ok (%zu endpoints, %zu routes)%s%s\n", path,
			       conf_endpoint_count(cfg), conf_route_count(cfg),
			       check_connect ? "; database: " : "", check_connect ? msg : "");
		}
		conf_free(cfg);
		return rc;
	}
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_IsCGI()) {
		/* stdin is not a listening socket: plain CGI, one request */
		serve_cgi(cfg);
		conf_free(cfg);
		return 0;
	}

	{
		const char *resumed = getenv(REQUESTS_ENV);

		long long n;

		if (resumed != NULL) {
			if (decimal_parse(resumed, 0, LLONG_MAX, &n) == 0)
				handler_requests_resume((unsigned long long)n);
			unsetenv(REQUESTS_ENV);
		}
	}
	rc = serve(cfg, path);
	conf_free(cfg);
	if (rc == 1) {
		char n[24];

		/* the listening socket on fd 0 survives exec: no request is refused */
		log_info("configuration reloaded from %s", path);
		snprintf(n, sizeof(n), "%llu", handler_requests());
		setenv(REQUESTS_ENV, n, 1);
		execv(argv[0][0] == '/' ? argv[0] : "/proc/self/exe", argv);
		log_error("could not re-execute %s: %s", argv[0], strerror(errno));
		return EX_OSERR;
	}
	return 0;
}
