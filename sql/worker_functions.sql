-- SPDX-License-Identifier: ISC
-- Functions of the worker, recreated on every install run.
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

-- Fan-out: insert the actions the worker's router chose for a batch of
-- claimed inbox rows (parallel arrays, one element per action) and mark
-- the rows dispatched, or unrouted when no route matched them.  The caller
-- holds the rows FOR UPDATE in the same transaction.  Duplicates collapse
-- on (route, idem_key); an event whose action collapsed into another
-- event's is recorded in action_collapse.  Returns the number of actions
-- inserted.
-- A copy released from review does not own its (unsigned) delivery id:
-- the delivery that does may be another event (a captured body replayed
-- under its id), so the copy's event key is its id and its intake id.
-- p_ordered: the route has an order (newest or sequence); p_sequenced:
-- order = sequence (migration 008).
create or replace function hookinbox.fan_out(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_sequenced boolean[],
	p_max_attempts integer[])
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
	       hookinbox.action_key(v.route, v.mode, i.provider, i.account, i.environment,
			case when i.review_of is null then i.event_id
			     else i.event_id || ' held ' || i.id end, i.object_id, i.event_type),
	       i.object_id, i.event_type, i.event_version, v.ordered or v.sequenced, v.sequenced,
	       case when v.sequenced then v_horizon end, v.max_attempts
	  from unnest(p_action_inbox, p_routes, p_modes, p_ordered, p_sequenced, p_max_attempts)
		as v(inbox_id, route, mode, ordered, sequenced, max_attempts)
	  join hookinbox.inbox i on i.id = v.inbox_id
	 order by v.inbox_id, v.route
	on conflict (route, idem_key) do nothing;
	get diagnostics v_n = row_count;

	-- only when something collapsed: find what into (the keys again)
	if v_n < coalesce(array_length(p_action_inbox, 1), 0) then
		insert into hookinbox.action_collapse (inbox_id, route, action_id)
		select v.inbox_id, v.route, a.id
		  from unnest(p_action_inbox, p_routes, p_modes) as v(inbox_id, route, mode)
		  join hookinbox.inbox i on i.id = v.inbox_id
		  join hookinbox.action a on a.route = v.route
		   and a.idem_key = hookinbox.action_key(v.route, v.mode, i.provider, i.account,
				i.environment, case when i.review_of is null then i.event_id
						    else i.event_id || ' held ' || i.id end,
				i.object_id, i.event_type)
		 where a.inbox_id <> v.inbox_id
		on conflict do nothing;
	end if;

	update hookinbox.inbox i
	   set state = case when i.id = any(p_action_inbox) then 'dispatched' else 'unrouted' end,
	       dispatched_at = now()
	 where i.id = any(p_inbox_ids) and i.state = 'pending';
	return v_n;
end
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
	   and exists (select 1 from regexp_split_to_table(w.routes, E'\n') l(line)
			where split_part(l.line, '|', 1) = p_route)
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

-- The fan-out of a worker that knows its configuration's fingerprint
-- (migration 011): as above, and while another configuration runs (routes
-- differ between hosts) each event fanned out is recorded with this
-- fingerprint, so that a worker with other routes adds the actions of
-- its routes this one lacks (hookinbox.route_topup()).
create or replace function hookinbox.fan_out(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_sequenced boolean[],
	p_max_attempts integer[], p_fingerprint text)
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_n bigint := hookinbox.fan_out(p_inbox_ids, p_action_inbox, p_routes, p_modes, p_ordered,
		p_sequenced, p_max_attempts);
begin
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
-- inserted, so a route that two configurations define differently (another
-- key) still gets one action per event; the idempotency key is the one
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
	v_horizon bigint := case when true = any(p_sequenced)
				 then (select max(i.id) from hookinbox.inbox i) end;
begin
	insert into hookinbox.action (inbox_id, route, idem_key, object_id, event_type,
		event_version, ordered, sequenced, inbox_horizon, max_attempts)
	select v.inbox_id, v.route,
	       hookinbox.action_key(v.route, v.mode, i.provider, i.account, i.environment,
			case when i.review_of is null then i.event_id
			     else i.event_id || ' held ' || i.id end, i.object_id, i.event_type),
	       i.object_id, i.event_type, i.event_version, v.ordered or v.sequenced, v.sequenced,
	       case when v.sequenced then v_horizon end, v.max_attempts
	  from unnest(p_action_inbox, p_routes, p_modes, p_ordered, p_sequenced, p_max_attempts)
		as v(inbox_id, route, mode, ordered, sequenced, max_attempts)
	  join hookinbox.inbox i on i.id = v.inbox_id
	 where not exists (select 1 from hookinbox.action a
			    where a.inbox_id = v.inbox_id and a.route = v.route)
	   and not exists (select 1 from hookinbox.action_collapse c
			    where c.inbox_id = v.inbox_id and c.route = v.route)
	 order by v.inbox_id, v.route
	on conflict (route, idem_key) do nothing;
	get diagnostics v_n = row_count;

	-- key = object-type: a pair still without its own action collapsed
	-- into another event's
	insert into hookinbox.action_collapse (inbox_id, route, action_id)
	select v.inbox_id, v.route, a.id
	  from unnest(p_action_inbox, p_routes, p_modes) as v(inbox_id, route, mode)
	  join hookinbox.inbox i on i.id = v.inbox_id
	  join hookinbox.action a on a.route = v.route
	   and a.idem_key = hookinbox.action_key(v.route, v.mode, i.provider, i.account,
			i.environment, case when i.review_of is null then i.event_id
					    else i.event_id || ' held ' || i.id end,
			i.object_id, i.event_type)
	 where a.inbox_id <> v.inbox_id
	   and not exists (select 1 from hookinbox.action s
			    where s.inbox_id = v.inbox_id and s.route = v.route)
	on conflict do nothing;

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

-- The fan-out of workers older than migration 008 (no order = sequence).
create or replace function hookinbox.fan_out(p_inbox_ids bigint[], p_action_inbox bigint[],
	p_routes text[], p_modes text[], p_ordered boolean[], p_max_attempts integer[])
returns bigint
language sql
set search_path = pg_catalog, pg_temp
as $$
	select hookinbox.fan_out(p_inbox_ids, p_action_inbox, p_routes, p_modes, p_ordered,
		array_fill(false, array[coalesce(cardinality(p_ordered), 0)]), p_max_attempts)
$$;

-- order = newest: the action that makes p_id (version p_version of its
-- object on p_route) stale, kept in action.superseded_by: the newest other
-- version that is not itself stale, else the action whose version the
-- object's state is (hookinbox.object_state.action_id).
create or replace function hookinbox.superseding_action(p_route text, p_object_id text,
	p_version bigint, p_id bigint)
