/* SPDX-License-Identifier: ISC */
/*
 * server.c - the accept loop: request threads over the FastCGI socket
 *
 * Every thread waits in accept() on the listening socket at once: Linux
 * wakes one waiter per connection, and FCGX_Accept_r keeps all its state
 * in the thread's own FCGX_Request, so the mutex libfcgi's threaded example
 * puts around it (for platforms that need accept() serialised) would only
 * serialise the reading of each request's parameters.  The
 * listening socket has a receive timeout, which accept() honours, so a
 * waiting thread looks at the stop flag every 200 ms; and when several
 * processes share the socket, the one that loses the race for a connection
 * is not stuck in accept() until the next one.  Signals are blocked in these
 * threads (main.c waits for them with sigwait), so nothing is interrupted.
 */
#include "server.h"

#include "handler.h"
#include "log.h"
#include "xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcgiapp.h>

#define ACCEPT_SLICE_MS 200

typedef struct request_thread {
	server *srv;
	pthread_t tid;
	handler *h;
	FCGX_Request req;
} request_thread;

struct server {
	bool unix_socket; /* the listening socket is AF_UNIX */
	atomic_bool stopping;
	pthread_mutex_t exit_lock;
	pthread_cond_t exit_cv;
	int running; /* threads not yet finished, under exit_lock */
	int n;
	request_thread *threads;
};

static const char *
fcgx_param(void *ctx, const char *name)
{
	return FCGX_GetParam(name, ((FCGX_Request *)ctx)->envp);
}

static ssize_t
fcgx_read(void *ctx, void *buf, size_t len)
{
	return FCGX_GetStr(buf, len > INT_MAX ? INT_MAX : (int)len, ((FCGX_Request *)ctx)->in);
}

static void
fcgx_write(void *ctx, const void *buf, size_t len)
{
	FCGX_PutStr(buf, (int)len, ((FCGX_Request *)ctx)->out);
}

/*
 * Read what is left of the request's input up to its end (usually just the
 * web server's empty end-of-input record); false when more than a little
 * is left, so that a big unread body is not read for nothing.
 */
static bool
input_consumed(FCGX_Request *req)
{
	char buf[4096];
	size_t left = 65536;

	while (FCGX_HasSeenEOF(req->in) != EOF) {
		int n = FCGX_GetStr(buf, sizeof(buf), req->in);

		if (n <= 0)
			break;
		if ((size_t)n >= left)
			return false;
		left -= (size_t)n;
	}
	return FCGX_HasSeenEOF(req->in) == EOF && FCGX_GetError(req->in) == 0;
}

static void *
thread_main(void *arg)
{
	request_thread *t = arg;
	server *srv = t->srv;
	const http_io io = {fcgx_param, fcgx_read, fcgx_write, &t->req};

	for (;;) {
		int rc;

		if (atomic_load(&srv->stopping))
			break;
		rc = FCGX_Accept_r(&t->req);
		/* the accept timeout: look at the stop flag again */
		if (rc == -EAGAIN || rc == -EWOULDBLOCK || rc == -EINTR)
			continue;
		if (rc < 0) {
			if (!atomic_load(&srv->stopping))
				log_error("could not accept a FastCGI request (%d)", rc);
			break;
		}
		handler_serve(t->h, &io);
		/*
		 * libfcgi closes a connection "lingering": shutdown, then poll and
		 * read until the web server closes its end, three system calls that
		 * cost a third of a request here.  On a unix socket whose input we
		 * have read to the end nothing can be lost by closing at once: the
		 * reply already sits in the peer's queue and the peer sends nothing
		 * more.  Otherwise (unread body, TCP) keep the lingering close.
		 */
		if (srv->unix_socket && input_consumed(&t->req))
			FCGX_Detach(&t->req);
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

	pthread_mutex_init(&srv->exit_lock, NULL);
	pthread_cond_init(&srv->exit_cv, NULL);
	atomic_init(&srv->stopping, false);
	srv->n = threads;
	{
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct timeval slice = {.tv_sec = 0, .tv_usec = ACCEPT_SLICE_MS * 1000};

		srv->unix_socket = getsockname(0, (struct sockaddr *)&ss, &len) == 0 &&
				   ss.ss_family == AF_UNIX;
		if (setsockopt(0, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof(slice)) != 0)
			log_warn(
				"could not set an accept timeout: %s (stopping may wait for a request)",
				strerror(errno));
	}
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
	free(srv);
	return 0;
}
