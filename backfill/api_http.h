/* SPDX-License-Identifier: ISC */
/*
 * api_http.h - GET requests to a provider's API with the operator's credential
 *
 * The credential travels in the Authorization header only (never in a URL
 * or a message), to the API base URL only: a pagination link elsewhere is
 * refused.  https only, except for a loopback host (tests).  No redirects,
 * peer verification on, timeouts and a cap on the response size.
 */
#ifndef HOOKINBOX_API_HTTP_H
#define HOOKINBOX_API_HTTP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct api_http api_http;

typedef struct api_response {
	long status; /* HTTP status; 0 when no answer came */
	char *body;  /* NUL-terminated; owned by the response */
	size_t len;
	char *next;	   /* the Link header's rel="next" URL, NULL when none */
	bool rate_limited; /* X-RateLimit-Remaining: 0 or Retry-After came with it */
} api_response;

/*
 * A client for the API at base ("https://api.stripe.com", no trailing
 * slash) sending "Authorization: Bearer <token>" and the extra headers
 * (NULL-terminated, e.g. "Accept: ...").  NULL with a message in err when
 * base is not an https URL (or http on a loopback host).  The token is
 * copied; the caller wipes its own copy.  Free with api_http_free.
 */
api_http *api_http_new(const char *base, const unsigned char *token, size_t token_len,
		       const char *const *headers, char *err, size_t errlen);
void api_http_free(api_http *h);

/* the base URL given to api_http_new */
const char *api_http_base(const api_http *h);

/*
 * GET base + path_and_query (or, when absolute is set, that URL, which
 * must start with the base: a Link header's).  0 with *r filled whatever
 * the status; -1 with a message in err when no usable answer came
 * (network, timeout, over the size cap, a URL outside the base).  The
 * caller releases *r with api_response_release in every case.
 */
int api_http_get(api_http *h, const char *path_and_query, int absolute, api_response *r, char *err,
		 size_t errlen) __attribute__((warn_unused_result));
void api_response_release(api_response *r);

#endif
