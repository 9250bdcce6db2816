-- SPDX-License-Identifier: ISC
-- The purge (retention), recreated on every install run; called by
-- sql/purge.sql as hookinbox_admin.

-- ---------------------------------------------------------------- retention
-- Whether inbox row p_id, in state p_state, is finished, so the purge may
-- touch it: dispatched or unrouted (never pending, nor a state this code
-- does not know, such as an intake's review), none of its actions pending
-- (waiting, in flight or retrying), parked or held for review, and no
-- worker with other routes still owing it actions (a top-up record of the
-- last 24 hours).  Done, stale, dismissed and resolved actions are
-- finished, but for one thing: an ordered action an operator closed after
-- it was sent is the only record that the downstream may hold its version
-- (a done one's is object_state), which the claim reads to keep an
-- earlier version from going out after it; while an earlier version of
-- its object is pending, parked or in review on its route, the row stays.
-- No SET clause, so that the planner inlines it into the purge's queries
-- as if written there; every name is schema-qualified.
create or replace function hookinbox.inbox_finished(p_id bigint, p_state text)
returns boolean
language sql stable parallel safe
as $$
	select p_state in ('dispatched', 'unrouted')
	   and not exists (select 1 from hookinbox.action a
			    where a.inbox_id = p_id
			      and a.state in ('pending', 'parked', 'review'))
	   and not exists (select 1 from hookinbox.action a
			    where a.inbox_id = p_id and a.ordered and a.object_id is not null
			      and a.state in ('dismissed', 'resolved')
			      and (a.attempts > 0
				   or exists (select 1 from hookinbox.action_history h
					       where h.action_id = a.id and h.attempts > 0))
			      and exists (select 1 from hookinbox.action e
					   where e.route = a.route and e.object_id = a.object_id
					     and e.ordered and e.event_version < a.event_version
					     and e.state in ('pending', 'parked', 'review')))
	   and not exists (select 1 from hookinbox.route_topup t
			    where t.inbox_id = p_id
			      and t.created_at > pg_catalog.now() - interval '24 hours')
$$;

-- The next batch of rows a purge step may touch, locked for it: at most
-- p_batch finished rows (inbox_finished) with ids after p_after up to
-- p_upto, received before p_cutoff, in id order (p_with_body: only rows
-- that still have a body).  Rows another session holds are skipped, for
-- a later run.  No SET clause, as inbox_finished.
create or replace function hookinbox.purge_batch(p_after bigint, p_upto bigint,
	p_cutoff timestamptz, p_with_body boolean, p_batch integer)
returns setof bigint
language sql
as $$
	select i.id
	  from hookinbox.inbox i
	 where i.id > p_after and i.id <= p_upto
	   and i.received_at < p_cutoff
	   and (not p_with_body or i.body is not null)
	   and hookinbox.inbox_finished(i.id, i.state)
	 order by i.id
	 limit p_batch
	   for update skip locked
$$;

-- Purge what is due, in batches of p_batch rows, each its own transaction
-- (so no lock is held long and vacuum can reclaim as it goes), until
-- nothing more is due; called by sql/purge.sql (hookinbox_admin).  Only
-- finished events are touched (purge_batch).
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
			select id from hookinbox.purge_batch(v_last, v_max, v_cutoff, false, p_batch) id
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
			select id from hookinbox.purge_batch(v_last, v_max, v_cutoff, true, p_batch) id
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
