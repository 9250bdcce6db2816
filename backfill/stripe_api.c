/* SPDX-License-Identifier: ISC */
/*
 * stripe_api.c - Stripe's events that did not reach every webhook endpoint
 *
 * GET /v1/events?delivery_success=false&created[gte]=S&created[lte]=U
 * &limit=100, then again with starting_after=<the last id> while has_more
 * (Stripe's list pagination).  delivery_success=false lists the events
 * whose delivery to some endpoint is still failing or was given up; Stripe
 * keeps events for 30 days.  Each element of data is the event object a
 * webhook delivers: its text, as the API returned it, is the body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "source.h"
#include "xalloc.h"

static const char *const headers[] = {"Accept: application/json", NULL};

extern const source_ops source_stripe; /* at the end */

static int
next_page(api_http *h, const source_query *q, char **cursor, bf_page *page, bool *done,
	  source_error *e)
{
	api_response r;
	jscan_value root, data, more, el;
	const char *pos = NULL;
	char *path;
	int rc = -1;

	*done = false;
	if (*cursor != NULL)
		path = xasprintf("/v1/events?delivery_success=false&created%%5Bgte%%5D=%lld"
				 "&created%%5Blte%%5D=%lld&limit=100&starting_after=%s",
				 (long long)q->since, (long long)q->until, *cursor);
	else
		path = xasprintf("/v1/events?delivery_success=false&created%%5Bgte%%5D=%lld"
				 "&created%%5Blte%%5D=%lld&limit=100",
				 (long long)q->since, (long long)q->until);
	if (api_http_get(h, path, 0, &r, e->msg, sizeof(e->msg)) != 0) {
		e->status = 0;
		goto out;
	}
	if (source_answer(&source_stripe, &r, "listing stripe events", &root, e) != 0)
		goto out;
	if (jscan_member(&root, "data", 4, &data) != 0 || data.type != JSCAN_ARRAY) {
		snprintf(e->msg, sizeof(e->msg),
			 "listing stripe events: the answer has no data list");
		goto out;
	}
	while (jscan_element(&data, &pos, &el) == 0) {
		jscan_value id;
		bf_item *it;
		size_t len;

		it = bf_page_add(page);
		if (el.type != JSCAN_OBJECT || jscan_member(&el, "id", 2, &id) != 0 ||
		    jscan_string(&id, &it->id, &len) != 0 || strlen(it->id) != len ||
		    !source_id_ok(it->id)) {
			snprintf(e->msg, sizeof(e->msg),
				 "listing stripe events: an event without a usable id");
			goto out;
		}
		it->body = xstrndup(el.p, el.len);
		it->body_len = el.len;
	}
	*done = jscan_member(&root, "has_more", 8, &more) != 0 || more.type != JSCAN_TRUE ||
		page->n == 0;
	free(*cursor);
	*cursor = *done ? NULL : xstrdup(page->items[page->n - 1].id);
	rc = 0;
out:
	api_response_release(&r);
	free(path);
	return rc;
}

const source_ops source_stripe = {
	.provider = "stripe",
	.default_base = "https://api.stripe.com",
	.headers = headers,
	.next_page = next_page,
	.fetch = NULL,
};
