/* SPDX-License-Identifier: ISC */
/*
 * downstream.c - the benchmark's downstream: an HTTP/1.1 keep-alive server
 * that answers every request 200 after a fixed latency (--latency ms).
 *
 * One thread, epoll, non-blocking sockets.  Since every reply is due the
 * same time after its request, the pending replies form a FIFO ordered by
 * due time; epoll_wait sleeps until the head is due.  Every request's
 * Idempotency-Key is appended to --keys, so the caller can count distinct
 * calls.  On SIGTERM it prints "requests=N" to stdout and exits 0.
 * The port it listens on (127.0.0.1, --port 0 picks one) is printed first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 65536
#define IN_CAP (1024 * 1024) /* a request bigger than this is refused */

typedef struct conn {
	char *in;
	size_t in_len;
	size_t need;  /* bytes of the current request (head + body), 0 = unknown */
	unsigned gen; /* bumped on close: stale FIFO entries are skipped */
	int pending;  /* replies queued, not yet written */
	bool open;
} conn;

typedef struct due {
	int fd;
	unsigned gen;
	int64_t at_us;
} due;

static conn conns[MAX_FD];
static due *fifo;
static size_t fifo_cap, fifo_head, fifo_tail;
static volatile sig_atomic_t stop;
static uint64_t n_requests;
static FILE *keys;

static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			    "Content-Length: 12\r\n\r\n{\"ok\":true}\n";

static int64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void
push(int fd, int64_t at)
{
	if (fifo_tail - fifo_head == fifo_cap) {
		size_t ncap = fifo_cap ? fifo_cap * 2 : 4096;
		due *n = malloc(ncap * sizeof(*n));

		if (n == NULL)
			abort();
		for (size_t i = 0; i < fifo_cap; i++)
			n[i] = fifo[(fifo_head + i) % fifo_cap];
		free(fifo);
		fifo = n;
		fifo_tail = fifo_tail - fifo_head;
		fifo_head = 0;
		fifo_cap = ncap;
	}
	fifo[fifo_tail % fifo_cap] = (due){fd, conns[fd].gen, at};
	fifo_tail++;
}

static void
close_conn(int fd)
{
	conns[fd].open = false;
	conns[fd].gen++;
	conns[fd].in_len = 0;
	conns[fd].need = 0;
	conns[fd].pending = 0;
	close(fd);
}

/* value of a header in head (NUL-terminated), or NULL; *len set */
static const char *
header(const char *head, const char *name, size_t *len)
{
	size_t nl = strlen(name);

	for (const char *p = strstr(head, "\r\n"); p != NULL; p = strstr(p, "\r\n")) {
		p += 2;
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;

			while (*v == ' ')
				v++;
			*len = strcspn(v, "\r\n");
			return v;
		}
	}
	return NULL;
}

/* take complete requests off the connection's buffer; -1: close it */
static int
parse(int fd, int64_t now, int64_t latency_us)
{
	conn *c = &conns[fd];

	for (;;) {
		if (c->need == 0) {
			char *end;
			const char *v;
			size_t hl, vl;
			unsigned long long body = 0;

			if (c->in_len == 0)
				return 0;
			c->in[c->in_len] = '\0';
			end = strstr(c->in, "\r\n\r\n");
			if (end == NULL)
				return c->in_len >= IN_CAP ? -1 : 0;
			hl = (size_t)(end - c->in) + 4;
			end[2] = '\0';
			if ((v = header(c->in, "Content-Length", &vl)) != NULL)
				body = strtoull(v, NULL, 10);
			if (body > IN_CAP - hl)
				return -1;
			if (keys != NULL && (v = header(c->in, "Idempotency-Key", &vl)) != NULL)
				fprintf(keys, "%.*s\n", (int)vl, v);
			end[2] = '\r';
			c->need = hl + (size_t)body;
		}
		if (c->in_len < c->need)
			return 0;
		memmove(c->in, c->in + c->need, c->in_len - c->need);
		c->in_len -= c->need;
		c->need = 0;
		c->pending++;
		n_requests++;
		push(fd, now + latency_us);
	}
}

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: downstream [--port N] [--latency MS] [--keys FILE]\n"
		    "HTTP/1.1 server answering every request 200 after a fixed latency.\n"
		    "Exit status: 0 ok, 64 usage error, 71 system error.\n");
}

int main(int argc, char **argv);

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"latency", required_argument, NULL, 'l'},
		{"keys", required_argument, NULL, 'k'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int port = 0, lfd, ep, c, one = 1;
	int64_t latency_us = 20000;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct epoll_event ev, evs[256];
	struct sigaction sig;

	while ((c = getopt_long(argc, argv, "p:l:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'l':
			latency_us = (int64_t)(atof(optarg) * 1000);
			break;
		case 'k':
			if ((keys = fopen(optarg, "w")) == NULL) {
				fprintf(stderr, "downstream: could not open \"%s\": %s\n", optarg,
					strerror(errno));
				return EX_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	memset(&sig, 0, sizeof(sig));
	sig.sa_handler = on_term;
	sigaction(SIGTERM, &sig, NULL);
	sigaction(SIGINT, &sig, NULL);
	sig.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sig, NULL);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1024) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
		fprintf(stderr, "downstream: could not listen: %s\n", strerror(errno));
		return EX_OSERR;
	}
	printf("port=%d\n", ntohs(sa.sin_port));
	fflush(stdout);
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);

	while (!stop) {
		int64_t now = mono_us();
		struct timespec timeout = {1, 0};
		int n;

		/* write the replies that are due */
		while (fifo_head < fifo_tail) {
			due d = fifo[fifo_head % fifo_cap];

			if (d.at_us > now) {
				timeout.tv_sec = (time_t)((d.at_us - now) / 1000000);
				timeout.tv_nsec = (long)((d.at_us - now) % 1000000) * 1000;
				break;
			}
			fifo_head++;
			if (!conns[d.fd].open || conns[d.fd].gen != d.gen)
				continue;
			/* a 80-byte reply fits any socket buffer; a short write closes */
			if (write(d.fd, reply, sizeof(reply) - 1) != (ssize_t)(sizeof(reply) - 1)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, d.fd, NULL);
				close_conn(d.fd);
				continue;
			}
			conns[d.fd].pending--;
		}
		n = epoll_pwait2(ep, evs, 256, &timeout, NULL);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "downstream: epoll_pwait2: %s\n", strerror(errno));
			return EX_OSERR;
		}
		now = mono_us();
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int cfd;

				while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					if (cfd >= MAX_FD) {
						close(cfd);
						continue;
					}
					setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one,
						   sizeof(one));
					if (conns[cfd].in == NULL &&
					    (conns[cfd].in = malloc(IN_CAP + 1)) == NULL)
						abort();
					conns[cfd].open = true;
					ev.events = EPOLLIN;
					ev.data.fd = cfd;
					epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev);
				}
				continue;
			}
			for (;;) {
				conn *cn = &conns[fd];
				ssize_t r;

				if (cn->in_len >= IN_CAP) {
					r = -1;
				} else {
					r = read(fd, cn->in + cn->in_len, IN_CAP - cn->in_len);
					if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
						break;
				}
				if (r <= 0) {
					epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
					close_conn(fd);
					break;
				}
				cn->in_len += (size_t)r;
				if (parse(fd, now, latency_us) != 0) {
					epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
					close_conn(fd);
					break;
				}
			}
		}
	}
	if (keys != NULL)
		fclose(keys);
	printf("requests=%llu\n", (unsigned long long)n_requests);
	return 0;
}
