-- SPDX-License-Identifier: ISC
-- 009: the delivery key belongs to the first delivery of each endpoint.
--
-- inbox_delivery_key becomes a unique index
--   (provider, account, environment, event_id, endpoint) where review_of is null
--   - a copy held for review (review_of set: signed content seen before,
--     under an unsigned id and type of the request's choosing) no longer
--     owns its delivery id: a captured body replayed under the next id
--     and another type cannot make the genuine delivery of that id a
--     "duplicate";
--   - the endpoint is part of the key: Stripe sends one evt_ to every
--     endpoint of an account, and each endpoint's routes get it (a route
--     of both endpoints makes one action, its idempotency key being the
--     event's).
-- Relaxing a unique key: no existing row can violate it.
alter table hookinbox.inbox drop constraint inbox_delivery_key;
create unique index inbox_delivery_key on hookinbox.inbox
	(provider, account, environment, event_id, endpoint) where review_of is null;
