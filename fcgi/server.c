/* SPDX-License-Identifier: ISC */
/*
 * server.c - the accept loop: request threads over the FastCGI socket
 *
 * A request thread serves only a request whose body has arrived.  The
 * request threads accept the connections themselves, each from an epoll set
 * of its own that holds the listening socket and the ready queue's eventfd,
 * both with EPOLLEXCLUSIVE, so that a connection wakes one idle thread, and
 * a thread accepts only when it is free to serve.  Right after accepting it
 * peeks at the connection (MSG_PEEK, nothing is read): it walks the FastCGI
 * records in the kernel's receive queue up to the empty FCGI_STDIN record
 * that ends the body.  A complete request, the usual case, is served by
 * that thread at once: no other thread touches it (in group commit a
 * delivery's only hand-off is its wake-up by the leader that committed it).  An incomplete one
 * goes to the waiter thread, which parks it in its epoll set
 * (edge-triggered: woken by each arrival, not by the bytes already peeked)
 * and peeks again as more arrives; once complete it goes to the ready
 * queue, which wakes one request thread.  A web server that streams the
 * body (Apache's mod_proxy_fcgi past its first 16 KB) therefore costs a
 * slow sender no request thread: with two threads and six senders
 * trickling at 600 B/s, a delivery is stored in milliseconds
 * (t/89-slow-body-many).
 *
 * Each body must arrive within BODY_DEADLINE_MS of its first byte, or its
 * request goes to a request thread marked late and is answered 408 there
 * (logged as every answer), its connection closed at once.  At most
 * PARK_PER_THREAD bodies per request thread wait at a time; past that a
 * body that has not arrived is answered 503 with Retry-After by the waiter
 * itself.  A request larger than PEEK_MAX is handed over unfinished: the
 * kernel may not queue more (a unix socket's sender is bounded by its send
 * buffer, about 200 KB), so its thread reads the rest as before, each read
 * waiting at most until the deadline (SO_RCVTIMEO on the connection, set
 * before each read of the socket; what libfcgi has buffered is taken
 * without a read).  A kept connection (FCGI_KEEP_CONN) goes back to the
 * waiter between requests, with no deadline until its next request starts.
 *
 * A request queued whole on a unix socket, the usual case, is parsed in
 * the peek buffer and answered with one write (serve_whole, fcgirec.h):
 * no read waits and nothing is allocated.  libfcgi serves the rest: a
 * request larger than PEEK_MAX or peeked before all of it arrived (its
 * reads under the deadline), a late one, one over TCP (its lingering
 * close), and records fcgirec does not take (management records, another
 * role, an abort), which libfcgi answers as before.
 *
 * libfcgi reads an accepted connection it is given: FCGX_Accept_r on a
 * request whose ipcFd is open (keepConnection set, as between kept
 * requests) reads the parameters from it without accepting.  Its listening
 * socket is -1, so libfcgi never accepts by itself: a connection it drops
 * (a protocol error) returns an error instead of blocking in accept().
 *
 * The listening socket is non-blocking: when several threads or processes
 * share it, the one that loses the race for a connection gets EAGAIN and
 * waits again instead of being stuck in accept().
 * Signals are blocked in these threads (main.c waits for them with
 * sigwait), so nothing is interrupted.  Stopping closes the door (no thread
 * accepts any more), lets the parked bodies finish or reach their
 * deadline, and ends the request threads when the ready queue is empty.
 */
#include "server.h"

#include "clock.h"
#include "dynbuf.h"
#include "fcgirec.h"
#include "handler.h"
#include "log.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

/* providers give up on a delivery after 5-30 s (GitHub 10, Shopify 5) */
#define BODY_DEADLINE_MS 5000
/* bodies waiting per request thread before new ones are answered 503 */
#define PARK_PER_THREAD 4
/* peeked at most: a larger request is read by its thread (see above) */
#define PEEK_MAX (64 * 1024)
/* a late request's parameters, already queued, are read within this */
#define LATE_READ_MS 100
/*
 * A web server connects before it writes the request: right after accept
 * its thread waits this long for the request before the waiter takes it
 */
