-- SPDX-License-Identifier: ISC
-- Functions of the worker, recreated on every install run: the hot path: claiming
-- due actions under a lease, handing them back, renewing leases, recording
-- outcomes.
--
-- They run with the caller's rights (hookinbox_worker); every name is
-- schema-qualified and search_path is pinned.

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

-- Claim up to p_limit due actions under a new lease and return them with
-- the event they deliver.  The claim counts the attempt, moves due_at to the
-- end of the lease (an expired lease is due again) and sets lease_token,
-- which every later write checks.
--
-- On the way, actions are
--   parked when their attempts or their retry window ran out before a
--   worker could record an outcome (it crashed, or no worker ran in time);
--   "outcome unknown" in last_error when the last attempt may have been
--   sent and no answer was recorded, so that replay.sql asks for blind=1;
--   order = newest: marked stale when the object's applied version, or a
--   pending/done sibling, is newer; deferred by a second while a sibling is
--   leased (one object is never in flight twice).  An advisory lock per
--   (route, object) held to commit serialises these decisions between
--   workers; each check is a new statement and so sees what the previous
--   lock holder committed.
--
-- Only actions of the routes in p_routes are claimed:
-- a worker leaves alone the routes its configuration does not have.  The
-- retry window runs from the action's creation, or from its last replay.
--
-- Up to
-- p_route_limits[i] due actions of route p_routes[i], p_limit in all, the
-- routes taken in turn so that a route with a deep backlog cannot fill a
-- claim meant for the others.  A route that is paused, or held until later
-- (a 429 or Retry-After, an open circuit breaker: route_state.hold_until),
-- is skipped: its actions keep their attempts.  A route whose breaker is
-- open and whose cool-down has passed gives one action, marked probe; the
-- breaker goes to probing, held for the lease, so that no other worker
-- probes at the same time.  For the actions of ordered routes, under the same advisory lock:
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
	v_unknown bigint[] := '{}';
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
			       coalesce(a.replayed_at, a.created_at) as window_from,
			       -- its last attempt was sent, or may have been, and
			       -- no outcome came back: a timeout, a reset, or a
			       -- worker that died between its claim and its record,
			       -- whose lease token is still set (a record and every
			       -- hand-back clear it), over the outcome of the attempt
			       -- before, which last_error still holds
			       a.attempts > 0 and (a.last_status is null and a.last_error is null
				   or strpos(coalesce(a.last_error, ''), 'outcome unknown') > 0
				   or a.lease_token is not null)
				   as unknown
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
						then 'attempts exhausted' else 'retry window exhausted' end
						-- the words replay.sql and an operator look for
						|| case when r.unknown
						   then ' after an attempt without a recorded outcome (outcome unknown)'
						   else '' end
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
					   and (s.state in ('pending', 'done', 'parked', 'review')
						-- closed by an operator after it was sent: the
						-- downstream may hold that version already
						or (s.state in ('dismissed', 'resolved')
						    and (s.attempts > 0
							 or exists (select 1 from hookinbox.action_history h
								     where h.action_id = s.id and h.attempts > 0))))
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
						    and (s.attempts > 0 or s.lease_until > now()))
						-- sent before a replay (attempts back to 0) or an
						-- operator closed it: it may have reached the
						-- downstream all the same
						or (s.state in ('pending', 'parked', 'dismissed', 'resolved')
						    and exists (select 1 from hookinbox.action_history h
								 where h.action_id = s.id and h.attempts > 0)))
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
			if r.unknown then
				v_unknown := v_unknown || r.id;
			end if;
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
	       -- reset; or claimed and never recorded (its worker died mid-call, the
	       -- loop's unknown); the first attempt after a replay too, whose last
	       -- outcome is the parked one's
	       c.id = any(v_unknown)
	       or ((c.attempts > 1 or c.replayed_at is not null)
		   and (strpos(coalesce(c.last_error, ''), 'outcome unknown') > 0
			or (c.last_status is null and c.last_error is null)))
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

-- The claim of workers without route limits: the routes of p_routes (NULL:
-- every route with due actions), p_limit each, p_limit in all.
create or replace function hookinbox.claim_actions(p_limit integer, p_lease_s integer,
	p_retry_window_s integer, p_routes text[])
returns table (action_id bigint, lease_token uuid, route text, idem_key text,
	attempts integer, max_attempts integer, age_s double precision, event_id text,
	event_type text, object_id text, content_type text, body bytea, outcome text)
language sql
set search_path = pg_catalog, pg_temp
as $$
	select c.action_id, c.lease_token, c.route, c.idem_key, c.attempts, c.max_attempts, c.age_s, c.event_id, c.event_type, c.object_id, c.content_type, c.body, c.outcome from (select coalesce(p_routes, array(select distinct a.route from hookinbox.action a where a.state = 'pending' and a.due_at <= now() order by 1))) as r(routes), hookinbox.claim_actions(p_limit, p_lease_s, p_retry_window_s, r.routes, array_fill(p_limit, array[coalesce(cardinality(r.routes), 0)])) c
$$;

-- The claim of workers that name no routes: every route.
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
-- One sent before whose lease ran out (its worker died) waits too: it is
-- woken like one never sent (an in-flight one is not: its record sets due_at).
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
	   and w.state = 'pending' and (w.lease_until is null or w.lease_until <= now())
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
