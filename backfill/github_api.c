/* SPDX-License-Identifier: ISC */
/*
 * github_api.c - a repository webhook's deliveries, as GitHub lists them
 *
 * GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries?per_page=100, then
 * the Link header's rel="next" URL (cursor pagination), newest first: the
 * walk stops at the first delivery older than --since.  Each attempt is
 * listed (a redelivery has redelivery: true and the same guid); the guid
 * is X-GitHub-Delivery, the delivery key.  The body and headers of one
 * come from GET .../deliveries/{id}: request.payload (the event's JSON
 * text as the API returned it) and request.headers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynbuf.h"
#include "jscan.h"
#include "provider.h"
#include "rfc3339.h"
#include "source.h"
#include "xalloc.h"

static const char *const headers[] = {"Accept: application/vnd.github+json",
				      "X-GitHub-Api-Version: 2022-11-28", NULL};

static bool
repo_ok(const char *repo)
{
	const char *slash = strchr(repo, '/');

	if (slash == NULL || slash == repo || slash[1] == '\0' || strchr(slash + 1, '/') != NULL ||
	    strlen(repo) > 200)
		return false;
	for (const char *p = repo; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '/'))
			return false;
	return true;
}

/* the webhook whose deliveries are listed: --repo OWNER/NAME --hook-id N */
static const char *const params[] = {"repo", "hook-id", NULL};

extern const source_ops source_github; /* at the end */

static const char *
check(const source_query *q)
{
	const char *repo = source_query_get(q, "repo"), *hook_id = source_query_get(q, "hook-id");

	if (repo == NULL || hook_id == NULL)
		return "provider github needs --repo OWNER/NAME and --hook-id N";
	if (!repo_ok(repo))
		return "--repo must be OWNER/NAME (letters, digits, \"-_.\")";
	if (hook_id[0] == '\0' || strspn(hook_id, "0123456789") != strlen(hook_id) ||
	    strlen(hook_id) > 19)
		return "--hook-id must be a number";
	return NULL;
}

/* "/repos/OWNER/NAME/hooks/N/deliveries" and then rest; the caller frees it */
static char *
deliveries_path(const source_query *q, const char *rest)
{
	return xasprintf("/repos/%s/hooks/%s/deliveries%s", source_query_get(q, "repo"),
			 source_query_get(q, "hook-id"), rest);
}

/* a string member as a new C string, or NULL */
static char *
member_string(const jscan_value *o, const char *key)
{
	jscan_value v;
	char *s;
	size_t len;

	if (jscan_member(o, key, strlen(key), &v) != 0 || jscan_string(&v, &s, &len) != 0)
		return NULL;
	if (strlen(s) != len) {
		free(s);
		return NULL;
	}
	return s;
}

/* whether page already holds guid (its redeliveries are listed too) */
static bf_item *
listed(bf_page *page, const char *guid)
{
	for (size_t i = 0; i < page->n; i++)
		if (strcmp(page->items[i].id, guid) == 0)
			return &page->items[i];
	return NULL;
}

/*
 * The attempt's status_code is 2xx: the responder answers 2xx only after
 * the commit, so the event was stored once (a purge may have removed it
 * since, and storing it again would deliver it twice).
 */
static bool
answered_2xx(const jscan_value *el)
{
	jscan_value v;

	return jscan_member(el, "status_code", 11, &v) == 0 && v.type == JSCAN_NUMBER &&
	       v.len == 3 && v.p[0] == '2';
}

/* set header name of it to value (taken), replacing an earlier value */
static void
set_header(bf_item *it, const char *name, char *value)
{
	for (size_t i = 0; i < it->n_headers; i++) {
		if (strcmp(it->headers[i].name, name) == 0) {
			free(it->headers[i].value);
			it->headers[i].value = value;
			return;
		}
	}
	it->headers =
		xgrow(it->headers, it->n_headers + 1, &it->headers_alloc, sizeof(*it->headers));
	it->headers[it->n_headers].name = xstrdup(name);
	it->headers[it->n_headers].value = value;
	it->n_headers++;
}

