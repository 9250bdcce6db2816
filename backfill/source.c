/* SPDX-License-Identifier: ISC */
/*
 * source.c - the table of provider APIs and what their files share
 */
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynbuf.h"
#include "jscan.h"
#include "xalloc.h"

extern const source_ops source_stripe;
extern const source_ops source_github;

/* an API listing is the event nested two levels deeper than a delivery */
#define API_DEPTH_MAX 128

/* one row per provider whose API hookinbox-backfill can ask */
static const source_ops *const table[] = {&source_stripe, &source_github};

const source_ops *
source_get(provider p)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i]->provider, provider_name(p)) == 0)
			return table[i];
	}
	return NULL;
}

void
source_query_set(source_query *q, const char *name, const char *value)
{
	for (size_t i = 0; i < q->n_param; i++)
		if (strcmp(q->param[i].name, name) == 0) {
			q->param[i].value = value;
			return;
		}
	/* the caller's options name fewer params than there is room for */
	if (q->n_param == SOURCE_PARAMS_MAX)
		abort();
	q->param[q->n_param++] = (source_param){name, value};
}

const char *
source_query_get(const source_query *q, const char *name)
{
	for (size_t i = 0; i < q->n_param; i++)
		if (strcmp(q->param[i].name, name) == 0)
			return q->param[i].value;
	return NULL;
}

static bool
takes(const source_ops *ops, const char *name)
{
	for (const char *const *p = ops->params; p != NULL && *p != NULL; p++)
		if (strcmp(*p, name) == 0)
			return true;
	return false;
}

const char *
source_check(const source_ops *ops, const source_query *q, char *buf, size_t len)
{
	for (size_t i = 0; i < q->n_param; i++)
		if (!takes(ops, q->param[i].name)) {
			snprintf(buf, len, "--%s is not an option of provider %s", q->param[i].name,
				 ops->provider);
			return buf;
		}
	return ops->check != NULL ? ops->check(q) : NULL;
}

const char *const *
source_kept_headers(const source_ops *ops)
{
	provider p;

	if (provider_from_name(ops->provider, &p) < 0)
		abort(); /* a row names a provider of provider.c's table */
	return provider_headers(p);
}

void
bf_page_release(bf_page *page)
{
	for (size_t i = 0; i < page->n; i++) {
		bf_item *it = &page->items[i];

		free(it->id);
		free(it->ref);
		free(it->body);
		for (size_t k = 0; k < it->n_headers; k++) {
			free(it->headers[k].name);
			free(it->headers[k].value);
		}
		free(it->headers);
	}
	free(page->items);
	memset(page, 0, sizeof(*page));
}

bf_item *
bf_page_add(bf_page *page)
{
	page->items = xgrow(page->items, page->n + 1, &page->alloc, sizeof(*page->items));
	memset(&page->items[page->n], 0, sizeof(page->items[0]));
	return &page->items[page->n++];
}

/* "--api-url, --repo and --hook-id": the options that say where ops looks */
static void
where_options(const source_ops *ops, char *buf, size_t len)
{
	size_t n = 0;
	int w = snprintf(buf, len, "--api-url");

	while (ops->params != NULL && ops->params[n] != NULL)
		n++;
	for (size_t i = 0; i < n && w >= 0 && (size_t)w < len; i++)
		w += snprintf(buf + w, len - (size_t)w, "%s--%s", i + 1 == n ? " and " : ", ",
			      ops->params[i]);
}

int
source_answer(const source_ops *ops, const api_response *r, const char *what, jscan_value *root,
	      source_error *e)
{
	char where[128];

	e->status = r->status;
	/* an API over its rate limit may answer 403 (GitHub) as well as 429 */
	if ((r->status == 403 || r->status == 429) && r->rate_limited) {
		e->status = 429;
		snprintf(e->msg, sizeof(e->msg),
			 "%s: rate limited (HTTP %ld): run again later, or with a shorter range",
			 what, r->status);
		return -1;
	}
	switch (r->status) {
	case 200:
		break;
	case 401:
		snprintf(e->msg, sizeof(e->msg),
			 "%s: credential refused (HTTP 401): check the --credential file", what);
		return -1;
	case 403:
		snprintf(e->msg, sizeof(e->msg),
			 "%s: credential refused (HTTP 403): it lacks the permission to read "
			 "events or webhook deliveries",
			 what);
		return -1;
	case 404:
		where_options(ops, where, sizeof(where));
		snprintf(e->msg, sizeof(e->msg), "%s: not found (HTTP 404): check %s", what, where);
		return -1;
	case 429:
		snprintf(e->msg, sizeof(e->msg),
			 "%s: rate limited (HTTP 429): run again later, or with a shorter range",
			 what);
		return -1;
	default:
		snprintf(e->msg, sizeof(e->msg), "%s: the API answered HTTP %ld", what, r->status);
		return -1;
	}
	if (jscan_parse(r->body, r->len, API_DEPTH_MAX, root) != 0) {
		snprintf(e->msg, sizeof(e->msg), "%s: the API's answer is not JSON", what);
		return -1;
	}
	return 0;
}

bool
source_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 255)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.' || c == ':'))
			return false;
	}
	return true;
}
