/* SPDX-License-Identifier: ISC */
/*
 * fuzz_verify.c - every provider's signature headers through verify_request
 *
 * Input format: see fuzz_request.h.  Checks, besides what ASan/UBSan see,
 * that the result is self-consistent: 0 only with VERIFY_OK and a secret
 * index in range, -1 only with a reason and a 400/401 status (503 only for
 * a signing certificate not cached).
 */
#include "fuzz_request.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_request r;
	const endpoint_conf *ep = fuzz_request_parse(data, size, &r);
	verify_result res;
	int rc = verify_request(&ep->pe, &r.view, &res);

	if (rc == 0) {
		if (res.status != VERIFY_OK || res.secret_index < 0 ||
		    (size_t)res.secret_index >= secret_count(ep->pe.secrets))
			abort();
	} else {
		int st = verify_http_status(res.status);

		if (rc != -1 || res.status == VERIFY_OK || res.reason == NULL ||
		    (st != 400 && st != 401 && !(st == 503 && res.status == VERIFY_UNAVAILABLE)))
			abort();
	}
	if (getenv("FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "verify: %s: %s\n", ep->name, res.reason);
	fuzz_request_release(&r);
	return 0;
}
