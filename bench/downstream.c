/* SPDX-License-Identifier: ISC */
/*
 * downstream.c - the benchmark's downstream: an HTTP/1.1 keep-alive server
 * that answers every request after a fixed latency (--latency ms): 200 by
 * default, or as --mode says, so that the bench can measure the circuit
 * breaker against downstreams that misbehave in the ordinary way:
 *   fail-first  500 to the first call of each Idempotency-Key, 200 after
 *   flaky       500 to a call when a hash of (key, call number) is odd, for
 *               the first --max-failures calls of a key; 200 after: about
 *               half the calls fail, the same ones in every run
 *   dead        500 to everything
 *
 * One thread, epoll, non-blocking sockets.  Since every reply is due the
 * same time after its request, the pending replies form a FIFO ordered by
 * due time; epoll_wait sleeps until the head is due.  Every request's
 * Idempotency-Key is appended to --keys, so the caller can count distinct
 * calls.  On SIGUSR1 it prints "requests=N failed=M twice=K" to stdout (K:
 * 200s to a key that had one already: a second effect) and goes on; on
 * SIGTERM it prints the same and exits 0.
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
#define KEY_MAX 256	     /* longer Idempotency-Keys are counted by their first bytes */

typedef enum mode { MODE_OK, MODE_FAIL_FIRST, MODE_FLAKY, MODE_DEAD } mode;

typedef struct conn {
	char *in;
	size_t in_len;
	size_t need;  /* bytes of the current request (head + body), 0 = unknown */
	unsigned gen; /* bumped on close: stale FIFO entries are skipped */
	int pending;  /* replies queued, not yet written */
	bool fail;    /* the current request is answered 500 */
	bool open;
} conn;

typedef struct due {
	int fd;
	unsigned gen;
	bool fail; /* answer 500 */
	int64_t at_us;
} due;

/* calls seen per Idempotency-Key: open addressing, grown at half full */
typedef struct seen {
	char *key;
	unsigned calls;
	bool answered; /* a 200 went to this key */
} seen;

static conn conns[MAX_FD];
static due *fifo;
static size_t fifo_cap, fifo_head, fifo_tail;
static volatile sig_atomic_t stop, tell;
static uint64_t n_requests, n_failed, n_twice;
static FILE *keys;
static mode run_mode = MODE_OK;
static unsigned max_failures = 3;
static seen *seen_tab;
static size_t seen_cap, seen_used;

