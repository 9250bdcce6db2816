-- SPDX-License-Identifier: ISC
-- Functions of the worker, recreated on every install run: the fan-out (events to
-- actions) and the top-up of the routes another configuration lacks.
--
-- They run with the caller's rights (hookinbox_worker); every name is
-- schema-qualified and search_path is pinned.

-- The idempotency key of one action, derived only from the route and the
-- event's natural key, so that it is the same whoever computes it and
-- whenever.  key = event: the delivery key (provider, account, environment,
-- event id).  key = object-type: (provider, account, environment, object
-- id, event type), so two provider events describing one business event
-- make one action; without an object id it falls back to the event key.
create or replace function hookinbox.action_key(p_route text, p_mode text, p_provider text,
	p_account text, p_environment text, p_event_id text, p_object_id text, p_event_type text)
returns text
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
	select 'hookinbox:' || p_route || ':' || encode(sha256(convert_to(
		case when p_mode = 'object-type' and p_object_id is not null
		     then jsonb_build_array(p_route, 'object-type', p_provider, p_account,
				p_environment, p_object_id, coalesce(p_event_type, ''))::text
		     else jsonb_build_array(p_route, 'event', p_provider, p_account,
				p_environment, p_event_id)::text
		end, 'UTF8')), 'hex')
$$;

-- The key of route p_route's action (key mode p_mode) for inbox row i.  A
-- held copy (review_of set) is an event of its own, so it keys on its own
-- row and never collapses into the delivery it copies.  No SET clause, so
-- that the planner inlines it into fan_out's statements; every name is
-- schema-qualified.
create or replace function hookinbox.inbox_action_key(p_route text, p_mode text,
	i hookinbox.inbox)
returns text
language sql immutable parallel safe
as $$
	select hookinbox.action_key(p_route, p_mode, i.provider, i.account, i.environment,
		case when i.review_of is null then i.event_id
		     else i.event_id || ' held ' || i.id end, i.object_id, i.event_type)
$$;

-- Whether p_routes, one configuration's routes as hookinbox.worker_routes
-- keeps them (a description a line, each starting with the route's name and
-- '|'), has a route named p_route.  No SET clause, so that the planner
-- inlines it into its callers' statements; every name is schema-qualified.
create or replace function hookinbox.routes_name(p_routes text, p_route text)
returns boolean
language sql immutable parallel safe
as $$
	select exists (select 1 from pg_catalog.regexp_split_to_table(p_routes, E'\n') l(line)
			where pg_catalog.split_part(l.line, '|', 1) = p_route)
$$;

-- The configurations (fingerprints seen in the last 24 hours) that have a
-- route named p_route: an event one of them saw has its action on it.
create or replace function hookinbox.route_fingerprints(p_route text)
returns text[]
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
	select coalesce(array_agg(w.fingerprint), '{}')
	  from hookinbox.worker_routes w
	 where w.last_seen > now() - interval '24 hours'
	   and hookinbox.routes_name(w.routes, p_route)
$$;

-- Whether the fan-out of configuration p_fingerprint must leave a record
-- for the top-up (hookinbox.route_topup): another configuration ran in the
-- last 24 hours, on another host, or since this one first ran, or in the
-- last 15 minutes (a worker registers at least every 5: a host started
-- with an older configuration after this one).  Not for 24 hours after a
-- configuration changed in place on one host: the old one fans nothing
-- out any more.  Called under the shared routes lock, which
-- hookinbox.routes_check() takes exclusively to register a configuration:
-- a fan-out that read the configurations before a new one was registered
-- has committed before that worker's first top-up looks for records.
create or replace function hookinbox.routes_differ_now(p_fingerprint text)
returns boolean
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
	select exists (select 1 from hookinbox.worker_routes w, hookinbox.worker_routes m
			where m.fingerprint = p_fingerprint and w.fingerprint <> p_fingerprint
			  and w.last_seen > now() - interval '24 hours'
			  and (w.last_seen > m.first_seen or w.last_host is distinct from m.last_host
			       or w.last_seen > now() - interval '15 minutes'))
$$;

-- The actions a worker's router chose for claimed inbox rows (parallel
-- arrays, one element per action), inserted for fan_out() and
-- route_topup(): duplicates collapse on (route, idem_key), and an event
-- whose action collapsed into another event's is recorded in
-- action_collapse.  p_topup: only (route, event) pairs the event has no
-- action and no collapse record for, so that a route two configurations
-- define differently (another key) still gets one action per event.
-- Returns the number of actions inserted.
create or replace function hookinbox.insert_actions(p_action_inbox bigint[], p_routes text[],
	p_modes text[], p_ordered boolean[], p_sequenced boolean[], p_max_attempts integer[],
	p_topup boolean)
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_n bigint;
	-- order = sequence: what was received when the action was made
	v_horizon bigint := case when true = any(p_sequenced)
				 then (select max(i.id) from hookinbox.inbox i) end;
