/* SPDX-License-Identifier: ISC */
/*
 * fuzz_envelope.c - the envelope extractor (json-c, form bodies, headers)
 *
 * Input format: see fuzz_request.h.  The envelope is extracted whether or
 * not the signature holds (the extractor must be safe on any bytes).
 * Checks that success means an event id of 1..255 bytes without control
 * characters, and that failure gives a reason.
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
	char *answer = NULL;
	int hs = envelope_handshake(&ep->pe, &r.view, 0, &answer, &reason);
	int rc;

	/*
	 * a handshake's answer is one JSON object, or for a provider answering
	 * text/plain (graph's validationToken) printable text; no answer otherwise
	 */
	if ((hs == 1) != (answer != NULL) || (hs < 0 && reason == NULL))
		abort();
	if (answer != NULL &&
	    strcmp(provider_handshake_type(ep->pe.provider), "application/json") == 0 &&
	    (answer[0] != '{' || strstr(answer, "}\n") == NULL))
		abort();
	for (const char *p = answer; p != NULL && *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n')
			abort();
	free(answer);
	reason = NULL;
	rc = envelope_extract(&ep->pe, &r.view, &env, &reason);
	if (rc == 0) {
		check_field(env.event_id, true);
		check_field(env.event_type, false);
		check_field(env.object_id, false);
	} else if (reason == NULL) {
		abort();
	}
	if (getenv("FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "envelope: %s: %s id=%s type=%s object=%s\n", ep->name,
			rc == 0 ? "ok" : reason, env.event_id ? env.event_id : "-",
			env.event_type ? env.event_type : "-", env.object_id ? env.object_id : "-");
	envelope_release(&env);
	fuzz_request_release(&r);
	return 0;
}
