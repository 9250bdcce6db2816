/* SPDX-License-Identifier: ISC */
/*
 * store.h - the responder's one database call: hookinbox.accept_batch()
 *
 * One connection per responder process, made lazily and re-made after a
 * failure, so a restarted PostgreSQL is picked up by the next request.
 * accept_batch() inserts each delivery or returns the first delivery's id;
 * it is one statement, its own transaction, so the delivery has committed
 * by the time store_accept returns 0.
 *
 * Group commit (store_new_group): request threads queue their deliveries,
 * and the one that finds no batch in flight (the leader) sends whatever has
 * queued up (at most max_batch deliveries, 32 MB of bodies) as one
 * accept_batch() call, with one array per column, and wakes each other
 * thread only after that call returned its rows: one WAL flush for many
 * deliveries, one hand-off at most per delivery, and still no reply
 * before the delivery's own row is durable.
 */
#ifndef HOOKINBOX_STORE_H
#define HOOKINBOX_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store store;

typedef struct store_delivery {
	const char *endpoint;
	const char *provider;
	const char *account;
	const char *environment;
	const char *event_id;
	const char *event_type; /* may be NULL */
	const char *object_id;	/* may be NULL */
	const int64_t *version; /* may be NULL */
	const char *headers_json;
	const unsigned char *body;
	size_t body_len;
	bool body_dedup; /* the provider does not sign its delivery id */
	/* SHA-256 of what was signed when that is not the body (32 bytes), or NULL */
	const unsigned char *signed_sha256;
	const char *note; /* what of the envelope did not parse, or NULL */
} store_delivery;

/* what accept_batch() answered for one delivery */
typedef struct store_outcome {
	int64_t id;	/* the delivery's intake id, or the first delivery's */
	bool duplicate; /* id is the first delivery's */
	bool held;	/* stored in state 'review': same signed content, another type */
} store_outcome;

/*
 * How the responder's session is set up, whatever the server, database or
 * role say: synchronous_commit = on (a delivery is answered only once its
 * commit is flushed), and lock and statement timeouts, so that a held lock
 * or a slow statement is answered 503 long before the provider gives up.
 */
typedef struct store_options {
	const char *conninfo;	  /* copied */
	int lock_timeout_ms;	  /* > 0 */
	int statement_timeout_ms; /* > 0 */
	/*
	 * The responder's own bound, > 0: a delivery is answered (stored, or
	 * -1 from store_accept) at most this long after store_accept is
	 * called, whatever the server does: waiting for the connection lock,
	 * the batch ahead, connecting and the statement included.  A server
	 * that stops answering (frozen, a partition) cannot enforce its own
	 * statement_timeout.  After the deadline the connection is dropped;
	 * the statement may still commit when the server wakes, which a retry
	 * finds as a duplicate.
	 */
	int wait_ms;
} store_options;

/* nothing is connected until the first call */
store *store_new(const store_options *opt);
/* the same, batching up to max_batch deliveries */
store *store_new_group(const store_options *opt, int max_batch);
void store_free(store *s);

/*
 * Insert or find the delivery.  0: committed, *out set.
 * -1: not stored (database unreachable or failing); the message is logged
 * here (never with parameters), the caller answers 503.
 */
int store_accept(store *s, const store_delivery *d, store_outcome *out)
	__attribute__((warn_unused_result));

/*
 * The events of one provider batch (Adyen, SendGrid, HubSpot): all n in
 * one accept_batch() call, so in one transaction: every row is committed
 * or none is.  0: committed, out[0..n) set.  -1: nothing stored (logged
 * here), the caller answers 503 and the provider retries the whole batch.
 * Group commit is passed by: the call takes the connection itself.
 */
int store_accept_many(store *s, const store_delivery *d, size_t n, store_outcome *out)
	__attribute__((warn_unused_result));

/*
 * Add n to the rejection counter of (endpoint, reason); best effort.
 * All functions may be called from several threads at once.
 */
/* 0 when written, -1 when not (the caller keeps the counts for later) */
int store_count_rejection(store *s, const char *endpoint, const char *reason, long n);

/*
 * Add requests to the duration histogram of (endpoint, provider, outcome,
 * status): n_buckets counts, not cumulative, the last for +Inf, and their
 * sum in seconds.  0 when written, -1 when not (the caller keeps them).
 */
int store_count_requests(store *s, const char *endpoint, const char *provider, const char *outcome,
			 int status, const long *buckets, size_t n_buckets, double sum);

#endif
