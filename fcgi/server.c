/*
 * server.c - the accept loop: request threads over the FastCGI socket
 *
 * One thread at a time holds accept_lock and waits for the socket with
 * poll() in short slices, so that it notices a stop within 200 ms; accept
 * itself then never blocks for long.  Signals are blocked in these threads
 * (main.c waits for them with sigwait), so nothing here is interrupted.
 */
#include "server.h"

#include "handler.h"
#include "log.h"
#include "xalloc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcgiapp.h>

#define POLL_SLICE_MS 200

typedef struct request_thread {
	server *srv;
	pthread_t tid;
	handler *h;
	FCGX_Request req;
} request_thread;

struct server {
	pthread_mutex_t accept_lock;
	atomic_bool stopping;
	pthread_mutex_t exit_lock;
	pthread_cond_t exit_cv;
	int running; /* threads not yet finished, under exit_lock */
	int n;
	request_thread *threads;
};

/* wait until a connection is there; -1 when the server is stopping */
static int
wait_for_connection(request_thread *t)
{
	struct pollfd pfd = {.fd = t->req.listen_sock, .events = POLLIN};

	/* a connection the web server keeps open carries the next request */
	if (t->req.ipcFd >= 0)
		return 0;
	for (;;) {
		int n;

		if (atomic_load(&t->srv->stopping))
			return -1;
		n = poll(&pfd, 1, POLL_SLICE_MS);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR) {
			log_error("could not wait for connections: %s", strerror(errno));
			return -1;
		}
	}
}

static const char *
fcgx_param(void *ctx, const char *name)
{
	return FCGX_GetParam(name, ((FCGX_Request *)ctx)->envp);
}

static ssize_t
fcgx_read(void *ctx, void *buf, size_t len)
{
	int n = FCGX_GetStr(buf, len > INT_MAX ? INT_MAX : (int)len, ((FCGX_Request *)ctx)->in);

	return n;
}

static void
fcgx_write(void *ctx, const void *buf, size_t len)
{
	FCGX_PutStr(buf, (int)len, ((FCGX_Request *)ctx)->out);
}

static void *
thread_main(void *arg)
{
	request_thread *t = arg;
	server *srv = t->srv;
	const http_io io = {fcgx_param, fcgx_read, fcgx_write, &t->req};

	for (;;) {
		int rc;

		pthread_mutex_lock(&srv->accept_lock);
		if (wait_for_connection(t) != 0) {
			pthread_mutex_unlock(&srv->accept_lock);
			break;
		}
		rc = FCGX_Accept_r(&t->req);
		pthread_mutex_unlock(&srv->accept_lock);
		if (rc < 0) {
			if (!atomic_load(&srv->stopping))
				log_error("could not accept a FastCGI request (%d)", rc);
			break;
		}
		handler_serve(t->h, &io);
		FCGX_Finish_r(&t->req);
	}
	pthread_mutex_lock(&srv->exit_lock);
	srv->running--;
	pthread_cond_signal(&srv->exit_cv);
	pthread_mutex_unlock(&srv->exit_lock);
	return NULL;
}

server *
server_start(const conf *cfg, store *st, int threads)
{
	server *srv = xcalloc(1, sizeof(*srv));

	pthread_mutex_init(&srv->accept_lock, NULL);
	pthread_mutex_init(&srv->exit_lock, NULL);
	pthread_cond_init(&srv->exit_cv, NULL);
	atomic_init(&srv->stopping, false);
	srv->n = threads;
	srv->threads = xcalloc((size_t)threads, sizeof(*srv->threads));
	for (int i = 0; i < threads; i++) {
		request_thread *t = &srv->threads[i];

		t->srv = srv;
		t->h = handler_new(cfg, st);
		FCGX_InitRequest(&t->req, 0, 0);
		pthread_mutex_lock(&srv->exit_lock);
		srv->running++;
		pthread_mutex_unlock(&srv->exit_lock);
		if (pthread_create(&t->tid, NULL, thread_main, t) != 0) {
			log_error("could not start request thread %d", i);
			abort();
		}
	}
	return srv;
}

int
server_stop(server *srv, int timeout_ms)
{
	struct timespec deadline;
	int left;

	atomic_store(&srv->stopping, true);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&srv->exit_lock);
	while (srv->running > 0)
		if (pthread_cond_timedwait(&srv->exit_cv, &srv->exit_lock, &deadline) == ETIMEDOUT)
			break;
	left = srv->running;
	pthread_mutex_unlock(&srv->exit_lock);
	if (left > 0) {
		log_warn("%d requests still in progress after %d ms", left, timeout_ms);
		return -1;
	}
	for (int i = 0; i < srv->n; i++) {
		pthread_join(srv->threads[i].tid, NULL);
		FCGX_Free(&srv->threads[i].req, 1);
		handler_free(srv->threads[i].h);
	}
	free(srv->threads);
	pthread_cond_destroy(&srv->exit_cv);
	pthread_mutex_destroy(&srv->exit_lock);
	pthread_mutex_destroy(&srv->accept_lock);
	free(srv);
	return 0;
}
