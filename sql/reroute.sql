-- SPDX-License-Identifier: ISC
-- Fan unrouted events out again, to routes added since (or configured on
-- another host): a worker that lacked a route marked the events it could
-- not route `unrouted`; this makes them pending, and the next worker run
-- routes them with the routes it has (events that still match no route
-- become unrouted again).
--
-- With -v since=TIME, dispatched events received since then are routed
-- again too, by every running worker with its own routes: only the
-- (route, event) actions an event has none of are added, never a second
-- one.  While hosts run different routes the workers do this by themselves
-- for 24 hours (the count "a worker already owes" says how many are
-- waiting for it); this is for what a worker fanned out before, or a host
-- that came back later.  Routes removed everywhere get nothing.
--
--   psql -v endpoint=stripe-live -f sql/reroute.sql              (dry run: counts)
--   psql -v endpoint=stripe-live -v type='invoice.%' -v go=1 -f sql/reroute.sql
--
-- Filters (any, at least one): endpoint, type (a LIKE pattern), since and
-- until (received_at).  Without -v go=1 it only says how many match.  Run
-- it after the worker with the new routes is deployed everywhere: the
-- worker logs event=routes-differ while hosts disagree.  Runs as
-- hookinbox_admin.  Exits non-zero (3) on a usage error.
\set ON_ERROR_STOP 1
\pset footer off
\if :{?endpoint} \else \set endpoint '' \endif
\if :{?type} \else \set type '' \endif
\if :{?since} \else \set since '' \endif
\if :{?until} \else \set until '' \endif
\if :{?go} \else \set go 0 \endif
select :'endpoint' = '' and :'type' = '' and :'since' = '' and :'until' = '' as missing \gset
\if :missing
do $$ begin raise exception 'reroute.sql: choose unrouted events with any of -v endpoint=E, -v type=PATTERN, -v since=TIME, -v until=TIME; add -v go=1 to apply' using errcode = '22023'; end $$;
\endif
select hookinbox.reroute_unrouted(nullif(:'endpoint', ''), nullif(:'type', ''),
	nullif(:'since', '')::timestamptz, nullif(:'until', '')::timestamptz, :'go'::boolean)
	as unrouted_events \gset
\if :go
\echo :unrouted_events 'unrouted events are pending again: the next worker run routes them'
\else
\echo :unrouted_events 'unrouted events match; dry run: nothing changed; add -v go=1 to apply'
\endif
select :'since' <> '' as with_since \gset
\if :with_since
select recorded as dispatched_events, awaiting as dispatched_awaiting
  from hookinbox.reroute_dispatched(nullif(:'endpoint', ''), nullif(:'type', ''),
	nullif(:'since', '')::timestamptz, nullif(:'until', '')::timestamptz, :'go'::boolean) \gset
\if :go
\echo :dispatched_events 'dispatched events are routed again by each running worker (missing route actions only);' :dispatched_awaiting 'of them a worker already owed'
\else
\echo :dispatched_events 'dispatched events match (' :dispatched_awaiting 'a worker already owes a top-up); dry run: nothing changed; add -v go=1 to route them again'
\endif
\else
select count(*) as awaiting from hookinbox.route_topup t join hookinbox.inbox i on i.id = t.inbox_id
 where i.state = 'dispatched'
   and (nullif(:'endpoint', '') is null or i.endpoint = :'endpoint')
   and (nullif(:'type', '') is null or i.event_type like :'type')
   and (nullif(:'until', '') is null or i.received_at < nullif(:'until', '')::timestamptz) \gset
\echo :awaiting 'dispatched events wait for a worker with other routes to add its actions (by itself); -v since=TIME routes dispatched events again'
\endif
