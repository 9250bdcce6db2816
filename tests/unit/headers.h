/* SPDX-License-Identifier: ISC */
/*
 * headers.h - a request's headers for unit tests: what request_view.header
 * looks up, set by name (case-insensitive, a second set replaces)
 */
#ifndef HOOKINBOX_TEST_HEADERS_H
#define HOOKINBOX_TEST_HEADERS_H

#include <stdlib.h>
#include <strings.h>

#include "xalloc.h"

#define TEST_MAX_HEADERS 16

typedef struct test_headers {
	const char *name[TEST_MAX_HEADERS]; /* not copied: literals or the caller's */
	char *value[TEST_MAX_HEADERS];
	size_t n;
} test_headers;

/* request_view.header, with ctx a test_headers */
static const char *
headers_lookup(const void *ctx, const char *name)
{
	const test_headers *t = ctx;

	for (size_t i = 0; i < t->n; i++) {
		if (strcasecmp(t->name[i], name) == 0)
			return t->value[i];
	}
	return NULL;
}

static void
headers_set(test_headers *t, const char *name, const char *value)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strcasecmp(t->name[i], name) == 0) {
			free(t->value[i]);
			t->value[i] = xstrdup(value);
			return;
		}
	}
	if (t->n == TEST_MAX_HEADERS)
		abort();
	t->name[t->n] = name;
	t->value[t->n++] = xstrdup(value);
}

static void
headers_clear(test_headers *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->value[i]);
	t->n = 0;
}

#endif
