/*
 * main.c - hookinbox.fcgi: the FastCGI responder
 *
 * Verify-and-insert only: every request is answered by handler_serve; no
 * business work happens here.  Run by the web server (lighttpd bin-path,
 * spawn-fcgi, mod_fcgid, systemd socket) with the listening socket on
 * stdin, or as plain CGI when stdin is not a socket.
 */
#include "conf.h"
#include "handler.h"
#include "log.h"
#include "server.h"
#include "store.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <fcgiapp.h>

/* how long a stop or reload waits for requests in progress */
#define DRAIN_TIMEOUT_MS 30000
/* deliveries per group commit at most */
#define GROUP_MAX_BATCH 256

static void
usage(FILE *fp)
{
	fprintf(fp,
		"Usage: hookinbox.fcgi [-c FILE] [--check]\n"
		"FastCGI responder of hookinbox: verifies signed webhooks and stores them.\n"
		"Started with a listening socket on stdin it serves FastCGI; otherwise it\n"
		"answers one plain CGI request.\n\n"
		"  -c, --config FILE  configuration (default: $HOOKINBOX_CONFIG, else %s)\n"
		"  --check            load and check the configuration, then exit\n"
		"  -h, --help         show this help\n"
		"  -V, --version      show the version\n\n"
		"Signals: SIGHUP checks the configuration and, if it is good, finishes the\n"
		"requests in progress and re-executes itself with it (the listening socket\n"
		"stays open, so no request is dropped); SIGTERM, SIGINT and SIGUSR1 finish\n"
		"the requests in progress (at most 30 s) and exit.\n"
		"Exit status: 0 ok, 64 usage error, 70 internal error, 78 configuration error.\n",
		CONF_DEFAULT_PATH);
}

static conf *
load(const char *path)
{
	char err[1024];
	conf *c = conf_load(path, err, sizeof(err));

	if (c == NULL)
		log_error("%s", err);
	else
		log_set_format(strcmp(conf_log_format(c), "json") == 0 ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT);
	return c;
}

static const char *
cgi_param(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
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
	const http_io io = {cgi_param, cgi_read, cgi_write, NULL};
	store_options opt = {conf_conninfo(cfg), conf_lock_timeout_ms(cfg), conf_statement_timeout_ms(cfg)};
	store *st = store_new(&opt);
	handler *h = handler_new(cfg, st);

	handler_serve(h, &io);
	fflush(stdout);
	handler_free(h);
	store_free(st);
}

/*
 * Serve until a stop signal.  Returns 0 to exit, 1 to re-execute with a
 * configuration that has just been checked.
 */
static int
serve(conf *cfg, const char *path)
{
	sigset_t set;
	store_options opt = {conf_conninfo(cfg), conf_lock_timeout_ms(cfg), conf_statement_timeout_ms(cfg)};
	store *st;
	server *srv;
	int sig, rc;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1); /* lighttpd's and mod_fcgid's graceful stop */
	/* blocked here, so in every thread: only sigwait below sees them */
	pthread_sigmask(SIG_BLOCK, &set, NULL);

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
	srv = server_start(cfg, st, conf_threads(cfg));

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
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
		{"help", no_argument, NULL, 'h'},	  {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *opt_config = NULL;
	bool check_only = false;
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
	path = conf_default_path(opt_config);
	cfg = load(path);
	if (cfg == NULL)
		return EX_CONFIG;
	if (check_only) {
		printf("%s: ok (%zu endpoints, %zu routes)\n", path, conf_endpoint_count(cfg),
		       conf_route_count(cfg));
		conf_free(cfg);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0) {
		log_error("could not initialise libfcgi");
		conf_free(cfg);
		return EX_SOFTWARE;
	}
	if (FCGX_IsCGI()) {
		/* stdin is not a listening socket: plain CGI, one request */
		serve_cgi(cfg);
		conf_free(cfg);
		return 0;
	}

	rc = serve(cfg, path);
	conf_free(cfg);
	if (rc == 1) {
		/* the listening socket on fd 0 survives exec: no request is refused */
		log_info("configuration reloaded from %s", path);
		execv(argv[0][0] == '/' ? argv[0] : "/proc/self/exe", argv);
		log_error("could not re-execute %s: %s", argv[0], strerror(errno));
		return EX_OSERR;
	}
	return 0;
}