returns bigint
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
	select coalesce(
		(select s.id from hookinbox.action s
		  where s.route = p_route and s.object_id = p_object_id and s.ordered
		    and s.id <> p_id and s.state <> 'stale' and s.event_version > p_version
		  order by s.event_version desc, s.id desc limit 1),
		(select o.action_id from hookinbox.object_state o
		  where o.route = p_route and o.object_id = p_object_id
		    and o.applied_version > p_version))
$$;

-- Claim up to p_limit due actions under a new lease and return them with
-- the event they deliver.  The claim counts the attempt, moves due_at to the
-- end of the lease (an expired lease is due again) and sets lease_token,
-- which every later write checks.
--
-- On the way, actions are
--   parked when an earlier worker used up their attempts or the retry
--   window without recording an outcome (it crashed each time);
--   order = newest: marked stale when the object's applied version, or a
--   pending/done sibling, is newer; deferred by a second while a sibling is
--   leased (one object is never in flight twice).  An advisory lock per
--   (route, object) held to commit serialises these decisions between
--   workers; each check is a new statement and so sees what the previous
--   lock holder committed.
--
-- Only actions of the routes in p_routes (NULL: every route) are claimed:
-- a worker leaves alone the routes its configuration does not have.  The
-- retry window runs from the action's creation, or from its last replay.
create or replace function hookinbox.claim_actions(p_limit integer, p_lease_s integer,
	p_retry_window_s integer, p_routes text[])
returns table (action_id bigint, lease_token uuid, route text, idem_key text,
	attempts integer, max_attempts integer, age_s double precision, event_id text,
	event_type text, object_id text, content_type text, body bytea, outcome text)
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
	v_token uuid := gen_random_uuid();
	v_lease interval := make_interval(secs => p_lease_s);
	v_ids bigint[] := '{}';
	v_stale bigint[] := '{}';
	v_parked bigint[] := '{}';
	r record;
begin
	perform pg_catalog.set_config('synchronous_commit', 'on', true); -- as the claim below
	for r in
		select a.id, a.route, a.object_id, a.ordered, a.event_version, a.attempts,
		       a.max_attempts, coalesce(a.replayed_at, a.created_at) as window_from
		  from hookinbox.action a
		 where a.state = 'pending' and a.due_at <= now()
		   and (p_routes is null or a.route = any(p_routes))
		   and not a.sequenced   -- order = sequence: only the claim below knows it
		 order by a.due_at
		 limit p_limit
		   for no key update skip locked
	loop
		if r.attempts >= r.max_attempts
		   or r.window_from + make_interval(secs => p_retry_window_s) < now() then
			update hookinbox.action a
			   set state = 'parked', lease_token = null, lease_until = null,
			       updated_at = now(),
			       last_error = left(case when r.attempts >= r.max_attempts
					then 'attempts exhausted without a recorded outcome'
					else 'retry window exhausted' end
					|| coalesce('; last: ' || a.last_error, ''), 500)
			 where a.id = r.id;
			v_parked := v_parked || r.id;
			continue;
		end if;
		if r.ordered and r.object_id is not null then
			perform pg_advisory_xact_lock(hashtext(r.route), hashtext(r.object_id));
			if exists (select 1 from hookinbox.action s
				    where s.route = r.route and s.object_id = r.object_id and s.ordered
				      and s.id <> r.id and s.state = 'pending' and s.lease_until > now()) then
				update hookinbox.action a set due_at = now() + interval '1 second'
				 where a.id = r.id;
				continue;
			end if;
			if r.event_version is not null and (
			   exists (select 1 from hookinbox.object_state o
				    where o.route = r.route and o.object_id = r.object_id
				      and o.applied_version > r.event_version)
			   or exists (select 1 from hookinbox.action s
				    where s.route = r.route and s.object_id = r.object_id and s.ordered
				      and s.id <> r.id and s.state <> 'stale'
				      and s.event_version > r.event_version)) then
				update hookinbox.action a
				   set state = 'stale', lease_token = null, lease_until = null,
				       updated_at = now(), done_at = now(),
				       superseded_by = hookinbox.superseding_action(r.route, r.object_id,
						r.event_version, r.id)
				 where a.id = r.id;
				v_stale := v_stale || r.id;
				continue;
			end if;
			-- visible to the sibling check of the rest of this batch
			update hookinbox.action a set lease_until = now() + v_lease where a.id = r.id;
		end if;
		v_ids := v_ids || r.id;
	end loop;

	return query
	with c as (
		update hookinbox.action a
		   set lease_token = v_token, lease_until = now() + v_lease,
		       due_at = now() + v_lease, attempts = a.attempts + 1, updated_at = now()
		 where a.id = any(v_ids)
		returning a.id, a.inbox_id, a.route, a.idem_key, a.attempts, a.max_attempts,
			  coalesce(a.replayed_at, a.created_at) as window_from
	)
	select c.id, v_token, c.route, c.idem_key, c.attempts, c.max_attempts,
	       extract(epoch from now() - c.window_from)::double precision,
	       i.event_id, i.event_type, i.object_id, i.headers->>'Content-Type', i.body,
	       'claimed'::text
	  from c join hookinbox.inbox i on i.id = c.inbox_id
	union all
	-- what else happened on the way, for the worker's counters (no body)
	select a.id, null::uuid, a.route, a.idem_key, a.attempts, a.max_attempts, 0::double precision,
	       null::text, a.event_type, a.object_id, null::text, null::bytea,
	       case when a.id = any(v_stale) then 'stale' else 'parked' end
	  from hookinbox.action a
	 where a.id = any(v_stale || v_parked);
end
$$;

-- The claim of workers older than migration 005: every route.
create or replace function hookinbox.claim_actions(p_limit integer, p_lease_s integer,
	p_retry_window_s integer)
returns table (action_id bigint, lease_token uuid, route text, idem_key text,
	attempts integer, max_attempts integer, age_s double precision, event_id text,
	event_type text, object_id text, content_type text, body bytea, outcome text)
language sql
set search_path = pg_catalog, pg_temp
as $$
	select * from hookinbox.claim_actions(p_limit, p_lease_s, p_retry_window_s, null::text[])
$$;

-- A probe of an open breaker goes out with the call most likely to be
-- answered: the retry due first (a downstream failing the first call of
-- each key answers its retries), even before its backoff ends, rather than
-- a fresh action; that retry is locked and moved to the head of its
-- route's due actions, so that the claim below takes it.  None: the claim
-- takes the first due action as usual.
create or replace function hookinbox.probe_first(p_route text)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_id bigint;
	v_head timestamptz;
