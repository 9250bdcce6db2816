/* SPDX-License-Identifier: ISC */
/*
 * envelope.h - the envelope fields of a verified delivery
 *
 * Reads the event id, type, object id and version/creation time from the
 * verified headers and body (jscan.h: as JSON.parse reads them), per
 * provider.  The body is parsed, never re-serialised: what is stored is the
 * exact bytes received.
 */
#ifndef HOOKINBOX_ENVELOPE_H
#define HOOKINBOX_ENVELOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "endpoint.h"
#include "verify.h"

/* an event id, type or object id is at most this many bytes */
#define ENVELOPE_FIELD_MAX 255

/*
 * One of those fields, NUL-terminated, "" when absent (a field is never
 * empty).  Held in the envelope itself: reading the fields of a delivery
 * allocates nothing, and an envelope can be copied (a batch's array grows)
 * without leaving a pointer behind.
 */
typedef char envelope_field[ENVELOPE_FIELD_MAX + 1];

typedef struct envelope {
	envelope_field event_id;   /* never "" after success */
	envelope_field event_type; /* "" when the provider sends none */
	envelope_field object_id;  /* "" when the provider sends none */
	int64_t version;	   /* provider version or creation time (for ordering) */
	bool has_version;
	/*
	 * What did not parse, e.g. "type: over 255 bytes; version: not an
	 * integer or RFC 3339 time" (that field is ""); NULL when all did.
	 * Built from static texts only, so it is safe to log.
	 */
	char *note;
} envelope;

/* field (an envelope_field) as the store and the log take it: NULL when absent */
const char *envelope_or_null(const char *field);

/*
 * Fill *env from the request.  Returns 0 on success; -1 with a static
 * reason ("no event id", "event id over 255 bytes", ...) for a 400: only
 * the delivery key (the event id) can refuse a signed event.  A type,
 * object id or version that does not parse is left absent and described in
 * env->note.  The caller releases *env with envelope_release in every case.
 * A provider that sends batches is refused here ("a batch of events"):
 * envelope_split reads its events.
 */
int envelope_extract(const provider_endpoint *ep, const request_view *req, envelope *env,
		     const char **reason);
void envelope_release(envelope *env);

/*
 * A handshake's answer, 200 and nothing stored: body (NULL: an empty body)
 * of content_type (static; NULL: application/json), and the request header
 * echo_header (static), when set, answered back with echo_value (Asana's
 * X-Hook-Secret).  The caller releases it with handshake_answer_release.
 */
typedef struct handshake_answer {
	char *body;
	const char *content_type;
	const char *echo_header;
	char *echo_value;
} handshake_answer;

void handshake_answer_release(handshake_answer *a);

/*
 * Is this verified request a handshake (the provider checking the
 * endpoint: Slack's url_verification, Discord's PING, Zoom's
 * endpoint.url_validation)?  1 with *ans, and nothing is to be stored; 0
 * for an event; -1 with a static *reason for a handshake that cannot be
 * answered (400).  secret_index is the secret that verified the request.
 */
int envelope_handshake(const provider_endpoint *ep, const request_view *req, int secret_index,
		       handshake_answer *ans, const char **reason)
	__attribute__((warn_unused_result));

/*
 * Is this request, before any body is read or any signature checked, the
 * provider's check of the endpoint (a GET or HEAD, or Asana's X-Hook-Secret
 * POST)?  method is the HTTP method.  1 with *ans: answered, nothing
 * stored, whatever it carries; 0: not one (a method other than POST is then
 * refused); -1 with a static *reason (400).  req has no body.
 */
int envelope_greeting(const provider_endpoint *ep, const request_view *req, const char *method,
		      handshake_answer *ans, const char **reason)
	__attribute__((warn_unused_result));

/*
 * Batches: a provider that sends several events in one request (Adyen,
 * SendGrid, HubSpot; provider_ops.batch).  Each event is stored as its own
 * delivery under its own delivery key, with its own bytes: the slice of the
 * verified body that holds it, exactly as received.
 */
typedef struct batch_event {
	envelope env;
	const unsigned char *body; /* points into the request body */
	size_t body_len;
} batch_event;

typedef struct envelope_batch {
	batch_event *ev;
	size_t n, cap;
} envelope_batch;

/*
 * more events in one request are refused (400): no provider batches that
 * many (and their envelopes take about 8 MB)
 */
#define ENVELOPE_BATCH_MAX 10000

/* does ep's provider send batches? */
bool envelope_batched(const provider_endpoint *ep);
/*
 * Split the verified request into its events (*b zeroed first).  0 with at
 * least one event; -1 with a static *reason for a 400 when the body is not
 * a batch or any event cannot be stored (no event id, ...): the whole
 * batch is refused and nothing is stored, so the provider retries it or
 * shows the error.  The caller releases *b with envelope_batch_release in
 * every case.
 */
int envelope_split(const provider_endpoint *ep, const request_view *req, envelope_batch *b,
		   const char **reason) __attribute__((warn_unused_result));
void envelope_batch_release(envelope_batch *b);
/*
 * The body the provider requires with a 2xx ("[accepted]" for Adyen), or
 * NULL when it takes any body: then the intake ids are answered as JSON.
 */
const char *envelope_batch_answer(const provider_endpoint *ep);

#endif