begin
	insert into hookinbox.action (inbox_id, route, idem_key, object_id, event_type,
		event_version, ordered, sequenced, inbox_horizon, max_attempts)
	select v.inbox_id, v.route,
	       hookinbox.inbox_action_key(v.route, v.mode, i),
	       i.object_id, i.event_type, i.event_version, v.ordered or v.sequenced, v.sequenced,
	       case when v.sequenced then v_horizon end, v.max_attempts
	  from unnest(p_action_inbox, p_routes, p_modes, p_ordered, p_sequenced, p_max_attempts)
		as v(inbox_id, route, mode, ordered, sequenced, max_attempts)
	  join hookinbox.inbox i on i.id = v.inbox_id
	 where not p_topup
	    or (not exists (select 1 from hookinbox.action a
			     where a.inbox_id = v.inbox_id and a.route = v.route)
		and not exists (select 1 from hookinbox.action_collapse c
				 where c.inbox_id = v.inbox_id and c.route = v.route))
	 order by v.inbox_id, v.route
	on conflict (route, idem_key) do nothing;
	get diagnostics v_n = row_count;

	-- only when something collapsed (in a top-up, a pair still without its
	-- own action): find what into (the keys again)
	if p_topup or v_n < coalesce(array_length(p_action_inbox, 1), 0) then
		insert into hookinbox.action_collapse (inbox_id, route, action_id)
		select v.inbox_id, v.route, a.id
		  from unnest(p_action_inbox, p_routes, p_modes) as v(inbox_id, route, mode)
		  join hookinbox.inbox i on i.id = v.inbox_id
		  join hookinbox.action a on a.route = v.route
		   and a.idem_key = hookinbox.inbox_action_key(v.route, v.mode, i)
		 where a.inbox_id <> v.inbox_id
		   and (not p_topup
			or not exists (select 1 from hookinbox.action s
					where s.inbox_id = v.inbox_id and s.route = v.route))
		on conflict do nothing;
	end if;
	return v_n;
end
$$;

-- Fan-out: insert the actions the worker's router chose for a batch of
-- claimed inbox rows (insert_actions()) and mark the rows dispatched, or
-- unrouted when no route matched them.  The caller holds the rows FOR
-- UPDATE in the same transaction.  Returns the number of actions inserted.
-- A copy released from review does not own its (unsigned) delivery id:
-- the delivery that does may be another event (a captured body replayed
-- under its id), so the copy's event key is its id and its intake id.
-- p_ordered: the route has an order (newest or sequence); p_sequenced:
-- order = sequence (migration 008).
-- While another configuration runs (routes differ between hosts) each
-- event fanned out is recorded with p_fingerprint, the worker's
-- configuration's, so that a worker with other routes adds the actions of
-- its routes this one lacks (hookinbox.route_topup()).
create or replace function hookinbox.fan_out(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_sequenced boolean[],
	p_max_attempts integer[], p_fingerprint text)
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_n bigint;
begin
	v_n := hookinbox.insert_actions(p_action_inbox, p_routes, p_modes, p_ordered, p_sequenced,
		p_max_attempts, false);
	update hookinbox.inbox i
	   set state = case when i.id = any(p_action_inbox) then 'dispatched' else 'unrouted' end,
	       dispatched_at = now()
	 where i.id = any(p_inbox_ids) and i.state = 'pending';

	perform pg_advisory_xact_lock_shared(7262738);   -- "hookinbox routes"
	if hookinbox.routes_differ_now(p_fingerprint) then
		-- an event fanned out again (sql/reroute.sql) starts afresh
		insert into hookinbox.route_topup as t (inbox_id, fingerprints)
		select id, array[p_fingerprint] from unnest(p_inbox_ids) id
		on conflict (inbox_id) do update set fingerprints = excluded.fingerprints,
			created_at = now();
	end if;
	return v_n;
end
$$;

-- The top-up: the caller holds the claimed route_topup rows p_inbox_ids
-- (and their dispatched or unrouted inbox rows) FOR UPDATE and passes the
-- actions its router chose for them, as for fan_out().  Only (route,
-- event) pairs the event has no action and no collapse record for are
-- inserted (insert_actions() with p_topup); the idempotency key is the one
-- fan_out() derives, so two workers topping up at once make one action.
-- An unrouted event that now has an action is dispatched.  The rows are
-- marked seen by p_fingerprint, and dropped once every configuration of the
-- last 24 hours saw them.  Returns the number of actions inserted.
create or replace function hookinbox.route_topup(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_sequenced boolean[],
	p_max_attempts integer[], p_fingerprint text)
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_n bigint;
begin
	v_n := hookinbox.insert_actions(p_action_inbox, p_routes, p_modes, p_ordered, p_sequenced,
		p_max_attempts, true);
	update hookinbox.inbox i set state = 'dispatched'
	 where i.state = 'unrouted' and i.id = any(p_action_inbox);

	update hookinbox.route_topup t set fingerprints = t.fingerprints || p_fingerprint
	 where t.inbox_id = any(p_inbox_ids) and not p_fingerprint = any(t.fingerprints);
	delete from hookinbox.route_topup t
	 where t.inbox_id = any(p_inbox_ids)
	   and (t.created_at < now() - interval '24 hours'
		or t.fingerprints @> array(select w.fingerprint from hookinbox.worker_routes w
					    where w.last_seen > now() - interval '24 hours'));
	return v_n;
end
$$;

-- The fan-out of workers that do not pass their configuration's
-- fingerprint: nothing recorded for the top-up.
create or replace function hookinbox.fan_out(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_sequenced boolean[],
	p_max_attempts integer[])
returns bigint
language sql
set search_path = pg_catalog, pg_temp
as $$
	select hookinbox.fan_out(p_inbox_ids, p_action_inbox, p_routes, p_modes, p_ordered, p_sequenced, p_max_attempts, null::text)
$$;

-- The fan-out of workers that pass no p_sequenced (no order = sequence).
create or replace function hookinbox.fan_out(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_max_attempts integer[])
returns bigint
language sql
set search_path = pg_catalog, pg_temp
as $$
	select hookinbox.fan_out(p_inbox_ids, p_action_inbox, p_routes, p_modes, p_ordered, array_fill(false, array[coalesce(cardinality(p_ordered), 0)]), p_max_attempts, null::text)
$$;
