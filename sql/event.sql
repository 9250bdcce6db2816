-- SPDX-License-Identifier: ISC
-- What became of one accepted event, route by route.
--
--   psql -v event_id=evt_123 -f sql/event.sql
--   psql -v event_id=evt_123 -v endpoint=shop -f sql/event.sql
--
-- One row per inbox row with that delivery id (and endpoint, when given),
-- and per route: the inbox state (pending: not fanned out yet; dispatched;
-- unrouted: no route matched), and the action's state, attempts and last
-- error, or, for an event collapsed by business dedup (key = object-type)
-- into another event's action, that action and event.  superseded_by: for
-- a stale action (order = newest), the action whose newer version made it
-- stale, with its event; for a collapsed one, the action it collapsed into.
-- object_state: on an ordered route, the version the downstream's object
-- has and the action (and event) that applied it.  backfilled_at is
-- set when hookinbox-backfill stored the event from the provider's API
-- (the event was never delivered to the intake).  Exits non-zero (3)
-- without -v event_id.
\set ON_ERROR_STOP 1
\if :{?event_id} \else \set event_id '' \endif
\if :{?endpoint} \else \set endpoint '' \endif
select :'event_id' = '' as missing \gset
\if :missing
do $$ begin raise exception 'event.sql: set -v event_id=ID [-v endpoint=NAME]' using errcode = '22023'; end $$;
\endif
select i.id as inbox_id, i.endpoint, i.event_id, i.event_type, i.received_at, i.backfilled_at,
       i.state as inbox_state, o.route, o.outcome, o.attempts, o.last_status, o.last_error,
       o.reason, o.superseded_by,
       'version ' || os.applied_version || ' by action ' || os.action_id
	|| coalesce(' (event ' || oi.event_id || ')', '') as object_state,
       o.idem_key, o.response_ref
  from hookinbox.inbox i
  left join lateral (
	select a.route, a.state as outcome, a.attempts, a.last_status, a.last_error,
	       a.resolution as reason, a.idem_key, a.response_ref, a.object_id, a.ordered,
	       'action ' || a.superseded_by
	       || coalesce(' (event ' || si.event_id || ', version ' || sa.event_version || ', '
			   || sa.state || ')', ' (since purged)') as superseded_by
	  from hookinbox.action a
	  left join hookinbox.action sa on sa.id = a.superseded_by
	  left join hookinbox.inbox si on si.id = sa.inbox_id
	 where a.inbox_id = i.id
	union all
	select c.route, 'collapsed into action ' || c.action_id
	       || coalesce(' (event ' || ci.event_id || ', ' || ca.state || ')', ' (since purged)'),
	       null, null, null, null, null, null, ca.object_id, ca.ordered,
	       'action ' || c.action_id || coalesce(' (event ' || ci.event_id || ')', '')
	  from hookinbox.action_collapse c
	  left join hookinbox.action ca on ca.id = c.action_id
	  left join hookinbox.inbox ci on ci.id = ca.inbox_id
	 where c.inbox_id = i.id
  ) o on true
  left join hookinbox.object_state os on os.route = o.route and os.object_id = o.object_id
	and o.ordered
  left join hookinbox.action oa on oa.id = os.action_id
  left join hookinbox.inbox oi on oi.id = oa.inbox_id
 where i.event_id = :'event_id'
   and (:'endpoint' = '' or i.endpoint = :'endpoint')
 order by i.id, o.route;
