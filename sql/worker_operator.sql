-- SPDX-License-Identifier: ISC
-- Functions of the worker, recreated on every install run: what operators and SQL
-- handlers call: the event of an action, finding actions, stepping them.
--
-- They run with the caller's rights (hookinbox_worker); every name is
-- schema-qualified and search_path is pinned.

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
