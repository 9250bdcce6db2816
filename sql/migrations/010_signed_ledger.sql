-- SPDX-License-Identifier: ISC
-- 010: the ledger of what was signed, kept past the dedup horizon.
--
-- A captured request of a provider that signs no timestamp (GitHub,
-- Shopify, GitLab, Twilio, hmac; Square signs its id but no time) stays
-- valid forever, while the inbox row that made it a duplicate is deleted
-- after dedup_days.  So every deleted row (purge.sql, or by hand) leaves
-- one entry here, no payload:
--   endpoint  the endpoint it came in on (dedup is per endpoint)
--   digest    what identifies it as signed: the signed content hash
--             (coalesce(signed_sha256, body_sha256)) where the delivery id
--             is not signed (body_dedup), else hookinbox.key_digest() of
--             its delivery key; a copy held for review also leaves
--             hookinbox.held_digest() of its content and type
--   first_id  the intake id a replay is answered with (the lowest id
--             deleted with that digest)
--   first_type  that row's type, for content digests: the same content
--             under another (unsigned) type is held for review, as while
--             the row was there; NULL for the other digests
--   seen      the day the first of them was received: purge.sql deletes
--             an entry ledger_days after it (default 400)
-- accept_batch() and the backfill consult it before storing.  Rows deleted
-- before this migration are not known to it.
create table hookinbox.ledger (
	endpoint   text not null,
	digest     bytea not null,
	first_id   bigint not null,
	seen       date not null,
	first_type text,
	primary key (endpoint, digest)
);
create index ledger_seen on hookinbox.ledger (seen);
