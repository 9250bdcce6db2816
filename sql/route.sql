-- SPDX-License-Identifier: ISC
-- Pause or resume a route, or show the routes' state.
--
--   psql -v route=fulfil -v do=pause -v reason='downstream migration' -f sql/route.sql
--   psql -v route=fulfil -v do=resume -f sql/route.sql
--   psql -f sql/route.sql                                  (every route's state)
--
-- A paused route's due actions are not claimed by any worker, so they keep
-- their attempts and their retry windows keep running (a pause longer than
-- retry_window parks them at the next claim after the resume); calls
-- already in flight finish and are recorded.  The state lives in
-- hookinbox.route_state, with the holds and circuit breakers the workers
-- report (a 429 or Retry-After, an open breaker), and is shown by
-- sql/stats.sql.  Runs as hookinbox_admin.  Exits non-zero (3) on a usage
-- error.
\set ON_ERROR_STOP 1
\pset footer off
\if :{?route} \else \set route '' \endif
\if :{?do} \else \set do '' \endif
\if :{?reason} \else \set reason '' \endif
select (:'route' = '') <> (:'do' = '') or :'do' not in ('', 'pause', 'resume') as bad \gset
\if :bad
do $$ begin raise exception 'route.sql: give both -v route=NAME and -v do=pause|resume (or neither, to show every route)' using errcode = '22023'; end $$;
\endif
select :'do' <> '' as act \gset
\if :act
select * from hookinbox.route_pause(:'route', :'do' = 'pause', nullif(:'reason', ''));
\endif
\echo 'routes paused, held or with a circuit breaker not closed (others run normally)'
select route, paused, breaker,
       case when hold_until > now() then date_trunc('second', hold_until - now()) end as held_for,
       reason, updated_at, updated_by
  from hookinbox.route_state
 where paused or breaker <> 'closed' or hold_until > now()
 order by route;
