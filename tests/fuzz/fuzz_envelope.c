/* SPDX-License-Identifier: ISC */
/*
 * fuzz_envelope.c - the envelope extractor (json-c, form bodies, headers)
 * and the splitting of batches (Adyen, SendGrid, HubSpot)
 *
 * Input format: see fuzz_request.h.  The envelope is extracted whether or
 * not the signature holds (the extractor must be safe on any bytes).
 * Checks that success means an event id of 1..255 bytes without control
 * characters, and that failure gives a reason; a batch's events likewise,
 * each a slice of the body.
 */
#include "fuzz_request.h"

#include "envelope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_field(const char *s, bool required)
{
	size_t n;

	if (s == NULL) {
		if (required)
			abort();
		return;
	}
	n = strlen(s);
	if (n == 0 || n > 255)
		abort();
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_request r;
	const endpoint_conf *ep = fuzz_request_parse(data, size, &r);
	envelope env;
	const char *reason = NULL;
	handshake_answer ans;
	int hs = envelope_handshake(&ep->pe, &r.view, 0, &ans, &reason);
	const char *answer = ans.body;
	int rc;

	/*
	 * a JSON handshake's answer is one JSON object; another type's is
	 * text; no answer unless answered (Xero's is empty)
	 */
	if ((hs != 1 && (answer != NULL || ans.echo_header != NULL)) ||
	    (hs < 0 && reason == NULL) ||
	    (answer != NULL && ans.content_type == NULL &&
	     (answer[0] != '{' || strstr(answer, "}\n") == NULL)))
		abort();
	handshake_answer_release(&ans);
	/* the checks before the body: an answer only when answered, an echo with its value */
	for (size_t m = 0; m < 3; m++) {
		static const char *const methods[] = {"GET", "HEAD", "POST"};
		int g = envelope_greeting(&ep->pe, &r.view, methods[m], &ans, &reason);

		if ((g != 1 && (ans.body != NULL || ans.echo_header != NULL)) ||
		    (g < 0 && reason == NULL) ||
		    ((ans.echo_header != NULL) != (ans.echo_value != NULL)))
			abort();
		handshake_answer_release(&ans);
	}
	reason = NULL;
	rc = envelope_extract(&ep->pe, &r.view, &env, &reason);
	if (rc == 0) {
		check_field(envelope_or_null(env.event_id), true);
		check_field(envelope_or_null(env.event_type), false);
		check_field(envelope_or_null(env.object_id), false);
	} else if (reason == NULL) {
		abort();
	}
	if (getenv("FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "envelope: %s: %s id=%s type=%s object=%s\n", ep->name,
			rc == 0 ? "ok" : reason, env.event_id, env.event_type, env.object_id);
	envelope_release(&env);
	/* a batch: every event of a split is one that could be stored, its bytes inside the body */
	if (envelope_batched(&ep->pe)) {
		envelope_batch b;

		reason = NULL;
		rc = envelope_split(&ep->pe, &r.view, &b, &reason);
		if (rc == 0 && b.n == 0)
			abort();
		if (rc != 0 && reason == NULL)
			abort();
		for (size_t i = 0; rc == 0 && i < b.n; i++) {
			const batch_event *e = &b.ev[i];

			check_field(envelope_or_null(e->env.event_id), true);
			check_field(envelope_or_null(e->env.event_type), false);
			check_field(envelope_or_null(e->env.object_id), false);
			if (e->body < r.view.body || e->body_len == 0 ||
			    e->body_len > r.view.body_len ||
			    (size_t)(e->body - r.view.body) > r.view.body_len - e->body_len)
				abort();
		}
		if (getenv("FUZZ_VERBOSE") != NULL)
			fprintf(stderr, "split: %s: %s, %zu events, first id=%s\n", ep->name,
				rc == 0 ? "ok" : reason, b.n, b.n > 0 ? b.ev[0].env.event_id : "-");
		envelope_batch_release(&b);
	}
	fuzz_request_release(&r);
	return 0;
}
