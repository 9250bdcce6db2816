-- SPDX-License-Identifier: ISC
-- Fan unrouted events out again, to routes added since (or configured on
-- another host): a worker that lacked a route marked the events it could
-- not route `unrouted`; this makes them pending, and the next worker run
-- routes them with the routes it has (events that still match no route
-- become unrouted again).
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
