/* SPDX-License-Identifier: ISC */
/*
 * verify.c - provider signature verification over the exact raw body: the
 * dispatcher
 *
 * Each scheme (providers/<name>.c) follows its provider's official SDK
 * (what is signed, how the header is parsed, which entries count); where
 * the SDK is lax we are stricter: timestamps are checked in both
 * directions, header values and entry counts are bounded, and every
 * comparison is constant-time (scheme.h).
 */
#include "verify.h"

#include "scheme.h"

int
verify_http_status(verify_status st)
{
	return st == VERIFY_MALFORMED ? 400 : st == VERIFY_UNAVAILABLE ? 503 : 401;
}

int
verify_request(const provider_endpoint *ep, const request_view *req, verify_result *res)
{
	const provider_ops *ops;

	if (ep->secrets == NULL || secret_count(ep->secrets) == 0)
		return scheme_fail(res, VERIFY_MISMATCH, "endpoint has no secret");
	if ((unsigned)ep->provider >= PROVIDER__COUNT)
		return scheme_fail(res, VERIFY_MISMATCH, "unknown provider");
	ops = provider_get(ep->provider);
	if (ops->verify != NULL)
		return ops->verify(ep, req, res);
	if (ops->body_mac != NULL)
		return scheme_verify_body_mac(ops->body_mac, ep, req, res);
	if (ops->stamp_mac != NULL)
		return scheme_verify_stamp_mac(ops->stamp_mac, ep, req, res);
	if (ops->v0 != NULL)
		return scheme_verify_v0(ops->v0, ep, req, res);
	if (ops->ed25519 != NULL)
		return scheme_verify_ed25519(ops->ed25519, ep, req, res);
	if (ops->token != NULL)
		return scheme_verify_token(ops->token, ep, req, res);
	return scheme_verify_timestamped(ops->timestamped, ep, req, res);
}
