-- SPDX-License-Identifier: ISC
-- 001: the inbox, where the responder stores each accepted delivery.
--
-- The delivery key (provider, account, environment, event_id) is unique:
-- a redelivery finds the first row.  Providers that do not sign their
-- delivery id (GitHub, Shopify) also dedup on the body's hash per endpoint,
-- so a replayed body under a fresh id is a duplicate, not a new event.
-- body is set to NULL by the payload retention purge; the row (and so the
-- dedup key) stays until the longer dedup horizon.
create table hookinbox.inbox (
	id            bigint generated always as identity primary key,
	endpoint      text not null,
	provider      text not null,
	account       text not null,
	environment   text not null,
	event_id      text not null,
	event_type    text,
	object_id     text,
	event_version bigint,
	body_sha256   bytea not null,
	body_dedup    boolean not null default false,
	headers       jsonb not null default '{}',
	body          bytea,
	received_at   timestamptz not null default now(),
	state         text not null default 'pending'
		check (state in ('pending', 'dispatched', 'unrouted')),
	dispatched_at timestamptz,
	constraint inbox_delivery_key unique (provider, account, environment, event_id)
) with (fillfactor = 90);

-- the worker's fan-out claims pending rows in id order: keep that an index scan
create index inbox_pending on hookinbox.inbox (id) where state = 'pending';
create unique index inbox_body_dedup on hookinbox.inbox (endpoint, body_sha256) where body_dedup;
create index inbox_received on hookinbox.inbox (received_at);

-- a hot queue table: vacuum it early and without cost delay
alter table hookinbox.inbox set (autovacuum_vacuum_scale_factor = 0.0,
	autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0,
	autovacuum_analyze_scale_factor = 0.02);

-- rejected requests, counted per endpoint, reason and hour; bounded because
-- the responder only counts configured endpoints (others under '(unknown)')
-- and the purge drops old hours.  No body, header or address is kept.
create table hookinbox.rejection (
	hour     timestamptz not null,
	endpoint text not null,
	reason   text not null,
	count    bigint not null default 0,
	primary key (hour, endpoint, reason)
);