begin
	select a.id into v_id
	  from hookinbox.action a
	 where a.state = 'pending' and a.route = p_route and a.attempts > 0
	   and a.attempts < a.max_attempts
	 order by a.due_at
	 limit 1
	   for no key update skip locked;
	if v_id is null then
		return;
	end if;
	select min(a.due_at) into v_head
	  from hookinbox.action a
	 where a.state = 'pending' and a.route = p_route;
	update hookinbox.action a
	   set due_at = least(a.due_at, v_head - interval '1 millisecond', now())
	 where a.id = v_id;
end
$$;

-- The claim of workers with route limits (migration 006): up to
-- p_route_limits[i] due actions of route p_routes[i], p_limit in all, the
-- routes taken in turn so that a route with a deep backlog cannot fill a
-- claim meant for the others.  A route that is paused, or held until later
-- (a 429 or Retry-After, an open circuit breaker: route_state.hold_until),
-- is skipped: its actions keep their attempts.  A route whose breaker is
-- open and whose cool-down has passed gives one action, marked probe; the
-- breaker goes to probing, held for the lease, so that no other worker
-- probes at the same time.  Otherwise as the claim above, and (migration
-- 008) for the actions of ordered routes, under the same advisory lock:
--   order = sequence: an action waits (not claimed, no attempt used) while
--   an earlier version of its (route, object) is pending, parked or in
--   review: its due_at moves 5 minutes on, and the earlier one wakes it
--   when done (sequence_wake), or an operator's step on it does; or, for a
--   second, while an event received before the action was made is still
--   waiting for the fan-out (inbox_horizon: it may be an earlier version,
--   received after this one but in another worker's fan-out batch).  The
--   check is a plain read of the siblings, which rows other workers hold
--   locked (SKIP LOCKED) do not hide, made under the advisory lock, where
--   it sees what earlier lock holders committed;
--   review, on either order: an action without a version, with the version
--   of another action of its (route, object), or (sequence) older than a
--   version already sent cannot be placed: it goes to state review, with
--   last_error saying why, for an operator (sql/order-review.sql).
create or replace function hookinbox.claim_actions(p_limit integer, p_lease_s integer,
	p_retry_window_s integer, p_routes text[], p_route_limits integer[])
returns table (action_id bigint, lease_token uuid, route text, idem_key text,
	attempts integer, max_attempts integer, age_s double precision, event_id text,
	event_type text, object_id text, content_type text, body bytea, outcome text,
	probe boolean, unknown boolean)
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
	v_token uuid := gen_random_uuid();
	v_lease interval := make_interval(secs => p_lease_s);
	v_ids bigint[] := '{}';
	v_stale bigint[] := '{}';
	v_parked bigint[] := '{}';
	v_review bigint[] := '{}';
	v_probes text[] := '{}';
	v_why text;
	v_wait interval;
	v_waiting integer := 0;
	v_lim integer;
	rt record;
	r record;
begin
	-- the worker's session commits without waiting for the WAL flush; a
	-- claim must not: the attempt it counts and the lease it takes are on
	-- disk (and on a synchronous standby) before the call starts, so a crash
	-- or a failover never hides a call made (no second call with the key
	-- while it may be in flight, and the attempt limit holds)
	perform pg_catalog.set_config('synchronous_commit', 'on', true);
	for rt in
		select t.route, t.lim, coalesce(s.breaker, 'closed') <> 'closed' as probe
		  from unnest(p_routes, p_route_limits) with ordinality as t(route, lim, n)
		  left join hookinbox.route_state s on s.route = t.route
		 where t.lim > 0 and not coalesce(s.paused, false)
		   and coalesce(s.hold_until <= now(), true)
		 order by t.n
	loop
		v_lim := least(case when rt.probe then 1 else rt.lim end,
			       p_limit - cardinality(v_ids) - cardinality(v_stale) - cardinality(v_parked)
			       - cardinality(v_review) - v_waiting);
		exit when v_lim <= 0;
		if rt.probe then
			perform hookinbox.probe_first(rt.route);
		end if;
		for r in
			select a.id, a.inbox_horizon, a.route, a.object_id, a.ordered, a.sequenced,
			       a.event_version,
			       a.attempts, a.max_attempts,
			       coalesce(a.replayed_at, a.created_at) as window_from
			  from hookinbox.action a
			 where a.state = 'pending' and a.route = rt.route and a.due_at <= now()
			 order by a.due_at
			 limit v_lim
			   for no key update skip locked
		loop
			if r.attempts >= r.max_attempts
			   or r.window_from + make_interval(secs => p_retry_window_s) < now() then
				update hookinbox.action a
				   set state = 'parked', lease_token = null, lease_until = null,
				       updated_at = now(),
				       last_error = left(case when r.attempts >= r.max_attempts
						then 'attempts exhausted without a recorded outcome'
						else 'retry window exhausted' end
						|| coalesce('; last: ' || a.last_error, ''), 500)
				 where a.id = r.id;
				v_parked := v_parked || r.id;
				continue;
			end if;
			if r.ordered and r.object_id is not null then
				perform pg_advisory_xact_lock(hashtext(r.route), hashtext(r.object_id));
				v_why := null;
				if not r.sequenced and exists (select 1 from hookinbox.action s
					    where s.route = r.route and s.object_id = r.object_id and s.ordered
					      and s.id <> r.id and s.state = 'pending'
					      and s.lease_until > now()) then
					update hookinbox.action a set due_at = now() + interval '1 second'
					 where a.id = r.id;
					continue;
				end if;
				if r.sequenced and r.event_version is not null then
					-- an earlier version unfinished: wait until it is done (which
					-- wakes this one: sequence_wake), looking again in 5 minutes
					-- at the latest; an earlier event maybe still in another
					-- worker's fan-out: look again in a second
					v_wait := case
					    when exists (select 1 from hookinbox.action e
						  where e.route = r.route and e.object_id = r.object_id
						    and e.ordered and e.event_version < r.event_version
						    and e.state in ('pending', 'parked', 'review'))
					    then interval '5 minutes'
					    when exists (select 1 from hookinbox.inbox i
						  where i.state = 'pending' and i.id <= r.inbox_horizon)
					    then interval '1 second'
					    -- or fanned out by a configuration without this
					    -- route, not yet topped up by one with it
					    when exists (select 1 from hookinbox.route_topup t
						  where t.inbox_id <= r.inbox_horizon
						    and t.created_at > now() - interval '24 hours'
						    and not t.fingerprints && hookinbox.route_fingerprints(r.route))
					    then interval '1 second' end;
					if v_wait is not null then
						update hookinbox.action a set due_at = now() + v_wait
						 where a.id = r.id;
						v_waiting := v_waiting + 1;
						continue;
					end if;
				end if;
				if not r.sequenced and r.event_version is not null and (
				   exists (select 1 from hookinbox.object_state o
					    where o.route = r.route and o.object_id = r.object_id
					      and o.applied_version > r.event_version)
				   or exists (select 1 from hookinbox.action s
					    where s.route = r.route and s.object_id = r.object_id and s.ordered
					      and s.id <> r.id and s.state <> 'stale'
					      and s.event_version > r.event_version)) then
					update hookinbox.action a
					   set state = 'stale', lease_token = null, lease_until = null,
					       updated_at = now(), done_at = now(),
					       superseded_by = hookinbox.superseding_action(r.route,
							r.object_id, r.event_version, r.id)
					 where a.id = r.id;
					v_stale := v_stale || r.id;
					continue;
				end if;
				-- what no order can place goes to review
				if r.event_version is null then
					v_why := 'order: the event has no version';
				else
					select 'order: version ' || r.event_version || ' equals that of action '
					       || s.id || ' (' || s.state || ')'
					  into v_why
					  from hookinbox.action s
					 where s.route = r.route and s.object_id = r.object_id and s.ordered
					   and s.id <> r.id and s.event_version = r.event_version
					   and s.state in ('pending', 'done', 'parked', 'review')
					 order by s.id
					 limit 1;
				end if;
				if v_why is null and r.sequenced then
					-- a later version went out already: this one came too late
					select 'order: arrived after version ' || s.event_version
					       || ' was sent (action ' || s.id || ')'
					  into v_why
					  from hookinbox.action s
					 where s.route = r.route and s.object_id = r.object_id and s.ordered
					   and s.event_version > r.event_version
					   and (s.state = 'done'
						or (s.state in ('pending', 'parked')
						    and (s.attempts > 0 or s.lease_until > now())))
					 order by s.event_version
					 limit 1;
					if v_why is null then
						select 'order: arrived after version ' || o.applied_version
						       || ' was sent'
						  into v_why
						  from hookinbox.object_state o
						 where o.route = r.route and o.object_id = r.object_id
						   and o.applied_version > r.event_version;
					end if;
				end if;
				-- an action sent before (a retry, or a replay after it was sent) was
				-- placed then, and the downstream may have applied it: it goes on
				if v_why is not null and (r.attempts > 0
				   or exists (select 1 from hookinbox.action_history h
					       where h.action_id = r.id and h.attempts > 0)) then
					v_why := null;
				end if;
				if v_why is not null then
					update hookinbox.action a
					   set state = 'review', last_error = v_why, lease_token = null,
					       lease_until = null, updated_at = now()
					 where a.id = r.id;
					v_review := v_review || r.id;
					continue;
				end if;
				-- visible to the checks of the rest of this batch
				update hookinbox.action a set lease_until = now() + v_lease
				 where a.id = r.id;
			end if;
			v_ids := v_ids || r.id;
			if rt.probe then
				v_probes := v_probes || rt.route;
				update hookinbox.route_state s
				   set breaker = 'probing', hold_until = now() + v_lease, updated_at = now(),
				       updated_by = current_user
				 where s.route = rt.route;
			end if;
		end loop;
	end loop;

	return query
	with c as (
		update hookinbox.action a
		   set lease_token = v_token, lease_until = now() + v_lease,
		       due_at = now() + v_lease, attempts = a.attempts + 1, updated_at = now()
		 where a.id = any(v_ids)
		returning a.id, a.inbox_id, a.route, a.idem_key, a.attempts, a.max_attempts,
			  coalesce(a.replayed_at, a.created_at) as window_from,
			  a.last_status, a.last_error, a.replayed_at
	)
	select c.id, v_token, c.route, c.idem_key, c.attempts, c.max_attempts,
	       extract(epoch from now() - c.window_from)::double precision,
	       i.event_id, i.event_type, i.object_id, i.headers->>'Content-Type', i.body,
	       'claimed'::text, c.route = any(v_probes),
	       -- an earlier attempt whose outcome is unknown: sent, then a timeout or a
	       -- reset; or claimed and never recorded (its worker died mid-call); the
	       -- first attempt after a replay too, whose last outcome is the parked one's
	       (c.attempts > 1 or c.replayed_at is not null)
	       and (strpos(coalesce(c.last_error, ''), 'outcome unknown') > 0
		    or (c.last_status is null and c.last_error is null))
	  from c join hookinbox.inbox i on i.id = c.inbox_id
	union all
	select a.id, null::uuid, a.route, a.idem_key, a.attempts, a.max_attempts, 0::double precision,
	       null::text, a.event_type, a.object_id, null::text, null::bytea,
	       case when a.id = any(v_stale) then 'stale' when a.id = any(v_review) then 'review'
		    else 'parked' end, false, false
	  from hookinbox.action a
	 where a.id = any(v_stale || v_parked || v_review);
end
$$;

-- What a worker learned about a route's downstream, for every worker:
--   hold     a 429 or Retry-After: no claims before p_seconds from now
--            (an earlier hold is never shortened)
--   open     the circuit breaker opened (or a probe failed): held for the
--            cool-down, then one probe
--   closed   a call succeeded: the breaker is closed again
create or replace function hookinbox.route_report(p_route text, p_what text, p_seconds double precision,
	p_reason text)
returns void
language sql
set search_path = pg_catalog, pg_temp
as $$
	insert into hookinbox.route_state as s (route, hold_until, breaker, reason)
	select p_route,
	       -- a hold is bounded (a Retry-After of years from any worker version)
	       case when p_what = 'closed' then null
		    else now() + make_interval(secs => least(p_seconds, 3600)) end,
	       case p_what when 'hold' then 'closed' else p_what end, left(p_reason, 200)
	 where p_what in ('hold', 'open', 'closed')
	on conflict (route) do update
	   set hold_until = case when p_what = 'closed' then
				case when s.breaker = 'closed' then s.hold_until end
			    -- a failed probe: the cool-down from now (not the probe's lease)
			    when p_what = 'open' and s.breaker = 'probing' then excluded.hold_until
			    else greatest(s.hold_until, excluded.hold_until) end,
	       breaker = case when p_what = 'hold' then s.breaker else excluded.breaker end,
	       reason = case when p_what = 'closed' then s.reason else excluded.reason end,
	       updated_at = now(), updated_by = current_user
$$;

-- Pause or resume a route (sql/route.sql): a paused route's due actions
-- are not claimed and keep their attempts; calls already in flight finish.
-- Returns the route's state after the step.
create or replace function hookinbox.route_pause(p_route text, p_pause boolean, p_reason text)
returns table (route text, paused boolean, hold_until timestamptz, breaker text, reason text)
language sql
set search_path = pg_catalog, pg_temp
as $$
	insert into hookinbox.route_state as s (route, paused, reason)
	values (p_route, p_pause, p_reason)
	on conflict (route) do update
	   set paused = p_pause, reason = coalesce(p_reason, s.reason), updated_at = now(),
	       updated_by = current_user
	returning s.route, s.paused, s.hold_until, s.breaker, s.reason
$$;

-- Whether any worker's configuration has registered route p_route
-- (hookinbox.worker_routes), or it has actions or a state: an operator's
-- step on another name is a typo, refused.
create or replace function hookinbox.route_known(p_route text)
returns boolean
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
	select exists (select 1 from hookinbox.worker_routes w,
			      regexp_split_to_table(w.routes, E'\n') as l(line)
			where split_part(l.line, '|', 1) = p_route)
	    or exists (select 1 from hookinbox.action a where a.route = p_route)
	    or exists (select 1 from hookinbox.route_state s where s.route = p_route)
$$;

-- An operator clears a route's hold (429, Retry-After) and closes its
-- circuit breaker (sql/route.sql do=clear): claims take its due actions
-- at once.  A pause stays (do=resume ends it).  Returns the state after.
create or replace function hookinbox.route_clear(p_route text, p_reason text)
returns table (route text, paused boolean, hold_until timestamptz, breaker text, reason text)
language sql
set search_path = pg_catalog, pg_temp
as $$
	update hookinbox.route_state s
	   set hold_until = null, breaker = 'closed',
	       reason = coalesce(p_reason, 'cleared by an operator'), updated_at = now(),
	       updated_by = current_user
	 where s.route = p_route
	returning s.route, s.paused, s.hold_until, s.breaker, s.reason
$$;

-- A worker's routes (one description per route, in any order) seen from
-- p_host: remembered under their fingerprint; returns this fingerprint and
-- the other fingerprints that ran since this one last did (other = true),
-- within the last p_hours.  Workers that disagree and keep running see each
-- other at every run; a configuration changed in place (or a new one) says
-- nothing about the one it replaced, which stopped before it started, so
-- that the warning a worker writes for each does not go on for p_hours
-- after a route was added everywhere.
create or replace function hookinbox.routes_check(p_routes text[], p_host text, p_hours integer)
returns table (fingerprint text, other boolean, routes text, last_seen timestamptz, last_host text)
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
	v_desc text := array_to_string(array(select r from unnest(p_routes) r order by r), E'\n');
	v_fp text := left(encode(sha256(convert_to(v_desc, 'UTF8')), 'hex'), 16);
	v_since timestamptz;
begin
	-- a fan-out that reads the configurations under the shared lock either
	-- has committed or sees this one (hookinbox.routes_differ_now())
	perform pg_advisory_xact_lock(7262738);   -- "hookinbox routes"
	select w.last_seen into v_since from hookinbox.worker_routes w where w.fingerprint = v_fp;
	insert into hookinbox.worker_routes as w (fingerprint, routes, last_host)
	values (v_fp, v_desc, p_host)
	on conflict (fingerprint) do update set last_seen = now(), last_host = excluded.last_host;
	return query
	select w.fingerprint, w.fingerprint <> v_fp, w.routes, w.last_seen, w.last_host
	  from hookinbox.worker_routes w
	 where w.fingerprint = v_fp
	    or (w.last_seen > coalesce(v_since, now())
	        and w.last_seen > now() - make_interval(hours => p_hours))
	 order by w.fingerprint <> v_fp, w.last_seen desc;
end
$$;

-- Unrouted events (no route matched when a worker fanned them out) back to
-- pending, so that the next fan-out routes them with the routes configured
-- now (sql/reroute.sql).  Filters as given (NULL: any).  Returns how many.
create or replace function hookinbox.reroute_unrouted(p_endpoint text, p_type text,
	p_since timestamptz, p_until timestamptz, p_go boolean)
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_n bigint;
begin
	if not p_go then
		select count(*) into v_n from hookinbox.inbox i
		 where i.state = 'unrouted'
		   and (p_endpoint is null or i.endpoint = p_endpoint)
		   and (p_type is null or i.event_type like p_type)
		   and (p_since is null or i.received_at >= p_since)
		   and (p_until is null or i.received_at < p_until);
		return v_n;
	end if;
	update hookinbox.inbox i set state = 'pending', dispatched_at = null
	 where i.state = 'unrouted'
	   and (p_endpoint is null or i.endpoint = p_endpoint)
	   and (p_type is null or i.event_type like p_type)
	   and (p_since is null or i.received_at >= p_since)
	   and (p_until is null or i.received_at < p_until);
	get diagnostics v_n = row_count;
	return v_n;
end
$$;

-- Dispatched events (sql/reroute.sql with since): fanned out by a worker
-- that lacked a route, before a record was kept or past the 24 hours in
-- which the worker with the route tops them up.  With p_go they are
-- recorded for the top-up afresh: every running worker routes them again
-- and adds only the (route, event) actions they have none of, so an event
-- is never sent twice for a route; none of a route removed everywhere.
-- Returns (recorded, awaiting): how many are recorded now (or, without
-- p_go, would be), and how many of those chosen a worker already owes a
-- top-up.  p_since is required: a route added today would otherwise get
-- every event the inbox still keeps.
create or replace function hookinbox.reroute_dispatched(p_endpoint text, p_type text,
	p_since timestamptz, p_until timestamptz, p_go boolean)
returns table (recorded bigint, awaiting bigint)
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_n bigint;
	v_await bigint;
begin
	if p_since is null then
		raise exception 'reroute_dispatched: since is required' using errcode = '22023';
	end if;
	select count(*) filter (where t.inbox_id is not null) into v_await
	  from hookinbox.inbox i left join hookinbox.route_topup t on t.inbox_id = i.id
	 where i.state = 'dispatched'
	   and (p_endpoint is null or i.endpoint = p_endpoint)
	   and (p_type is null or i.event_type like p_type)
	   and i.received_at >= p_since
	   and (p_until is null or i.received_at < p_until);
	if not p_go then
		select count(*) into v_n from hookinbox.inbox i
		 where i.state = 'dispatched'
		   and (p_endpoint is null or i.endpoint = p_endpoint)
		   and (p_type is null or i.event_type like p_type)
		   and i.received_at >= p_since
		   and (p_until is null or i.received_at < p_until);
		return query select v_n, v_await;
		return;
	end if;
	insert into hookinbox.route_topup as t (inbox_id, fingerprints)
	select i.id, '{}' from hookinbox.inbox i
	 where i.state = 'dispatched'
	   and (p_endpoint is null or i.endpoint = p_endpoint)
	   and (p_type is null or i.event_type like p_type)
	   and i.received_at >= p_since
	   and (p_until is null or i.received_at < p_until)
	on conflict (inbox_id) do update set fingerprints = '{}', created_at = now();
	get diagnostics v_n = row_count;
	return query select v_n, v_await;
end
$$;

-- Routes with due actions that are not in p_routes: what a worker without
-- them leaves alone (it says so once per run).
create or replace function hookinbox.unserved_routes(p_routes text[])
returns table (route text, due bigint)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
	select a.route, count(*)
	  from hookinbox.action a
	 where a.state = 'pending' and a.due_at <= now() and a.route <> all(p_routes)
	 group by a.route
	 order by a.route
$$;

-- Hand claimed actions back uncalled (the worker is stopping, or the call
-- could not end before its --max-runtime): due now, the attempt counted at
-- the claim given back.  Guarded by the lease token.  Returns how many.
create or replace function hookinbox.release_actions(p_ids bigint[], p_tokens uuid[])
returns bigint
language sql
set search_path = pg_catalog, pg_temp
as $$
	with u as (
		update hookinbox.action a
		   set lease_token = null, lease_until = null, due_at = now(),
		       attempts = greatest(a.attempts - 1, 0), updated_at = now()
		  from unnest(p_ids, p_tokens) as t(id, token)
		 where a.id = t.id and a.lease_token = t.token and a.state = 'pending'
		returning a.id
	)
	select count(*) from u
$$;

-- Renew the leases of claimed actions whose call is about to start, so that
-- every call starts under a lease that outlives its timeout.  Each renewal
-- is guarded by the claim's lease token.  order = object: under the same
-- advisory lock as the claim, and only while the lease has not run out
-- (once it has, a newer sibling may have been claimed and sent); an action
-- whose lease ran out is handed back to the claim, due now and with the
-- attempt it never made given back.  Returns the ids renewed; the caller
-- drops the others without calling.
create or replace function hookinbox.renew_leases(p_ids bigint[], p_tokens uuid[], p_lease_s integer)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	r record;
begin
	perform pg_catalog.set_config('synchronous_commit', 'on', true); -- as the claim
	for r in
		select a.id, a.route, a.object_id, a.ordered, a.lease_until
		  from unnest(p_ids, p_tokens) as t(id, token)
		  join hookinbox.action a on a.id = t.id
		 where a.lease_token = t.token and a.state = 'pending'
		 order by a.id
		   for no key update of a
	loop
		if r.ordered and r.object_id is not null then
			perform pg_advisory_xact_lock(hashtext(r.route), hashtext(r.object_id));
			if r.lease_until <= clock_timestamp() then
				update hookinbox.action a
				   set lease_token = null, lease_until = null, due_at = now(),
				       attempts = greatest(a.attempts - 1, 0), updated_at = now()
				 where a.id = r.id;
				continue;
			end if;
		end if;
		update hookinbox.action a
		   set lease_until = clock_timestamp() + make_interval(secs => p_lease_s),
		       due_at = clock_timestamp() + make_interval(secs => p_lease_s), updated_at = now()
		 where a.id = r.id;
		return next r.id;
	end loop;
end
$$;

-- order = sequence: each of p_ids no longer holds its object (done,
-- dismissed, resolved, released): the next version of its (route, object)
-- that waits, pushed back by the claim, is due now.  The claim's check
-- keeps the order whatever due_at says; this only saves the wait.
-- Not "only if it sleeps" (due_at > now()): a claim that saw the earlier
-- version still pending may not have pushed the next one's due_at yet.  It
-- holds that row locked (FOR UPDATE in the claim), so this update waits
-- for the claim's commit and then sets due_at again: the wake is not lost
-- (it was, under ThreadSanitizer's slowness: t/49's live arrivals).
create or replace function hookinbox.sequence_wake(p_ids bigint[])
returns void
language sql
set search_path = pg_catalog, pg_temp
as $$
	update hookinbox.action w
	   set due_at = now()
	  from hookinbox.action a
	 where a.id = any(p_ids) and a.object_id is not null and a.event_version is not null
	   and w.route = a.route and w.object_id = a.object_id and w.sequenced
	   and w.state = 'pending' and w.lease_until is null
	   and w.event_version = (select min(n.event_version) from hookinbox.action n
				   where n.route = a.route and n.object_id = a.object_id and n.sequenced
				     and n.state = 'pending' and n.event_version > a.event_version)
$$;

-- Record the outcomes of calls (parallel arrays, one element per action).
-- Each write is guarded by the lease token of the claim that made the
-- call: a worker whose lease expired and was taken over changes nothing.
-- p_states: done | pending (retry after p_delays seconds) | parked.
-- order = object: a done action raises the object's applied version.
-- order = sequence: a done action wakes the next version (sequence_wake).
-- Returns the ids that were recorded (the lease was still ours).
create or replace function hookinbox.record_actions(p_ids bigint[], p_tokens uuid[],
	p_states text[], p_statuses integer[], p_errors text[], p_refs text[],
	p_delays double precision[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
	v_ids bigint[];
	v_seq bigint[];
begin
	with r as (
		select * from unnest(p_ids, p_tokens, p_states, p_statuses, p_errors, p_refs, p_delays)
			as r(id, token, state, status, error, ref, delay)
	), u as (
		update hookinbox.action a
		   set state = r.state,
		       last_status = r.status,
		       last_error = left(r.error, 500),
		       response_ref = coalesce(left(r.ref, 200), case when r.state = 'done' then null
					 else a.response_ref end),
		       lease_token = null, lease_until = null,
		       due_at = case when r.state = 'pending'
				     then now() + make_interval(secs => greatest(r.delay, 0))
				     else a.due_at end,
		       done_at = case when r.state = 'done' then now() else null end,
		       updated_at = now()
		  from r
		 where a.id = r.id and a.lease_token = r.token and a.state = 'pending'
		returning a.id, a.state, a.ordered, a.sequenced, a.route, a.object_id, a.event_version
	), o as (
		insert into hookinbox.object_state as o (route, object_id, applied_version, action_id)
		select distinct on (u.route, u.object_id) u.route, u.object_id, u.event_version, u.id
		  from u
		 where u.state = 'done' and u.ordered and u.object_id is not null
		   and u.event_version is not null
		 order by u.route, u.object_id, u.event_version desc, u.id desc
		on conflict (route, object_id) do update
		   set applied_version = greatest(o.applied_version, excluded.applied_version),
		       action_id = case when excluded.applied_version >= o.applied_version
					then excluded.action_id else o.action_id end,
		       updated_at = now()
	)
	select coalesce(array_agg(u.id), '{}'),
	       array_agg(u.id) filter (where u.sequenced and u.state = 'done')
	  into v_ids, v_seq
	  from u;
	if v_seq is not null then
		perform hookinbox.sequence_wake(v_seq);
	end if;
	return query select unnest(v_ids);
end
$$;

-- The event a SQL handler receives: the envelope fields and the body as
-- jsonb (NULL when the body is not JSON or was purged).
create or replace function hookinbox.action_event(p_action_id bigint)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
	v jsonb;
	v_body jsonb;
	r record;
begin
	select a.id, a.route, a.idem_key, a.attempts, i.endpoint, i.provider, i.account,
	       i.environment, i.event_id, i.event_type, i.object_id, i.event_version,
	       i.received_at, i.body
	  into r
	  from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id
	 where a.id = p_action_id;
	if not found then
		return null;
	end if;
	begin
		v_body := convert_from(r.body, 'UTF8')::jsonb;
	exception when others then
		v_body := null;
	end;
	v := jsonb_build_object('action_id', r.id, 'route', r.route, 'idempotency_key', r.idem_key,
		'attempt', r.attempts, 'endpoint', r.endpoint, 'provider', r.provider,
		'account', r.account, 'environment', r.environment, 'event_id', r.event_id,
		'event_type', r.event_type, 'object_id', r.object_id, 'version', r.event_version,
		'received_at', r.received_at, 'body', v_body);
	return v;
end
$$;

-- ---------------------------------------------------------------- operators
-- What sql/replay.sql, dismiss.sql, resolve.sql and resend.sql work with
-- (EXECUTE for hookinbox_admin only).

-- The actions in one of p_states that match every filter given (NULL: any):
-- one action, a route, an endpoint, a piece of the last error (case
-- insensitive, taken literally), a time range on when the action reached
-- its state (updated_at).
create or replace function hookinbox.find_actions(p_states text[], p_action_id bigint,
	p_route text, p_endpoint text, p_error text, p_since timestamptz, p_until timestamptz)
returns setof bigint
language sql stable
set search_path = pg_catalog, pg_temp
as $$
	select a.id
	  from hookinbox.action a
	  join hookinbox.inbox i on i.id = a.inbox_id
	 where a.state = any(p_states)
	   and (p_action_id is null or a.id = p_action_id)
	   and (p_route is null or a.route = p_route)
	   and (p_endpoint is null or i.endpoint = p_endpoint)
	   and (p_error is null or strpos(lower(coalesce(a.last_error, '')), lower(p_error)) > 0)
	   and (p_since is null or a.updated_at >= p_since)
	   and (p_until is null or a.updated_at < p_until)
	 order by a.id
$$;

-- One operator step on each of p_ids, each remembered in action_history
-- with the action as it was (state, attempts, last status and error):
--   replay   parked -> pending, due now, attempts from 0 and a new retry
--            window from now (replayed_at), same idempotency key
--   resend   done or stale -> pending the same way, on purpose; a stale
--            (order = newest) action, or one of order = sequence, is sent
--            outside its object's order;
--            p_new_key gives it a fresh idempotency key (the downstream
--            would otherwise answer the first call's stored response)
--   release  review -> pending, out of its object's order (order = newest
--            or sequence could not place it; sql/order-review.sql)
--   dismiss  parked or review -> dismissed: needs no delivery (p_reason
--            required)
--   resolve  parked -> resolved: delivered by other means (p_reason required)
-- An action no longer in the state the step needs (changed meanwhile) is
-- skipped; one whose payload was purged is not replayed or resent.
-- Returns one row per action: what it was and what it is now.
create or replace function hookinbox.operate_actions(p_ids bigint[], p_step text, p_reason text,
	p_new_key boolean default false)
returns table (action_id bigint, route text, event_id text, was text, now text)
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
	r record;
	v_from text[];
	v_hist bigint;
begin
	if p_step in ('replay', 'resolve') then
		v_from := '{parked}';
	elsif p_step = 'dismiss' then
		v_from := '{parked,review}';
	elsif p_step = 'release' then
		v_from := '{review}';
	elsif p_step = 'resend' then
		v_from := '{done,stale}';
	else
		raise exception 'unknown step "%"', p_step using errcode = '22023';
	end if;
	if p_step in ('dismiss', 'resolve') and coalesce(btrim(p_reason), '') = '' then
		raise exception '% needs a reason', p_step using errcode = '22023';
	end if;
	for r in
		select a.id, a.route, a.state, a.attempts, a.last_status, a.last_error, a.response_ref,
		       a.updated_at, a.idem_key, a.sequenced, i.event_id, i.body is null as purged
		  from hookinbox.action a
		  join hookinbox.inbox i on i.id = a.inbox_id
		 where a.id = any(p_ids)
		 order by a.id
		   for no key update of a
	loop
		action_id := r.id;
		route := r.route;
		event_id := r.event_id;
		was := r.state;
		if not (r.state = any(v_from)) then
			now := r.state || ' (unchanged: not ' || array_to_string(v_from, ' or ') || ')';
			return next;
			continue;
		end if;
		if p_step in ('replay', 'resend') and r.purged then
			now := r.state || ' (unchanged: payload purged)';
			return next;
			continue;
		end if;
		insert into hookinbox.action_history (action_id, step, reason, state, attempts,
			last_status, last_error, response_ref, since)
		values (r.id, p_step, nullif(btrim(p_reason), ''), r.state, r.attempts, r.last_status,
			r.last_error, r.response_ref, r.updated_at)
		returning id into v_hist;
		if p_step = 'release' then
			-- out of its object's order, on the operator's word
			update hookinbox.action a
			   set state = 'pending', due_at = pg_catalog.now(), attempts = 0,
			       replayed_at = pg_catalog.now(), ordered = false, sequenced = false,
			       last_error = null, updated_at = pg_catalog.now()
			 where a.id = r.id;
			now := 'pending';
		elsif p_step in ('replay', 'resend') then
			update hookinbox.action a
			   set state = 'pending', due_at = pg_catalog.now(), attempts = 0,
			       replayed_at = pg_catalog.now(), lease_token = null, lease_until = null,
			       done_at = null, resolution = null, updated_at = pg_catalog.now(),
			       superseded_by = null,
			       -- a stale action, or any on order = sequence, is sent on
			       -- purpose outside its object's order
			       ordered = case when p_step = 'resend' and (r.state = 'stale' or a.sequenced)
					      then false else a.ordered end,
			       sequenced = a.sequenced and p_step = 'replay',
			       idem_key = case when p_new_key then r.idem_key || ':resend-' || v_hist
					       else a.idem_key end
			 where a.id = r.id;
			now := 'pending';
		else
			update hookinbox.action a
			   set state = case p_step when 'dismiss' then 'dismissed' else 'resolved' end,
			       resolution = btrim(p_reason), lease_token = null, lease_until = null,
			       done_at = pg_catalog.now(), updated_at = pg_catalog.now()
			 where a.id = r.id;
			now := case p_step when 'dismiss' then 'dismissed' else 'resolved' end;
		end if;
		if r.sequenced and p_step <> 'replay' then
			perform hookinbox.sequence_wake(array[r.id]);
		end if;
		return next;
	end loop;
end
$$;

-- ---------------------------------------------------------------- retention
-- Purge what is due, in batches of p_batch rows, each its own transaction
-- (so no lock is held long and vacuum can reclaim as it goes), until
-- nothing more is due; called by sql/purge.sql (hookinbox_admin).  Only
-- finished events are touched: an inbox row in state dispatched or unrouted
-- (never pending, nor any state this code does not know, such as an
-- intake's review) none of whose actions is pending (waiting, in flight or
-- retrying), parked or held for review.  Done, stale, dismissed and resolved actions are
-- finished.
--   1. finished rows older than p_dedup_days are deleted with their actions,
--      their history and their collapse records;
--   2. finished rows older than p_payload_days lose their body and headers;
--      the row stays, so a late redelivery is still a duplicate;
--   3. rejection counts older than p_dedup_days are folded into one total
--      per endpoint and reason (hour -infinity).
-- Each step walks the inbox once in id order (keyset), so a run costs one
-- pass over the old rows, however many batches.  Returns this run's counts.
-- No SET clause: a procedure that commits may not have one; every name is
-- schema-qualified.
create or replace procedure hookinbox.purge(p_payload_days integer, p_dedup_days integer,
	p_batch integer, inout bodies_purged bigint default 0, inout events_deleted bigint default 0,
	inout actions_deleted bigint default 0, inout rejections_deleted bigint default 0,
	inout batches bigint default 0)
language plpgsql
as $$
declare
	v_cutoff timestamptz;
	v_max bigint;
	v_last bigint;
	v_n bigint;
	v_a bigint;
begin
	if p_payload_days < 0 or p_dedup_days < p_payload_days or p_batch < 1 then
		raise exception 'purge: need 0 <= payload_days <= dedup_days and batch >= 1'
			using errcode = '22023';
	end if;
	bodies_purged := 0;
	events_deleted := 0;
	actions_deleted := 0;
	rejections_deleted := 0;
	batches := 0;

	-- 1. events, with everything that hangs off them (first: step 2 then
	--    does not strip what is about to go)
	v_cutoff := pg_catalog.now() - pg_catalog.make_interval(days => p_dedup_days);
	select max(i.id) into v_max from hookinbox.inbox i where i.received_at < v_cutoff;
	v_last := 0;
	while v_max is not null and v_last < v_max loop
		with old as (
			select i.id
			  from hookinbox.inbox i
			 where i.id > v_last and i.id <= v_max
			   and i.received_at < v_cutoff
			   and i.state in ('dispatched', 'unrouted')
			   and not exists (select 1 from hookinbox.action a
					    where a.inbox_id = i.id
					      and a.state in ('pending', 'parked', 'review'))
			   -- a worker with other routes may still owe it actions
			   and not exists (select 1 from hookinbox.route_topup t
					    where t.inbox_id = i.id
					      and t.created_at > pg_catalog.now() - interval '24 hours')
			 order by i.id
			 limit p_batch
			   for update skip locked
		), gone_topup as (
			delete from hookinbox.route_topup t using old where t.inbox_id = old.id
		), gone_actions as (
			delete from hookinbox.action a using old where a.inbox_id = old.id
			returning a.id
		), gone_history as (
			delete from hookinbox.action_history h using gone_actions g where h.action_id = g.id
		), gone_collapse as (
			delete from hookinbox.action_collapse c using old where c.inbox_id = old.id
		), gone as (
			delete from hookinbox.inbox i using old where i.id = old.id
			returning i.id
		)
		select (select count(*) from gone), (select max(id) from gone),
		       (select count(*) from gone_actions)
		  into v_n, v_last, v_a;
		commit;
		batches := batches + 1;
		events_deleted := events_deleted + v_n;
		actions_deleted := actions_deleted + v_a;
		exit when v_n < p_batch;
	end loop;

	-- records of a fan-out while routes differed, past the top-up's 24 hours
	delete from hookinbox.route_topup t where t.created_at < pg_catalog.now() - interval '24 hours';
	commit;

	-- 2. bodies (what step 1 left)
	v_cutoff := pg_catalog.now() - pg_catalog.make_interval(days => p_payload_days);
	select max(i.id) into v_max from hookinbox.inbox i where i.received_at < v_cutoff;
	v_last := 0;
	while v_max is not null and v_last < v_max loop
		with old as (
			select i.id
			  from hookinbox.inbox i
			 where i.id > v_last and i.id <= v_max
			   and i.received_at < v_cutoff
			   and i.body is not null
			   and i.state in ('dispatched', 'unrouted')
			   and not exists (select 1 from hookinbox.action a
					    where a.inbox_id = i.id
					      and a.state in ('pending', 'parked', 'review'))
			   and not exists (select 1 from hookinbox.route_topup t
					    where t.inbox_id = i.id
					      and t.created_at > pg_catalog.now() - interval '24 hours')
			 order by i.id
			 limit p_batch
			   for update skip locked
		), u as (
			update hookinbox.inbox i set body = null, headers = '{}'
			  from old where i.id = old.id
			returning i.id
		)
		select count(*), max(u.id) into v_n, v_last from u;
		commit;
		batches := batches + 1;
		bodies_purged := bodies_purged + v_n;
		exit when v_n < p_batch;
	end loop;

	-- 3. rejection counts (one row per hour, endpoint and reason: small): the
	-- old hours are folded into one row per endpoint and reason at hour
	-- -infinity, so that the totals the metrics export as counters never go
	-- down (Prometheus would read a drop as a reset, and the whole total as new)
	with gone as (
		delete from hookinbox.rejection r
		 where r.hour < pg_catalog.now() - pg_catalog.make_interval(days => p_dedup_days)
		   and r.hour <> '-infinity'
		returning r.endpoint, r.reason, r.count
	), folded as (
		insert into hookinbox.rejection as k (hour, endpoint, reason, count)
		select '-infinity', g.endpoint, g.reason,
		       least(pg_catalog.sum(g.count), 9223372036854775807)::bigint
		  from gone g group by g.endpoint, g.reason
		on conflict (hour, endpoint, reason) do update
		   set count = k.count + least(excluded.count, 9223372036854775807 - k.count)
	)
	select pg_catalog.count(*) into v_n from gone;
	rejections_deleted := v_n;
	commit;
end
$$;