static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			    "Content-Length: 12\r\n\r\n{\"ok\":true}\n";
static const char reply_fail[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: "
				 "application/json\r\nContent-Length: 13\r\n\r\n{\"ok\":false}\n";

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
on_usr1(int sig)
{
	(void)sig;
	tell = 1;
}

static void
print_counts(void)
{
	printf("requests=%llu failed=%llu twice=%llu\n", (unsigned long long)n_requests,
	       (unsigned long long)n_failed, (unsigned long long)n_twice);
	fflush(stdout);
}

/* FNV-1a: the same key and call number fail in every run */
static uint64_t
fnv1a(const char *p, size_t len, uint64_t h)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* the calls of key so far (this one not counted yet) */
static seen *
find_key(const char *key, size_t len)
{
	size_t i;

	if (len > KEY_MAX)
		len = KEY_MAX;
	if (seen_used >= seen_cap / 2) {
		size_t ncap = seen_cap ? seen_cap * 2 : 65536;
		seen *n = calloc(ncap, sizeof(*n));

		if (n == NULL)
			abort();
		for (size_t k = 0; k < seen_cap; k++) {
			if (seen_tab[k].key == NULL)
				continue;
			i = fnv1a(seen_tab[k].key, strlen(seen_tab[k].key),
				  14695981039346656037ULL) &
			    (ncap - 1);
			while (n[i].key != NULL)
				i = (i + 1) & (ncap - 1);
			n[i] = seen_tab[k];
		}
		free(seen_tab);
		seen_tab = n;
		seen_cap = ncap;
	}
	i = fnv1a(key, len, 14695981039346656037ULL) & (seen_cap - 1);
	while (seen_tab[i].key != NULL &&
	       (strncmp(seen_tab[i].key, key, len) != 0 || seen_tab[i].key[len] != '\0'))
		i = (i + 1) & (seen_cap - 1);
	if (seen_tab[i].key == NULL) {
		if ((seen_tab[i].key = strndup(key, len)) == NULL)
			abort();
		seen_used++;
	}
	return &seen_tab[i];
}

/* splitmix64's finaliser: every bit of h moves every bit of the result */
static uint64_t
mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* whether this call of key (before of them already seen) is answered 500 */
static bool
fails(const char *key, size_t len, unsigned before)
{
	char n[16];

	switch (run_mode) {
	case MODE_OK:
		return false;
	case MODE_FAIL_FIRST:
		return before == 0;
	case MODE_FLAKY:
		if (before >= max_failures)
			return false;
		snprintf(n, sizeof(n), "#%u", before);
		return mix(fnv1a(n, strlen(n), fnv1a(key, len, 14695981039346656037ULL))) >> 63;
	case MODE_DEAD:
		break;
	}
	return true;
}

static void
push(int fd, int64_t at, bool fail)
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
	fifo[fifo_tail % fifo_cap] = (due){fd, conns[fd].gen, fail, at};
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
			if ((v = header(c->in, "Idempotency-Key", &vl)) != NULL) {
				if (keys != NULL)
					fprintf(keys, "%.*s\n", (int)vl, v);
				if (run_mode != MODE_OK && run_mode != MODE_DEAD) {
					seen *k = find_key(v, vl);

					c->fail = fails(v, vl, k->calls++);
					n_twice += !c->fail && k->answered;
					k->answered |= !c->fail;
				} else {
					c->fail = run_mode == MODE_DEAD;
				}
			} else {
				c->fail = run_mode == MODE_DEAD;
			}
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
		n_failed += c->fail;
		push(fd, now + latency_us, c->fail);
	}
}

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: downstream [--port N] [--latency MS] [--keys FILE]\n"
		    "                  [--mode ok|fail-first|flaky|dead] [--max-failures N]\n"
		    "HTTP/1.1 server answering every request after a fixed latency: 200,\n"
		    "or 500 as --mode says (flaky: about half of the first N calls of a key,\n"
		    "default 3, chosen by a hash of the key and the call's number).\n"
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
		{"mode", required_argument, NULL, 'm'},
		{"max-failures", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int port = 0, lfd, ep, c, one = 1;
	int64_t latency_us = 20000;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct epoll_event ev, evs[256];
	struct sigaction sig;

	while ((c = getopt_long(argc, argv, "p:l:k:m:f:h", longopts, NULL)) != -1) {
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
		case 'm':
			if (strcmp(optarg, "ok") == 0) {
				run_mode = MODE_OK;
			} else if (strcmp(optarg, "fail-first") == 0) {
				run_mode = MODE_FAIL_FIRST;
			} else if (strcmp(optarg, "flaky") == 0) {
				run_mode = MODE_FLAKY;
			} else if (strcmp(optarg, "dead") == 0) {
				run_mode = MODE_DEAD;
			} else {
				fprintf(stderr, "downstream: unknown mode \"%s\"\n", optarg);
				usage(stderr);
				return EX_USAGE;
			}
			break;
		case 'f':
			max_failures = (unsigned)atoi(optarg);
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
	sig.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sig, NULL);
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

		if (tell) {
			tell = 0;
			print_counts();
		}

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
			/* a 100-byte reply fits any socket buffer; a short write closes */
			const char *rp = d.fail ? reply_fail : reply;
			size_t rl = d.fail ? sizeof(reply_fail) - 1 : sizeof(reply) - 1;

			if (write(d.fd, rp, rl) != (ssize_t)rl) {
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
	print_counts();
	return 0;
}
