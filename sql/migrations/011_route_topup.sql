-- SPDX-License-Identifier: ISC
-- 011: events fanned out while hosts run different routes, and which
-- action produced an object's state.
--
-- hookinbox.route_topup: one row per event fanned out while another
-- worker configuration (fingerprint, hookinbox.worker_routes) ran in the
-- last 24 hours.  fingerprints lists the configurations whose routes the
-- event's actions already reflect: the one that fanned it out, then each
-- that topped it up.  A worker whose fingerprint is not listed routes the
-- event again with its own routes and adds only the (route, event) actions
-- the event has none of (hookinbox.route_topup()), so a route one host has
-- and another has not yet gets every event fanned out meanwhile, once.  A
-- row goes once every configuration seen in the last 24 hours is listed,
-- or after 24 hours.
create table hookinbox.route_topup (
	inbox_id     bigint primary key,
	fingerprints text[] not null,
	created_at   timestamptz not null default now()
);

-- order = newest: the action whose version the object's state is
alter table hookinbox.object_state add column action_id bigint;
-- an action not sent because another was (stale, or collapsed into it on
-- key = object-type): that other action
alter table hookinbox.action add column superseded_by bigint;
