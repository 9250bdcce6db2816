-- SPDX-License-Identifier: ISC
-- 004: a signed delivery is never refused for a field that only helps
-- routing, and what cannot be told apart safely is held for review.
--
-- intake_note    what of the envelope did not parse (that field is NULL),
--                e.g. "type over 255 bytes"; NULL when everything parsed.
-- signed_sha256  SHA-256 of what the signature covers when that is not the
--                raw body (Twilio's form callbacks: the URL and the sorted,
--                decoded parameters).  The replay defence compares this, so
--                reordering, repeating or re-encoding the parameters of a
--                captured callback is still a duplicate.  NULL: the body's
--                own hash (body_sha256) is what was signed.
-- review_of      set on a delivery held in state 'review': its body (or
--                signed content) is the one of intake id review_of, but its
--                unsigned type differs (Shopify sends "orders/create" and
--                "orders/paid" with byte-identical bodies; a captured body
--                replayed under another topic looks the same).  It is stored,
--                answered 2xx, and not delivered until an operator releases
--                it (sql/review.sql); 'dismissed' when the operator drops it.
alter table hookinbox.inbox add column intake_note text;
alter table hookinbox.inbox add column signed_sha256 bytea;
alter table hookinbox.inbox add column review_of bigint;

alter table hookinbox.inbox drop constraint inbox_state_check;
alter table hookinbox.inbox add constraint inbox_state_check
	check (state in ('pending', 'dispatched', 'unrouted', 'review', 'dismissed'));

-- The replay defence: one first delivery per endpoint and signed content,
-- plus at most one held delivery per other type.
drop index hookinbox.inbox_body_dedup;
create unique index inbox_body_dedup on hookinbox.inbox
	(endpoint, (coalesce(signed_sha256, body_sha256)))
	where body_dedup and review_of is null;
create unique index inbox_body_dedup_review on hookinbox.inbox
	(endpoint, (coalesce(signed_sha256, body_sha256)), (coalesce(event_type, '')))
	where body_dedup and review_of is not null;
-- the operators' list of held deliveries
create index inbox_review on hookinbox.inbox (id) where state = 'review';
