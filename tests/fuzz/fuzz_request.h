/* SPDX-License-Identifier: ISC */
/*
 * fuzz_request.h - shared set-up for the request harnesses
 *
 * An input is text:
 *
 *	<endpoint name>\n
 *	Header-Name: value\n		(any number; "?: q" sets the query string)
 *	\n
 *	<body: every remaining byte, NULs included>
 *
 * An unknown endpoint name picks one by the first byte, so random bytes
 * still reach every provider.  The endpoints (one per provider, plus hmac
 * and twilio variants) come from a configuration written once, with its
 * secret file (mode 0600), into a temp directory that is removed at exit.
 */
#ifndef HOOKINBOX_FUZZ_REQUEST_H
#define HOOKINBOX_FUZZ_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "verify.h"

/* the fixed "now" the corpus's timestamps are made for */
#define FUZZ_NOW 1700000000

#define FUZZ_MAX_HEADERS 32

typedef struct fuzz_request {
	char *name[FUZZ_MAX_HEADERS]; /* NUL-terminated copies */
	char *value[FUZZ_MAX_HEADERS];
	size_t n;
	char *query;
	unsigned char *body; /* a copy of exactly body_len bytes (ASan sees overreads) */
	request_view view;
} fuzz_request;

/* the configuration (loaded once; aborts when it cannot be) */
const conf *fuzz_conf(void);

/* parse data into *r and choose the endpoint; release with fuzz_request_release */
const endpoint_conf *fuzz_request_parse(const uint8_t *data, size_t size, fuzz_request *r);
void fuzz_request_release(fuzz_request *r);

#endif
