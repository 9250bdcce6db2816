-- SPDX-License-Identifier: ISC
-- 002: the worker's tables.
--
-- hookinbox.action holds one row per (route, business action): the
-- idempotency key is fixed when the row is made and sent on every attempt.
-- unique (route, idem_key) with INSERT ... ON CONFLICT DO NOTHING makes a
-- redelivered event, or with key = object-type a second provider event for
-- the same business event, collapse into the first action.
--
-- state:  pending  due at due_at (a lease moves due_at forward, so an expired
--                  lease is simply due again; no rescuer is needed)
--         done     the downstream answered 2xx or the SQL handler committed
--         parked   gave up (4xx, attempts or retry window exhausted); replay
--                  with sql/replay.sql
--         stale    order = object: a newer version of the object was or will
--                  be applied, so this one is not sent
create table hookinbox.action (
	id            bigint generated always as identity primary key,
	inbox_id      bigint not null,
	route         text not null,
	idem_key      text not null,
	object_id     text,
	event_type    text,
	event_version bigint,
	ordered       boolean not null default false,  -- route has order = object
	state         text not null default 'pending'
		check (state in ('pending', 'done', 'parked', 'stale')),
	attempts      integer not null default 0,
	max_attempts  integer not null,
	due_at        timestamptz not null default now(),
	lease_token   uuid,
	lease_until   timestamptz,
	last_status   integer,
	last_error    text,
	response_ref  text,
	created_at    timestamptz not null default now(),
	updated_at    timestamptz not null default now(),
	done_at       timestamptz,
	constraint action_key unique (route, idem_key)
) with (fillfactor = 80);

-- the claim: an index scan over due pending actions only
create index action_due on hookinbox.action (due_at) where state = 'pending';
-- purge and the inbox join
create index action_inbox on hookinbox.action (inbox_id);
-- order = object: siblings of one object on one route
create index action_object on hookinbox.action (route, object_id) where ordered;
-- operators' views of parked actions
create index action_parked on hookinbox.action (route, updated_at) where state = 'parked';

-- a hot queue table: vacuum early, without cost delay; updates stay HOT
alter table hookinbox.action set (autovacuum_vacuum_scale_factor = 0.0,
	autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0,
	autovacuum_analyze_scale_factor = 0.02);

-- order = object: the newest version applied per (route, object)
create table hookinbox.object_state (
	route           text not null,
	object_id       text not null,
	applied_version bigint not null,
	updated_at      timestamptz not null default now(),
	primary key (route, object_id)
);
