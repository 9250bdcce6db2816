-- SPDX-License-Identifier: ISC
-- 005: the action lifecycle an operator works with.
--
-- state (hookinbox.action), as of this migration:
--   pending    due at due_at: waiting for its first call, in flight under a
--              lease, or retrying after a failed attempt
--   done       the downstream answered 2xx or the SQL handler committed
--   stale      order = object: a newer version was or will be applied; not sent
--   parked     gave up (4xx, a handler's permanent error, attempts or retry
--              window exhausted): kept, never purged, until an operator
--              replays (sql/replay.sql), dismisses or resolves it
--              (sql/dismiss.sql, sql/resolve.sql)
--   dismissed  an operator decided it needs no delivery (reason kept)
--   resolved   an operator delivered it by other means (reason kept)
--
-- The retry window of an action runs from created_at, or from its last
-- replay (replayed_at).  Every operator step (replay, dismiss, resolve,
-- resend) leaves a row in action_history with the attempts before it.
--
-- The new check constraint is a superset of the old one; adding it scans
-- the table once under the migration's lock.
alter table hookinbox.action drop constraint action_state_check;
alter table hookinbox.action add constraint action_state_check
	check (state in ('pending', 'done', 'parked', 'stale', 'dismissed', 'resolved'));
alter table hookinbox.action add column replayed_at timestamptz;
alter table hookinbox.action add column resolution text;

create table hookinbox.action_history (
	id           bigint generated always as identity primary key,
	action_id    bigint not null,
	at           timestamptz not null default now(),
	step         text not null check (step in ('replay', 'dismiss', 'resolve', 'resend')),
	by_role      text not null default current_user,
	reason       text,
	-- the action as it was before the step
	state        text not null,
	attempts     integer not null,
	last_status  integer,
	last_error   text,
	response_ref text,
	since        timestamptz not null    -- when it reached that state
);
create index action_history_action on hookinbox.action_history (action_id);

-- Business dedup (key = object-type): an event whose action collapsed into
-- an existing one (same route and key) leaves a trace here, so that every
-- accepted event has a visible outcome (sql/event.sql shows it).
create table hookinbox.action_collapse (
	inbox_id     bigint not null,
	route        text not null,
	action_id    bigint not null,      -- the action it collapsed into
	collapsed_at timestamptz not null default now(),
	primary key (inbox_id, route)
);
create index action_collapse_action on hookinbox.action_collapse (action_id);
