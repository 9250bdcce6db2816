/* SPDX-License-Identifier: ISC */
/*
 * fcgirec.h - a whole FastCGI request in one buffer, and its reply in one write
 *
 * For the usual request, all of whose records have arrived (server.c): the
 * parameters and the body are found in place, in a buffer the caller owns,
 * and the reply is gathered and framed as FCGI_STDOUT records, the empty
 * FCGI_STDOUT and FCGI_END_REQUEST, to be sent at once.  Anything this does
 * not take (another role, several requests, a management or abort record,
 * a malformed record) is left to libfcgi, which reads it from the socket.
 */
#ifndef HOOKINBOX_FCGIREC_H
#define HOOKINBOX_FCGIREC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* reused across requests: nothing is allocated once its arrays have grown */
typedef struct fcgirec {
	unsigned id;
	bool keep_conn; /* FCGI_KEEP_CONN: the connection stays open after the reply */
	char **env;	/* "NAME=value", NULL last: into the parsed buffer */
	size_t env_alloc;
	const unsigned char *body; /* the FCGI_STDIN stream, into the parsed buffer */
	size_t body_len, body_off;
	unsigned char *out; /* the reply: 8 bytes for the first header, then its bytes */
	size_t out_len, out_alloc;
} fcgirec;

void fcgirec_init(fcgirec *r);
void fcgirec_release(fcgirec *r);

/*
 * Parse buf[0..len), which must hold exactly one request up to and with
 * its empty FCGI_STDIN record, rewriting buf in place (the variables made
 * strings, the body made contiguous).  0, or -1 when the request is not
 * one this takes (buf is then garbage).
 */
int fcgirec_parse(fcgirec *r, unsigned char *buf, size_t len);

/* a variable's value, or NULL */
const char *fcgirec_param(const fcgirec *r, const char *name);
/* up to len bytes of the body; 0 at its end */
size_t fcgirec_read(fcgirec *r, void *buf, size_t len);
/* part of the reply, kept until fcgirec_reply */
void fcgirec_write(fcgirec *r, const void *buf, size_t len);

/*
 * The reply as records, in r->out: *len bytes, valid until the next call on
 * r; the output is reset for the next request.
 */
const unsigned char *fcgirec_reply(fcgirec *r, size_t *len);

#endif
