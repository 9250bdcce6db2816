/* SPDX-License-Identifier: ISC */
/*
 * envelope.c - the envelope fields of a verified delivery: the dispatcher
 *
 * Each provider reads its own fields (providers/<name>.c, with the helpers
 * of fields.h).  Only the event id (the delivery key) can refuse a signed
 * event, with a reason that says what is wrong with it.  A type, object id
 * or version that does not parse is stored NULL, and env->note says which
 * and why.
 */
#include "envelope.h"

#include "batch.h"
#include "fields.h"
#include "scheme.h"

#include <stdlib.h>
#include <string.h>

int
envelope_extract(const provider_endpoint *ep, const request_view *req, envelope *env,
		 const char **reason)
{
	const provider_ops *ops;

	memset(env, 0, sizeof(*env));
	*reason = "bad envelope";
	if ((unsigned)ep->provider >= PROVIDER__COUNT) {
		*reason = "unknown provider";
		return -1;
	}
	ops = provider_get(ep->provider);
	if (ops->batch != NULL) {
		/* several events: envelope_split reads them */
		*reason = "a batch of events";
		return -1;
	}
	if (ops->extract != NULL)
		return ops->extract(ep, req, env, reason);
	if (ops->fields == NULL && ops->body_mac != NULL)
		return scheme_extract_body_mac(ops->body_mac, req, env, reason);
	if (ops->stamp_mac != NULL && ops->stamp_mac->id_header != NULL)
		return env_extract_header_fields(req, ops->stamp_mac->id_header, ops->fields, env,
						 reason);
	return env_extract_fields(req, ops->fields, env, reason);
}

int
envelope_handshake(const provider_endpoint *ep, const request_view *req, int secret_index,
		   handshake_answer *ans, const char **reason)
{
	const provider_ops *ops;

	memset(ans, 0, sizeof(*ans));
	*reason = "bad handshake";
	if ((unsigned)ep->provider >= PROVIDER__COUNT || secret_index < 0)
		return 0;
	ops = provider_get(ep->provider);
	if (ops->handshake == NULL)
		return 0;
	return ops->handshake(ep, req, (size_t)secret_index, ans, reason);
}

int
envelope_greeting(const provider_endpoint *ep, const request_view *req, const char *method,
		  handshake_answer *ans, const char **reason)
{
	const provider_ops *ops;

	memset(ans, 0, sizeof(*ans));
	*reason = "bad handshake";
	if ((unsigned)ep->provider >= PROVIDER__COUNT)
		return 0;
	ops = provider_get(ep->provider);
	if (ops->greeting == NULL)
		return 0;
	return ops->greeting(ep, req, method, ans, reason);
}

void
handshake_answer_release(handshake_answer *a)
{
	free(a->body);
	free(a->echo_value);
	memset(a, 0, sizeof(*a));
}

const char *
envelope_or_null(const char *field)
{
	return field[0] != '\0' ? field : NULL;
}

void
envelope_release(envelope *env)
{
	free(env->note);
	memset(env, 0, sizeof(*env));
}

bool
envelope_batched(const provider_endpoint *ep)
{
	return (unsigned)ep->provider < PROVIDER__COUNT &&
	       provider_get(ep->provider)->batch != NULL;
}

int
envelope_split(const provider_endpoint *ep, const request_view *req, envelope_batch *b,
	       const char **reason)
{
	memset(b, 0, sizeof(*b));
	*reason = "not a batch";
	if (!envelope_batched(ep))
		return -1;
	return scheme_split_batch(provider_get(ep->provider)->batch, req, b, reason);
}

const char *
envelope_batch_answer(const provider_endpoint *ep)
{
	return envelope_batched(ep) ? provider_get(ep->provider)->batch->answer : NULL;
}

void
envelope_batch_release(envelope_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		envelope_release(&b->ev[i].env);
	free(b->ev);
	memset(b, 0, sizeof(*b));
}
