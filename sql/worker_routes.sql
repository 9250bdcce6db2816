-- SPDX-License-Identifier: ISC
-- Functions of the worker, recreated on every install run: the state of routes
-- shared between workers (holds, breaker, pauses), their configurations,
-- and rerouting.
--
-- They run with the caller's rights (hookinbox_worker); every name is
-- schema-qualified and search_path is pinned.

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
	select exists (select 1 from hookinbox.worker_routes w
			where hookinbox.routes_name(w.routes, p_route))
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
