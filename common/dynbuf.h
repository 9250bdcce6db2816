/* SPDX-License-Identifier: ISC */
/*
 * dynbuf.h - growable buffers with a hard cap (curl's dynbuf, git's strbuf)
 *
 * A dynbuf holds bytes that arrive in pieces: a response body, a file, a
 * literal being built.  It never grows past the cap its owner gives it;
 * an append that would pass the cap fails and changes nothing.  The bytes
 * are always followed by a NUL, so text can be read as a C string.
 *
 * xgrow is the same growth for arrays of any element (git's ALLOC_GROW).
 *
 * Out of memory aborts, as xalloc.h does.
 */
#ifndef HOOKINBOX_DYNBUF_H
#define HOOKINBOX_DYNBUF_H

#include <stddef.h>

typedef struct dynbuf {
	char *buf;    /* NULL until the first append, then NUL-terminated */
	size_t len;   /* bytes held, never above max */
	size_t alloc; /* bytes allocated (len + 1 at least) */
	size_t max;   /* the cap */
} dynbuf;

/* empty, holding at most max bytes; nothing allocated yet */
void dynbuf_init(dynbuf *b, size_t max);
/* frees the bytes; b is empty again with the same cap */
void dynbuf_release(dynbuf *b);
/* no bytes, the allocation kept for reuse */
void dynbuf_reset(dynbuf *b);

/* appends data[0..n); -1 (b unchanged) when the result would pass the cap */
int dynbuf_add(dynbuf *b, const void *data, size_t n) __attribute__((warn_unused_result));
int dynbuf_addstr(dynbuf *b, const char *s) __attribute__((warn_unused_result));
/*
 * n more bytes at the end for the caller to fill; NULL (b unchanged) when
 * the result would pass the cap.  The pointer is valid until the next change.
 */
void *dynbuf_extend(dynbuf *b, size_t n) __attribute__((warn_unused_result));
/*
 * For a buffer whose size its caller already bounds (max is then a backstop
 * against a bug): passing the cap aborts, as running out of memory does.
 */
void dynbuf_xadd(dynbuf *b, const void *data, size_t n);

/*
 * the bytes, NUL-terminated, now the caller's to free (a valid empty
 * string when there are none), their length in *len if len is not NULL;
 * b is empty again with the same cap
 */
char *dynbuf_detach(dynbuf *b, size_t *len);

/*
 * v, an array of *alloc elements of elem bytes, reallocated if need be to
 * hold at least need (doubling, so n appends cost O(n)); returns the array
 * and updates *alloc.  A size that does not fit size_t aborts.
 */
void *xgrow(void *v, size_t need, size_t *alloc, size_t elem) __attribute__((warn_unused_result));

#endif
