/* SPDX-License-Identifier: ISC */
/*
 * handler.h - one webhook request, from routing to the reply
 *
 * Cheapest rejection first: endpoint and method, then the declared length
 * (413 before reading), then the signature over the exact raw bytes, then
 * the envelope, then one committed insert, and only then the 2xx.
 */
#ifndef HOOKINBOX_HANDLER_H
#define HOOKINBOX_HANDLER_H

#include <stddef.h>
#include <sys/types.h>

#include "conf.h"
#include "store.h"

typedef struct handler handler;

/*
 * The request as its transport carries it: FastCGI (server.c) or plain
 * CGI (main.c).  param returns a CGI variable ("REQUEST_URI",
 * "HTTP_STRIPE_SIGNATURE") or NULL; read returns bytes read, 0 at the end,
 * -1 on error (errno ETIMEDOUT: the body took too long, answered 408);
 * write sends part of the reply.
 */
typedef struct http_io {
	const char *(*param)(void *ctx, const char *name);
	ssize_t (*read)(void *ctx, void *buf, size_t len);
	void (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
	/*
	 * Optional (NULL: not available): every variable as "NAME=value", NULL
	 * last, so that the kept headers are found in one pass
	 */
	char *const *(*params)(void *ctx);
} http_io;

/* cfg and st stay owned by the caller and must outlive the handler */
handler *handler_new(const conf *cfg, store *st);
void handler_free(handler *h);

/* answer one request; never exits, whatever the peer sent */
void handler_serve(handler *h, const http_io *io);

/*
 * Requests are numbered "pid-n" in the log, n counting from 1 in the
 * process; a re-executed responder (SIGHUP) keeps its pid, so it resumes
 * the count where the previous image stopped.
 */
unsigned long long handler_requests(void);
void handler_requests_resume(unsigned long long n);

/* write out rejection counts gathered so far (also done periodically) */
void handler_flush_counts(handler *h);

#endif
