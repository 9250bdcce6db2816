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
 *
 * A web server that streams the body (Apache's mod_proxy_fcgi past its
 * first 16 KB) would hand a thread to a sender that trickles it in: each
 * request's body must arrive within BODY_DEADLINE_MS of its parameters, or
 * it is answered 408 and its connection closed at once.  Every read waits
 * at most until then (SO_RCVTIMEO on the connection, set before each read
 * of the socket), and what libfcgi has buffered is taken without a read.
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
/* providers give up on a delivery after 5-30 s (GitHub 10, Shopify 5) */
#define BODY_DEADLINE_MS 5000

/* one request and when its body must have arrived */
typedef struct request_io {
	FCGX_Request req;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	bool timed_out;
} request_io;

typedef struct request_thread {
	server *srv;
	pthread_t tid;
	handler *h;
	request_io rq;
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
	return FCGX_GetParam(name, ((request_io *)ctx)->req.envp);
}

/* milliseconds from now until t, at most a day; 0 when it has passed */
static long
ms_until(const struct timespec *t)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec))
		return 0;
	if (t->tv_sec - now.tv_sec > 86400)
		return 86400000L;
	ms = (long)(t->tv_sec - now.tv_sec) * 1000L + (t->tv_nsec - now.tv_nsec) / 1000000L;
	return ms > 0 ? ms : 1;
}

/* each read of fd waits at most ms (0: no limit) */
static int
set_read_timeout(int fd, long ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static ssize_t
fcgx_read(void *ctx, void *buf, size_t len)
{
	request_io *rq = ctx;
	FCGX_Stream *in = rq->req.in;
	size_t avail = (size_t)(in->stop - in->rdNext);
	int want = len > INT_MAX ? INT_MAX : (int)len;
	int n;

	if (avail == 0) {
		/* one read of the socket, bounded by what is left of the deadline */
		long left = ms_until(&rq->deadline);

		if (left == 0 || set_read_timeout(rq->req.ipcFd, left) != 0)
			goto timed_out;
		want = len > 0 ? 1 : 0;
	} else if ((size_t)want > avail) {
		want = (int)avail;
	}
	n = FCGX_GetStr(buf, want, in);
	if (n == 0 && want > 0 && FCGX_HasSeenEOF(in) != EOF && ms_until(&rq->deadline) == 0)
		goto timed_out;
	if (n == 0 && want > 0 && (FCGX_GetError(in) == EAGAIN || FCGX_GetError(in) == EWOULDBLOCK))
		goto timed_out;
	return n;
timed_out:
	rq->timed_out = true;
	errno = ETIMEDOUT;
	return -1;
}

static void
fcgx_write(void *ctx, const void *buf, size_t len)
{
	FCGX_PutStr(buf, (int)len, ((request_io *)ctx)->req.out);
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
	request_io *rq = &t->rq;
	const http_io io = {fcgx_param, fcgx_read, fcgx_write, rq};

	for (;;) {
		int rc;

		if (atomic_load(&srv->stopping))
			break;
		rc = FCGX_Accept_r(&rq->req);
		/* the accept timeout: look at the stop flag again */
		if (rc == -EAGAIN || rc == -EWOULDBLOCK || rc == -EINTR)
			continue;
		if (rc < 0) {
			if (!atomic_load(&srv->stopping))
				log_error("could not accept a FastCGI request (%d)", rc);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &rq->deadline);
		rq->deadline.tv_sec += BODY_DEADLINE_MS / 1000;
		rq->deadline.tv_nsec += (long)(BODY_DEADLINE_MS % 1000) * 1000000L;
		if (rq->deadline.tv_nsec >= 1000000000L) {
			rq->deadline.tv_sec++;
			rq->deadline.tv_nsec -= 1000000000L;
		}
		rq->timed_out = false;
		handler_serve(t->h, &io);
		/*
		 * libfcgi closes a connection "lingering": shutdown, then poll and
		 * read until the web server closes its end, three system calls that
		 * cost a third of a request here.  On a unix socket whose input we
		 * have read to the end nothing can be lost by closing at once: the
		 * reply already sits in the peer's queue and the peer sends nothing
		 * more.  Otherwise (unread body, TCP) keep the lingering close.
		 * What is left of the input is read under the body's deadline (a
		 * request rejected before its body was read too); a body cut off
		 * is closed at once, not after the rest trickled in, and a kept
		 * connection waits for its next request without a limit.
		 */
		if (!rq->timed_out) {
			long left = ms_until(&rq->deadline);
			bool consumed = left > 0 && set_read_timeout(rq->req.ipcFd, left) == 0 &&
					input_consumed(&rq->req);

			if (!consumed && ms_until(&rq->deadline) == 0)
				rq->timed_out = true;
			else if (srv->unix_socket && consumed)
				FCGX_Detach(&rq->req);
		}
		if (rq->timed_out)
			FCGX_Detach(&rq->req);
		else
			(void)set_read_timeout(rq->req.ipcFd, 0);
		FCGX_Finish_r(&rq->req);
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
		FCGX_InitRequest(&t->rq.req, 0, 0);
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
		FCGX_Free(&srv->threads[i].rq.req, 1);
		handler_free(srv->threads[i].h);
	}
	free(srv->threads);
	pthread_cond_destroy(&srv->exit_cv);
	pthread_mutex_destroy(&srv->exit_lock);
	free(srv);
	return 0;
}