#define FIRST_WAIT_MS 3

#define FCGI_HEADER_LEN 8
#define FCGI_BEGIN_REQUEST 1
#define FCGI_END_REQUEST 3
#define FCGI_PARAMS 4
#define FCGI_STDIN 5
#define FCGI_STDOUT 6

/* a connection between accept and its request thread */
typedef struct conn {
	int fd;
	bool has_deadline;	  /* false: a kept connection between requests */
	bool params_done;	  /* its parameters have arrived: a body wait */
	bool late;		  /* the deadline passed: answer 408 */
	bool counted;		  /* in nbodies */
	bool whole;		  /* all of it was queued when it was peeked complete */
	bool peeked_here;	  /* whole, and its request thread's peek buffer holds it */
	size_t len;		  /* whole: the request's bytes, up to its empty FCGI_STDIN */
	unsigned req_id;	  /* from FCGI_BEGIN_REQUEST, 0 before */
	struct timespec deadline; /* CLOCK_MONOTONIC */
	struct conn *next;	  /* in the ready queue or the returned list */
} conn;

/* one request and when its body must have arrived */
typedef struct request_io {
	FCGX_Request req;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	bool timed_out;
	bool whole; /* all of the request is queued: no read waits */
} request_io;

typedef struct request_thread {
	server *srv;
	pthread_t tid;
	handler *h;
	request_io rq;
	int epfd;	     /* the listening socket and the ready queue's eventfd */
	int soonfd;	     /* epoll: the connection just accepted (peek_soon) */
	unsigned char *peek; /* PEEK_MAX bytes */
	unsigned char *sink; /* PEEK_MAX bytes: what is read past after parsing the peek */
	fcgirec rec;	     /* the request served without libfcgi (serve_whole) */
	conn *spare;	     /* a conn for the next accept, so that none is allocated */
} request_thread;

struct server {
	bool unix_socket; /* the listening socket is AF_UNIX */
	atomic_bool stopping;
	pthread_mutex_t exit_lock;
	pthread_cond_t exit_cv;
	int running; /* threads not yet finished, under exit_lock */
	int n;
	request_thread *threads;

	/* the waiter's own: no lock */
	pthread_t waiter;
	int epfd;
	int wakefd; /* eventfd: stop, or a connection handed over */
	conn **parked;
	int nparked; /* all parked connections */
	size_t parked_alloc;
	int nbodies;  /* of which waiting for their body */
	int park_max; /* bodies waiting at most */

	int readyfd; /* eventfd (semaphore): one count per request in the ready queue */
	int stopfd;  /* eventfd, written once: every request thread stops accepting */

