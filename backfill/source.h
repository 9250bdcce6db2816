/* SPDX-License-Identifier: ISC */
/*
 * source.h - what a provider's API says it sent, one row per provider
 *
 * Each provider whose API lists its events fills one source_ops in its
 * own file (stripe_api.c, github_api.c); source.c holds the table and the
 * helpers they share.  main.c walks the pages, asks the inbox which events
 * it lacks, fetches those (when the listing does not carry them) and
 * stores them.
 */
#ifndef HOOKINBOX_SOURCE_H
#define HOOKINBOX_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api_http.h"
#include "provider.h"

/* one request header the provider sent with the event */
typedef struct bf_header {
	char *name;
	char *value;
} bf_header;

typedef struct bf_item {
	char *id;   /* the delivery key's event id (Stripe: evt_..., GitHub: the guid) */
	char *ref;  /* what fetch needs (GitHub: the delivery's number); may be NULL */
	char *body; /* the event's JSON text as the API returned it; NULL until fetched */
	size_t body_len;
	bf_header *headers; /* the request headers that came with it; may be none */
	size_t n_headers, headers_alloc;
	/* the API says an attempt of it was answered 2xx (GitHub lists attempts),
	 * so hookinbox committed it once; absent from the inbox it was purged
	 * since: never stored again */
	bool answered;
} bf_item;

typedef struct bf_page {
	bf_item *items;
	size_t n, alloc;
} bf_page;

#define SOURCE_PARAMS_MAX 4

/* an option that only some providers' APIs take, by its name without "--" */
typedef struct source_param {
	const char *name;
	const char *value;
} source_param;

/* what to list */
typedef struct source_query {
	int64_t since, until; /* unix seconds, both included */
	source_param param[SOURCE_PARAMS_MAX];
	size_t n_param;
} source_query;

/* set param name of q to value (both kept, not copied), replacing an earlier value */
void source_query_set(source_query *q, const char *name, const char *value);
/* the value of param name, or NULL */
const char *source_query_get(const source_query *q, const char *name);

/*
 * A failed API call: the HTTP status (0: no usable answer) and a one-line
 * message that names no credential.
 */
typedef struct source_error {
	long status;
	char msg[512];
} source_error;

typedef struct source_ops {
	const char *provider;	    /* its name in provider.c's table: "stripe" */
	const char *default_base;   /* the real API */
	const char *const *headers; /* sent with every request, NULL-terminated */
	const char *const *params;  /* the params it takes, NULL-terminated; NULL: none */
	/* what the query lacks for this provider ("needs --repo"), or NULL; may be NULL */
	const char *(*check)(const source_query *q);
	/*
	 * The next page after *cursor (NULL: the first; the ops own what they
	 * put there and free it when done is set).  0 with *page filled and
	 * *done set after the last page; -1 with *e set.
	 */
	int (*next_page)(api_http *h, const source_query *q, char **cursor, bf_page *page,
			 bool *done, source_error *e);
	/* fill it->body (and headers) when the listing did not; NULL when it does */
	int (*fetch)(api_http *h, const source_query *q, bf_item *it, source_error *e);
} source_ops;

/* the row for p, or NULL when hookinbox-backfill cannot ask p's API */
const source_ops *source_get(provider p);

/*
 * NULL when ops can list what q asks for, else why not, in buf or static:
 * a param ops does not take, or what its check says
 */
const char *source_check(const source_ops *ops, const source_query *q, char *buf, size_t len);

/* the request headers ops's provider sends and the responder keeps */
const char *const *source_kept_headers(const source_ops *ops);

void bf_page_release(bf_page *page);
/* add an empty item to page; the pointer is valid until the next add */
bf_item *bf_page_add(bf_page *page);

/*
 * Parse ops's API answer: 0 with *root, or -1 with *e set ("the stripe API
 * answered HTTP 401: credential refused", "... is not JSON"; a 404 names
 * the options that say where ops looks).
 */
struct jscan_value;
int source_answer(const source_ops *ops, const api_response *r, const char *what,
		  struct jscan_value *root, source_error *e);

/*
 * Whether id is usable as a delivery key and in a URL: 1-255 bytes of
 * letters, digits and "_-.:".
 */
bool source_id_ok(const char *id);

#endif