static int
next_page(api_http *h, const source_query *q, char **cursor, bf_page *page, bool *done,
	  source_error *e)
{
	api_response r;
	jscan_value root, el;
	const char *pos = NULL;
	char *path = NULL;
	bool older = false;
	int rc = -1, got;

	*done = false;
	if (*cursor == NULL) {
		path = deliveries_path(q, "?per_page=100");
		got = api_http_get(h, path, 0, &r, e->msg, sizeof(e->msg));
	} else {
		got = api_http_get(h, *cursor, 1, &r, e->msg, sizeof(e->msg));
	}
	if (got != 0) {
		e->status = 0;
		goto out;
	}
	if (source_answer(&source_github, &r, "listing github webhook deliveries", &root, e) != 0)
		goto out;
	if (root.type != JSCAN_ARRAY) {
		snprintf(e->msg, sizeof(e->msg),
			 "listing github webhook deliveries: the answer is not a list");
		goto out;
	}
	while (jscan_element(&root, &pos, &el) == 0) {
		jscan_value num;
		char *guid = NULL, *when = NULL;
		int64_t us;

		if (el.type == JSCAN_OBJECT) {
			guid = member_string(&el, "guid");
			when = member_string(&el, "delivered_at");
		}
		if (guid == NULL || when == NULL || !source_id_ok(guid) ||
		    rfc3339_us(when, &us) != 0 || jscan_member(&el, "id", 2, &num) != 0 ||
		    num.type != JSCAN_NUMBER || !jscan_is_integer(&num) || num.len > 19 ||
		    num.p[0] == '-') {
			snprintf(e->msg, sizeof(e->msg),
				 "listing github webhook deliveries: a delivery without a usable "
				 "id, guid or delivered_at");
			free(guid);
			free(when);
			goto out;
		}
		free(when);
		if (us / 1000000 < q->since)
			older = true; /* newest first: the rest are older still */
		if (us / 1000000 < q->since || us / 1000000 > q->until) {
			free(guid);
			continue;
		}
		bf_item *it = listed(page, guid);
		if (it != NULL) { /* an older attempt of a guid listed already */
			it->answered = it->answered || answered_2xx(&el);
			free(guid);
			continue;
		}
		it = bf_page_add(page);
		char *event = member_string(&el, "event");
		it->id = guid;
		it->answered = answered_2xx(&el);
		it->ref = xstrndup(num.p, num.len);
		/* the listing's event, should the delivery's headers lack it */
		if (event != NULL)
			set_header(it, "X-GitHub-Event", event);
	}
	free(*cursor);
	*cursor = NULL;
	*done = older || r.next == NULL;
	if (!*done)
		*cursor = xstrdup(r.next);
	rc = 0;
out:
	api_response_release(&r);
	free(path);
	return rc;
}

/* the request header name (as GitHub spells it, or in lower case) from headers */
static char *
header_value(const jscan_value *hdrs, const char *name)
{
	char lower[64];
	char *v = member_string(hdrs, name);
	size_t n = strlen(name);

	if (v != NULL || n >= sizeof(lower))
		return v;
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	return member_string(hdrs, lower);
}

static int
fetch(api_http *h, const source_query *q, bf_item *it, source_error *e)
{
	const char *const *keep = source_kept_headers(&source_github);
	api_response r;
	jscan_value root, req, hdrs, payload;
	char *rest = xasprintf("/%s", it->ref);
	char *path = deliveries_path(q, rest);
	int rc = -1;

	if (api_http_get(h, path, 0, &r, e->msg, sizeof(e->msg)) != 0) {
		e->status = 0;
		goto out;
	}
	if (source_answer(&source_github, &r, "reading a github webhook delivery", &root, e) != 0)
		goto out;
	if (jscan_member(&root, "request", 7, &req) != 0 ||
	    jscan_member(&req, "payload", 7, &payload) != 0 || payload.type != JSCAN_OBJECT) {
		snprintf(e->msg, sizeof(e->msg),
			 "reading github webhook delivery %s: it has no request payload", it->id);
		goto out;
	}
	it->body = xstrndup(payload.p, payload.len);
	it->body_len = payload.len;
	/*
	 * The headers the responder keeps for GitHub, as GitHub sent them;
	 * the delivery key is the guid it was listed under, and the body is
	 * JSON whatever content type the hook posts.
	 */
	if (jscan_member(&req, "headers", 7, &hdrs) == 0 && hdrs.type == JSCAN_OBJECT) {
		for (size_t i = 0; keep[i] != NULL; i++) {
			char *v;

			if (strcmp(keep[i], "X-GitHub-Delivery") == 0)
				continue;
			if ((v = header_value(&hdrs, keep[i])) != NULL)
				set_header(it, keep[i], v);
		}
		char *ua = header_value(&hdrs, "User-Agent");
		if (ua != NULL)
			set_header(it, "User-Agent", ua);
	}
	set_header(it, "X-GitHub-Delivery", xstrdup(it->id));
	set_header(it, "Content-Type", xstrdup("application/json"));
	rc = 0;
out:
	api_response_release(&r);
	free(path);
	free(rest);
	return rc;
}

const source_ops source_github = {
	.provider = "github",
	.default_base = "https://api.github.com",
	.headers = headers,
	.params = params,
	.check = check,
	.next_page = next_page,
	.fetch = fetch,
};
