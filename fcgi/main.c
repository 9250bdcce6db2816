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
#include "store.h"

#include <getopt.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <fcgiapp.h>

static volatile sig_atomic_t in_request;
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

/*
 * SIGTERM between requests exits at once (libfcgi's accept() would not
 * return); inside a request it lets the request finish first.
 */
static void
on_term(int sig)
{
	(void)sig;
	if (!in_request)
		_exit(0);
	stop_requested = 1;
	FCGX_ShutdownPending();
}

static void
on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
		"Usage: hookinbox.fcgi [-c FILE] [--check]\n"
		"FastCGI responder of hookinbox: verifies signed webhooks and stores them.\n\n"
		"  -c, --config FILE  configuration (default: $HOOKINBOX_CONFIG, else %s)\n"
		"  --check            load and check the configuration, then exit\n"
		"  -h, --help         show this help\n"
		"  -V, --version      show the version\n\n"
		"Signals: SIGHUP reloads the configuration between requests; SIGTERM finishes\n"
		"the request in progress and exits.\n"
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
	store *st;
	handler *h;
	FCGX_Request req;
	struct sigaction sa;
	int c;

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

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	/* SIGUSR1 is what lighttpd and mod_fcgid send for a graceful stop */
	sa.sa_handler = on_term;
	sigaction(SIGUSR1, &sa, NULL);

	if (FCGX_Init() != 0) {
		log_error("could not initialise libfcgi");
		conf_free(cfg);
		return EX_SOFTWARE;
	}
	if (FCGX_IsCGI()) {
		log_error("not started as a FastCGI application (stdin is not a socket)");
		conf_free(cfg);
		return EX_USAGE;
	}
	st = store_new(conf_conninfo(cfg));
	h = handler_new(cfg, st);
	FCGX_InitRequest(&req, 0, FCGI_FAIL_ACCEPT_ON_INTR);

	while (!stop_requested) {
		if (reload_requested) {
			conf *fresh;

			reload_requested = 0;
			fresh = load(path);
			if (fresh == NULL) {
				log_error("configuration not reloaded: keeping the running one");
			} else {
				/* the old handler flushes its counts through the old store */
				handler_free(h);
				store_free(st);
				conf_free(cfg);
				cfg = fresh;
				st = store_new(conf_conninfo(cfg));
				h = handler_new(cfg, st);
				log_info("configuration reloaded from %s", path);
			}
		}
		if (FCGX_Accept_r(&req) < 0)
			break;
		in_request = 1;
		handler_serve(h, &req);
		FCGX_Finish_r(&req);
		in_request = 0;
	}
	handler_free(h);
	store_free(st);
	conf_free(cfg);
	return 0;
}