	/* shared, under q_lock */
	pthread_mutex_t q_lock;
	pthread_cond_t q_cv;
	conn *ready_head, *ready_tail;
	int nready;
	conn *returned; /* kept connections back from request threads */
	conn *incoming; /* accepted connections whose request has not all arrived */
	bool waiter_done;
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

static char *const *
fcgx_params(void *ctx)
{
	return ((request_io *)ctx)->req.envp;
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

		if (left == 0 || (!rq->whole && set_read_timeout(rq->req.ipcFd, left) != 0))
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

static void
wake_waiter(server *srv)
{
	uint64_t one = 1;

	if (write(srv->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("could not wake the waiter: %s", strerror(errno));
}

/* to the request threads */
static void
ready_push(server *srv, conn *c)
{
	c->next = NULL;
	pthread_mutex_lock(&srv->q_lock);
	if (srv->ready_tail)
		srv->ready_tail->next = c;
	else
		srv->ready_head = c;
	srv->ready_tail = c;
	srv->nready++;
	pthread_cond_signal(&srv->q_cv);
	pthread_mutex_unlock(&srv->q_lock);
	{
		uint64_t one = 1;

		/* one count per entry: a request thread takes an entry only after a count */
		if (write(srv->readyfd, &one, sizeof(one)) < 0)
			log_warn("could not wake a request thread: %s", strerror(errno));
	}
}

/* the head of the ready queue, unlinked, or NULL; q_lock held */
static conn *
ready_unlink(server *srv)
{
	conn *c = srv->ready_head;

	if (c) {
		srv->ready_head = c->next;
		if (srv->ready_head == NULL)
			srv->ready_tail = NULL;
		srv->nready--;
	}
	return c;
}

/* an entry of the ready queue, after its count was taken from readyfd */
static conn *
ready_pop(server *srv)
{
	conn *c;

	pthread_mutex_lock(&srv->q_lock);
	c = ready_unlink(srv);
	pthread_mutex_unlock(&srv->q_lock);
	return c;
}

/* once stopping: the next complete request; NULL when nothing is left */
static conn *
ready_take(server *srv)
{
	conn *c;

	pthread_mutex_lock(&srv->q_lock);
	while (srv->ready_head == NULL && !srv->waiter_done)
		pthread_cond_wait(&srv->q_cv, &srv->q_lock);
	c = ready_unlink(srv);
	pthread_mutex_unlock(&srv->q_lock);
	return c;
}

enum peek { PEEK_GONE = -1, PEEK_PARTIAL = 0, PEEK_COMPLETE = 1 };

/*
 * Walk the records queued on c->fd: complete at the empty FCGI_STDIN
 * record (or past PEEK_MAX, or at a record libfcgi should judge), gone
 * when the peer closed or the connection failed.
 */
static enum peek
peek_request(conn *c, unsigned char *buf, size_t cap, bool *some)
{
	ssize_t n = recv(c->fd, buf, cap, MSG_PEEK | MSG_DONTWAIT);
	size_t off = 0;

	*some = n > 0;
	if (n == 0)
		return PEEK_GONE;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? PEEK_PARTIAL
										 : PEEK_GONE;
	while (off + FCGI_HEADER_LEN <= (size_t)n) {
		const unsigned char *h = buf + off;
		unsigned type = h[1];
		unsigned id = (unsigned)h[2] << 8 | h[3];
		size_t clen = (size_t)h[4] << 8 | h[5];

		if (id != 0 && type == FCGI_BEGIN_REQUEST)
			c->req_id = id;
		else if (id != 0 && type == FCGI_PARAMS && clen == 0)
			c->params_done = true;
		/* the body's end; an abort or a filter's data is libfcgi's to judge */
		else if (id != 0 && (type == FCGI_STDIN ? clen == 0 : type != FCGI_PARAMS)) {
			c->whole = type == FCGI_STDIN;
			c->len = off + FCGI_HEADER_LEN + clen + h[6];
			return PEEK_COMPLETE;
		}
		off += FCGI_HEADER_LEN + clen + h[6];
	}
	return (size_t)n == cap ? PEEK_COMPLETE : PEEK_PARTIAL;
}

static size_t
put_header(unsigned char *at, unsigned type, unsigned id, size_t clen, size_t pad)
{
	const unsigned char h[FCGI_HEADER_LEN] = {1,
						  (unsigned char)type,
						  (unsigned char)(id >> 8),
						  (unsigned char)id,
						  (unsigned char)(clen >> 8),
						  (unsigned char)clen,
						  (unsigned char)pad,
						  0};

	memcpy(at, h, sizeof(h));
	return sizeof(h);
}

/* the waiter answers 503 itself: no request thread is free to */
static void
reply_busy(const conn *c)
{
	static const char reply[] = "Status: 503 Service Unavailable\r\nRetry-After: 5\r\n"
				    "Content-Type: application/json\r\nContent-Length: 32\r\n\r\n"
				    "{\"error\":\"too many slow bodies\"}\n";
	unsigned char msg[4 * FCGI_HEADER_LEN + sizeof(reply) + 8];
	size_t len = sizeof(reply) - 1, pad = (8 - len % 8) % 8, off = 0;

	off += put_header(msg + off, FCGI_STDOUT, c->req_id, len, pad);
	memcpy(msg + off, reply, len);
	off += len;
	memset(msg + off, 0, pad);
	off += pad;
	off += put_header(msg + off, FCGI_STDOUT, c->req_id, 0, 0);
	off += put_header(msg + off, FCGI_END_REQUEST, c->req_id, 8, 0);
	memset(msg + off, 0, 8); /* appStatus 0, FCGI_REQUEST_COMPLETE */
	off += 8;
	if (send(c->fd, msg, off, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_warn("could not answer a request 503: %s", strerror(errno));
}

static void
unpark(server *srv, int i)
{
	conn *c = srv->parked[i];

	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->counted)
		srv->nbodies--;
	srv->parked[i] = srv->parked[--srv->nparked];
}

static void
conn_close(conn *c)
{
	close(c->fd);
	free(c);
}

/*
 * c (parked at i) may have more: hand it on, drop it or keep it parked.
 * hup: the peer closed its end, so what is queued is all there will be: a
 * request with its parameters goes to a thread, which answers (and logs) it.
 */
static void
recheck(server *srv, int i, unsigned char *buf, bool hup)
{
	conn *c = srv->parked[i];
	bool some;
	enum peek p;

	c->whole = false;
	c->peeked_here = false;
	p = peek_request(c, buf, PEEK_MAX, &some);
	if (p == PEEK_PARTIAL && hup)
		p = c->params_done ? PEEK_COMPLETE : PEEK_GONE;
	if (p != PEEK_PARTIAL) {
		unpark(srv, i);
		if (p == PEEK_COMPLETE)
			ready_push(srv, c);
		else
			conn_close(c);
		return;
	}
	if (some && !c->has_deadline) {
		/* a kept connection's next request has begun */
		c->has_deadline = true;
		c->deadline = clock_in_us(CLOCK_MONOTONIC, (int64_t)BODY_DEADLINE_MS * 1000);
	}
	if (c->params_done && c->has_deadline && !c->counted) {
		if (srv->nbodies >= srv->park_max) {
			log_warn("%d bodies still arriving: a new one is answered 503",
				 srv->nbodies);
			unpark(srv, i);
			reply_busy(c);
			conn_close(c);
			return;
		}
		c->counted = true;
		srv->nbodies++;
	}
}

static void
park(server *srv, conn *c, unsigned char *buf)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.ptr = c};

	c->params_done = false;
	c->counted = false;
	c->req_id = 0;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
		log_error("could not wait for a request: %s", strerror(errno));
		conn_close(c);
		return;
	}
	srv->parked = xgrow(srv->parked, (size_t)srv->nparked + 1, &srv->parked_alloc,
			    sizeof(*srv->parked));
	srv->parked[srv->nparked++] = c;
	recheck(srv, srv->nparked - 1, buf, false);
}

/* a connection from the listening socket, or NULL (none left, or lost to another thread) */
static conn *
accept_conn(request_thread *t)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(0, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
	conn *c;

	if (fd < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED && errno != EPROTO)
			log_error("could not accept a FastCGI connection: %s", strerror(errno));
		return NULL;
	}
	if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) {
		int one = 1;

		/* no replies to what we send: no Nagle (as libfcgi's accept) */
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c = t->spare != NULL ? t->spare : xmalloc(sizeof(*c));
	t->spare = NULL;
	*c = (conn){.fd = fd, .has_deadline = true};
	c->deadline = clock_in_us(CLOCK_MONOTONIC, (int64_t)BODY_DEADLINE_MS * 1000);
	return c;
}

/*
 * peek_request on a connection just accepted, waiting up to FIRST_WAIT_MS
 * for the rest of its request (edge-triggered: each arrival, not the bytes
 * already peeked): the web server connects first and writes a moment later,
 * and a request that arrives in that moment is not worth a hand-off.
 */
static enum peek
peek_soon(request_thread *t, conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.ptr = c};
	struct timespec until;
	bool some;
	enum peek p = peek_request(c, t->peek, PEEK_MAX, &some);

