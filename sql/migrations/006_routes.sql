-- SPDX-License-Identifier: ISC
-- 006: per-route state shared by every worker and shown by sql/stats.sql.
--
-- One row per route that was ever paused, held or had its circuit breaker
-- open (routes without a row are running normally):
--   paused      an operator paused the route (sql/route.sql): its due
--               actions are not claimed, so they keep their attempts
--   hold_until  no worker claims the route's actions before this: a 429 or
--               Retry-After from the route's downstream, or an open breaker
--   breaker     closed | open (after breaker_failures consecutive transient
--               failures; one probe call after the cool-down) | probing
--               (the probe is out; should its worker die, hold_until
--               passes after the lease and another probe goes out)
--   reason      why the route was last paused or held
--
-- The claim of a worker with route limits scans due actions per route: the
-- index below serves it exactly.
create table hookinbox.route_state (
	route       text primary key,
	paused      boolean not null default false,
	hold_until  timestamptz,
	breaker     text not null default 'closed' check (breaker in ('closed', 'open', 'probing')),
	reason      text,
	updated_at  timestamptz not null default now(),
	updated_by  text not null default current_user
);

create index action_route_due on hookinbox.action (route, due_at) where state = 'pending';

-- The routes each worker configuration has, by fingerprint (a hash of each
-- route's name, endpoints, events, target, order and key): a worker whose
-- routes differ from another's seen recently says so once, since events it
-- fans out that match none of its routes become unrouted (sql/reroute.sql
-- fans them out again).
create table hookinbox.worker_routes (
	fingerprint text primary key,
	routes      text not null,
	first_seen  timestamptz not null default now(),
	last_seen   timestamptz not null default now(),
	last_host   text
);
