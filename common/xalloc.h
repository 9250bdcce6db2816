/* SPDX-License-Identifier: ISC */
/*
 * xalloc.h - allocation that cannot fail
 *
 * Out of memory aborts the process (as PostgreSQL's pg_malloc and
 * OpenSMTPD's xmalloc do): callers never carry untested NULL branches.
 */
#ifndef HOOKINBOX_XALLOC_H
#define HOOKINBOX_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new string; the caller frees it */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