	if (p != PEEK_PARTIAL || epoll_ctl(t->soonfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		return p;
	until = clock_in_us(CLOCK_MONOTONIC, (int64_t)FIRST_WAIT_MS * 1000);
	for (;;) {
		long left = ms_until(&until);

		if (left == 0 || epoll_wait(t->soonfd, &ev, 1, (int)left) <= 0 ||
		    (ev.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0)
			break;
		p = peek_request(c, t->peek, PEEK_MAX, &some);
		if (p != PEEK_PARTIAL)
			break;
	}
	(void)epoll_ctl(t->soonfd, EPOLL_CTL_DEL, c->fd, NULL);
	return p;
}

/* c's request has not all arrived: the waiter waits for the rest; false once it has ended */
static bool
hand_to_waiter(server *srv, conn *c)
{
	bool done;

	pthread_mutex_lock(&srv->q_lock);
	done = srv->waiter_done;
	if (!done) {
		c->next = srv->incoming;
		srv->incoming = c;
	}
	pthread_mutex_unlock(&srv->q_lock);
	if (!done)
		wake_waiter(srv);
	return !done;
}

static void *
waiter_main(void *arg)
{
	server *srv = arg;
	unsigned char *buf = xmalloc(PEEK_MAX);

	for (;;) {
		struct epoll_event evs[32];
		bool stopping = atomic_load(&srv->stopping);
		long wait = -1;
		int k;
		conn *back, *fresh;

		pthread_mutex_lock(&srv->q_lock);
		back = srv->returned;
		srv->returned = NULL;
		fresh = srv->incoming;
		srv->incoming = NULL;
		pthread_mutex_unlock(&srv->q_lock);
		while (back) {
			conn *next = back->next;

			if (stopping) {
				conn_close(back);
			} else {
				back->has_deadline = false;
				park(srv, back, buf);
			}
			back = next;
		}
		/* accepted before the stop: parked as any other, under their deadline */
		while (fresh) {
			conn *next = fresh->next;

			park(srv, fresh, buf);
			fresh = next;
		}
		/* deadlines; a kept connection waiting for its next request is closed at a stop */
		for (int i = srv->nparked - 1; i >= 0; i--) {
			conn *c = srv->parked[i];
			long left = c->has_deadline ? ms_until(&c->deadline) : stopping ? 0 : -1;

			if (left == 0) {
				unpark(srv, i);
				if (c->has_deadline && c->params_done) {
					c->late = true;
					ready_push(srv, c);
				} else {
					conn_close(c);
				}
			} else if (left > 0 && (wait < 0 || left < wait)) {
				wait = left;
			}
		}
		if (stopping && srv->nparked == 0) {
			/* done, unless a request thread handed one over since (then it is parked)
			 */
			bool done;

			pthread_mutex_lock(&srv->q_lock);
			done = srv->incoming == NULL;
			if (done) {
				srv->waiter_done = true;
				pthread_cond_broadcast(&srv->q_cv);
			}
			pthread_mutex_unlock(&srv->q_lock);
			if (done)
				break;
			continue;
		}
		k = epoll_wait(srv->epfd, evs, 32, wait < 0 ? -1 : (int)wait);
		for (int e = 0; e < k; e++) {
			conn *c = evs[e].data.ptr;

			if (c == (conn *)srv) {
				uint64_t v;

				(void)!read(srv->wakefd, &v, sizeof(v));
			} else {
				for (int i = 0; i < srv->nparked; i++)
					if (srv->parked[i] == c) {
						recheck(srv, i, buf,
							(evs[e].events &
							 (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
						break;
					}
			}
		}
	}
	free(buf);
	return NULL;
}

/*
 * The next complete request for this thread: one it accepted and found
 * complete, or one from the ready queue; NULL when stopped and nothing is
 * left.  A request accepted complete is served by the thread that accepted
 * it: no hand-off.
 */
static conn *
next_request(request_thread *t)
{
	server *srv = t->srv;

	for (;;) {
		struct epoll_event evs[3];
		conn *ready = NULL, *mine = NULL;
		int n;

		if (atomic_load(&srv->stopping))
			return ready_take(srv);
		n = epoll_wait(t->epfd, evs, 3, -1);
		for (int e = 0; e < n; e++) {
			if (evs[e].data.ptr == &srv->readyfd) {
				uint64_t v;

				if (ready == NULL && read(srv->readyfd, &v, sizeof(v)) == sizeof(v))
					ready = ready_pop(srv);
			} else if (evs[e].data.ptr == t) {
				mine = accept_conn(t);
			}
			/* stopfd: seen at the top */
		}
		if (mine != NULL) {
			switch (peek_soon(t, mine)) {
			case PEEK_COMPLETE:
				break;
			case PEEK_PARTIAL:
				/* after the stop, read here under the body's deadline */
				if (hand_to_waiter(srv, mine))
					mine = NULL;
				break;
			default:
				close(mine->fd);
				t->spare = mine;
				mine = NULL;
				break;
			}
		}
		if (mine != NULL && ready != NULL) {
			/* both at once (rare): the queued one to another thread */
			ready_push(srv, ready);
			ready = NULL;
		}
		if (mine != NULL) {
			mine->peeked_here = mine->whole;
			return mine;
		}
		if (ready != NULL)
			return ready;
	}
}

static const char *
rec_param(void *ctx, const char *name)
{
	return fcgirec_param(ctx, name);
}

static ssize_t
rec_read(void *ctx, void *buf, size_t len)
{
	return (ssize_t)fcgirec_read(ctx, buf, len > SSIZE_MAX ? SSIZE_MAX : len);
}

static void
rec_write(void *ctx, const void *buf, size_t len)
{
	fcgirec_write(ctx, buf, len);
}

static char *const *
rec_params(void *ctx)
{
	return ((fcgirec *)ctx)->env;
}

/* to the waiter, for the connection's next request */
static void
give_back(server *srv, conn *c)
{
	pthread_mutex_lock(&srv->q_lock);
	c->next = srv->returned;
	srv->returned = c;
	pthread_mutex_unlock(&srv->q_lock);
	wake_waiter(srv);
}

static int
send_all(int fd, const unsigned char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * A request queued whole, served without libfcgi: its records parsed in
 * the peek buffer (fcgirec.h), the bytes then read past, the reply sent
 * with one write.  Nothing waits for the peer and nothing is allocated.
 * On a unix socket only, where closing at once loses nothing (see the
 * lingering close below); false, nothing read, for libfcgi to serve it.
 */
static bool
serve_whole(request_thread *t, conn *c)
{
	server *srv = t->srv;
	const http_io io = {rec_param, rec_read, rec_write, &t->rec, rec_params};
	const unsigned char *out;
	size_t len;
	bool sent;

	if (!c->whole || c->late || !srv->unix_socket)
		return false;
	/* one the waiter found complete: its bytes are in the waiter's buffer */
	if (!c->peeked_here &&
	    recv(c->fd, t->peek, c->len, MSG_PEEK | MSG_DONTWAIT) != (ssize_t)c->len)
		return false;
	if (fcgirec_parse(&t->rec, t->peek, c->len) != 0)
		return false;
	if (recv(c->fd, t->sink, c->len, MSG_DONTWAIT) != (ssize_t)c->len) {
		log_warn("could not read a FastCGI request peeked whole: %s", strerror(errno));
		conn_close(c);
		return true;
	}
	handler_serve(t->h, &io);
	out = fcgirec_reply(&t->rec, &len);
	sent = send_all(c->fd, out, len) == 0;
	if (sent && t->rec.keep_conn) {
		*c = (conn){.fd = c->fd};
		give_back(srv, c);
		return true;
	}
	close(c->fd);
	if (t->spare == NULL)
		t->spare = c;
	else
		free(c);
	return true;
}

static void *
thread_main(void *arg)
{
	request_thread *t = arg;
	server *srv = t->srv;
	request_io *rq = &t->rq;
	const http_io io = {fcgx_param, fcgx_read, fcgx_write, rq, fcgx_params};
	conn *c;

	while ((c = next_request(t)) != NULL) {
		long left;
		int rc;

		if (serve_whole(t, c))
			continue;
		left = ms_until(&c->deadline);

		/*
		 * libfcgi reads this connection (open and "kept", so it does not
		 * accept); the parameters are queued, so no read waits, and a
		 * protocol error closes it and returns at once (no listening
		 * socket).  A request queued whole needs no receive timeout.
		 */
		rq->req.ipcFd = c->fd;
		rq->req.keepConnection = 1;
		rq->deadline = c->deadline;
		rq->timed_out = false;
		rq->whole = c->whole && !c->late;
		if (!rq->whole)
			(void)set_read_timeout(c->fd, left > 0 ? left : LATE_READ_MS);
		if (c->late) /* a body past its deadline: answered 408 */
			clock_gettime(CLOCK_MONOTONIC, &rq->deadline);
		if (t->spare == NULL)
			t->spare = c;
		else
			free(c);
		rc = FCGX_Accept_r(&rq->req);
		if (rc < 0) {
			rq->req.ipcFd = -1;
			continue;
		}
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
		 * connection goes back to the waiter for its next request.
		 */
		if (!rq->timed_out) {
			left = ms_until(&rq->deadline);
			bool consumed = left > 0 &&
					(rq->whole || set_read_timeout(rq->req.ipcFd, left) == 0) &&
					input_consumed(&rq->req);

			if (!consumed && ms_until(&rq->deadline) == 0)
				rq->timed_out = true;
			else if (srv->unix_socket && consumed)
				FCGX_Detach(&rq->req);
		}
		if (rq->timed_out)
			FCGX_Detach(&rq->req);
		else if (!rq->whole)
			(void)set_read_timeout(rq->req.ipcFd, 0);
		FCGX_Finish_r(&rq->req);
		if (rq->req.ipcFd >= 0) {
			conn *k = t->spare != NULL ? t->spare : xmalloc(sizeof(*k));

			t->spare = NULL;
			*k = (conn){.fd = rq->req.ipcFd};
			rq->req.ipcFd = -1;
			rq->req.detached = 0;
			give_back(srv, k);
		}
	}
	pthread_mutex_lock(&srv->exit_lock);
	srv->running--;
	pthread_cond_signal(&srv->exit_cv);
	pthread_mutex_unlock(&srv->exit_lock);
	return NULL;
}

static int
epoll_add(int epfd, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

server *
server_start(const conf *cfg, store *st, int threads)
{
	server *srv = xcalloc(1, sizeof(*srv));

	pthread_mutex_init(&srv->exit_lock, NULL);
	pthread_cond_init(&srv->exit_cv, NULL);
	pthread_mutex_init(&srv->q_lock, NULL);
	pthread_cond_init(&srv->q_cv, NULL);
	atomic_init(&srv->stopping, false);
	srv->n = threads;
	srv->park_max = PARK_PER_THREAD * threads;
	{
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct epoll_event ev = {.events = EPOLLIN};
		int fl = fcntl(0, F_GETFL);

		srv->unix_socket = getsockname(0, (struct sockaddr *)&ss, &len) == 0 &&
				   ss.ss_family == AF_UNIX;
		if (fl < 0 || fcntl(0, F_SETFL, fl | O_NONBLOCK) != 0)
			log_warn("could not make the listening socket non-blocking: %s (accepting "
				 "may wait for another process's connection)",
				 strerror(errno));
		srv->epfd = epoll_create1(EPOLL_CLOEXEC);
		srv->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		srv->readyfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
		srv->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ev.data.ptr = srv;
		if (srv->epfd < 0 || srv->wakefd < 0 || srv->readyfd < 0 || srv->stopfd < 0 ||
		    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->wakefd, &ev) != 0) {
			log_error("could not set up the waiter: %s", strerror(errno));
			abort();
		}
	}
	srv->threads = xcalloc((size_t)threads, sizeof(*srv->threads));
	for (int i = 0; i < threads; i++) {
		request_thread *t = &srv->threads[i];

		t->srv = srv;
		t->h = handler_new(cfg, st);
		t->peek = xmalloc(PEEK_MAX);
		t->sink = xmalloc(PEEK_MAX);
		fcgirec_init(&t->rec);
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		t->soonfd = epoll_create1(EPOLL_CLOEXEC);
		if (t->epfd < 0 || t->soonfd < 0 ||
		    epoll_add(t->epfd, 0, EPOLLIN | EPOLLEXCLUSIVE, t) != 0 ||
		    epoll_add(t->epfd, srv->readyfd, EPOLLIN | EPOLLEXCLUSIVE, &srv->readyfd) !=
			    0 ||
		    epoll_add(t->epfd, srv->stopfd, EPOLLIN, &srv->stopfd) != 0) {
			log_error("could not set up request thread %d: %s", i, strerror(errno));
			abort();
		}
		FCGX_InitRequest(&t->rq.req, -1, 0);
		pthread_mutex_lock(&srv->exit_lock);
		srv->running++;
		pthread_mutex_unlock(&srv->exit_lock);
		if (pthread_create(&t->tid, NULL, thread_main, t) != 0) {
			log_error("could not start request thread %d", i);
			abort();
		}
	}
	if (pthread_create(&srv->waiter, NULL, waiter_main, srv) != 0) {
		log_error("could not start the waiter thread");
		abort();
	}
	return srv;
}

int
server_stop(server *srv, int timeout_ms)
{
	struct timespec deadline;
	int left;

	atomic_store(&srv->stopping, true);
	wake_waiter(srv);
	{
		uint64_t one = 1;

		/* every request thread: it stops accepting */
		if (write(srv->stopfd, &one, sizeof(one)) < 0)
			log_warn("could not wake the request threads: %s", strerror(errno));
	}
	deadline = clock_in_us(CLOCK_REALTIME, (int64_t)timeout_ms * 1000);
	/* the request threads end after the waiter (and the ready queue) */
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
	pthread_join(srv->waiter, NULL);
	for (int i = 0; i < srv->n; i++) {
		pthread_join(srv->threads[i].tid, NULL);
		FCGX_Free(&srv->threads[i].rq.req, 1);
		handler_free(srv->threads[i].h);
		close(srv->threads[i].epfd);
		close(srv->threads[i].soonfd);
		free(srv->threads[i].peek);
		free(srv->threads[i].sink);
		fcgirec_release(&srv->threads[i].rec);
		free(srv->threads[i].spare);
	}
	/* kept connections a request thread gave back after the waiter ended */
	while (srv->returned) {
		conn *next = srv->returned->next;

		conn_close(srv->returned);
		srv->returned = next;
	}
	free(srv->threads);
	free(srv->parked);
	close(srv->epfd);
	close(srv->wakefd);
	close(srv->readyfd);
	close(srv->stopfd);
	pthread_cond_destroy(&srv->q_cv);
	pthread_mutex_destroy(&srv->q_lock);
	pthread_cond_destroy(&srv->exit_cv);
	pthread_mutex_destroy(&srv->exit_lock);
	free(srv);
	return 0;
}
