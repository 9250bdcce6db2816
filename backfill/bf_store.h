/* SPDX-License-Identifier: ISC */
/*
 * bf_store.h - the inbox as hookinbox-backfill sees it
 *
 * Connects as the backfill's role and calls hookinbox.backfill_known()
 * and hookinbox.backfill_store() (sql/backfill_functions.sql), every value
 * a parameter.
 */
#ifndef HOOKINBOX_BF_STORE_H
#define HOOKINBOX_BF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bf_store bf_store;

/* why a call failed, for the exit code */
typedef enum bf_store_err {
	BF_STORE_UNAVAILABLE, /* the database cannot be reached: 75 */
	BF_STORE_REFUSED,     /* the role or the schema is wrong: 78 */
	BF_STORE_FAILED	      /* this statement failed: count it, go on */
} bf_store_err;

/* the delivery key without its event id */
typedef struct bf_key {
	const char *endpoint;
	const char *provider;
	const char *account;
	const char *environment;
	bool body_dedup; /* the provider does not sign its delivery id: the body is the key too */
} bf_key;

/* one row to store: what a live delivery of the event would have stored */
typedef struct bf_row {
	const char *event_id;
	const char *event_type; /* may be NULL */
	const char *object_id;	/* may be NULL */
	int64_t version;
	bool has_version;
	const char *headers_json; /* a JSON object */
	const char *body;
	size_t body_len;
	const char *note; /* may be NULL */
} bf_row;

/*
 * Connect with conninfo (user overridden by user when not NULL).  NULL
 * with a message in err and *why set.  Free with bf_store_free.
 */
bf_store *bf_store_connect(const char *conninfo, const char *user, char *err, size_t errlen,
			   bf_store_err *why);
void bf_store_free(bf_store *s);

/*
 * known[i] = whether ids[i] was stored under key: in the inbox, or in the
 * ledger of deleted rows.  0, or -1 with a message in err and *why set.
 */
int bf_store_known(bf_store *s, const bf_key *key, const char *const *ids, size_t n, bool *known,
		   char *err, size_t errlen, bf_store_err *why) __attribute__((warn_unused_result));

/*
 * Store row under key, marked backfilled, through the intake's replay
 * defence: 0 with *id and *duplicate (the key or the signed content was
 * stored already, maybe purged since: *id is that first row's), or -1 as
 * above.
 */
int bf_store_put(bf_store *s, const bf_key *key, const bf_row *row, int64_t *id, bool *duplicate,
		 char *err, size_t errlen, bf_store_err *why) __attribute__((warn_unused_result));

#endif
