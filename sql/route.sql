-- SPDX-License-Identifier: ISC
-- Pause or resume a route, or show the routes' state.
--
--   psql -v route=fulfil -v do=pause -v reason='downstream migration' -v go=1 -f sql/route.sql
--   psql -v route=fulfil -v do=resume -v go=1 -f sql/route.sql
--   psql -v route=fulfil -v do=clear -v go=1 -f sql/route.sql   (end a hold, close the breaker)
--   psql -f sql/route.sql                                  (every route's state)
--
-- Without -v go=1 a step is a dry run: it says what it would do and
-- changes nothing (as every operator script that changes state).
--
-- A paused route's due actions are not claimed by any worker, so they keep
-- their attempts and their retry windows keep running (a pause longer than
-- retry_window parks them at the next claim after the resume); calls
-- already in flight finish and are recorded.  The state lives in
-- hookinbox.route_state, with the holds and circuit breakers the workers
-- report (a 429 or Retry-After, an open breaker), and is shown by
-- sql/stats.sql.  do=clear ends a hold (a Retry-After is honoured for an
-- hour at most in any case) and closes an open breaker, for a downstream
-- known to be back; a pause stays until do=resume.  A name no worker's
-- configuration has registered (and without actions) is refused: a typo
-- must not report a route paused while the real one runs.  Runs as
-- hookinbox_admin.  Exits non-zero (3) on a usage error.
\set ON_ERROR_STOP 1
\pset footer off
\if :{?route} \else \set route '' \endif
\if :{?do} \else \set do '' \endif
\if :{?reason} \else \set reason '' \endif
\if :{?go} \else \set go 0 \endif
select (:'route' = '') <> (:'do' = '') or :'do' not in ('', 'pause', 'resume', 'clear') as bad \gset
\if :bad
do $$ begin raise exception 'route.sql: give both -v route=NAME and -v do=pause|resume|clear (or neither, to show every route)' using errcode = '22023'; end $$;
\endif
select :'do' <> '' as act \gset
\if :act
select not hookinbox.route_known(:'route') as unknown \gset
\if :unknown
\set msg 'route.sql: no worker has registered a route named "' :route '" (see psql -f sql/route.sql and sql/stats.sql for the routes)'
select set_config('hookinbox.msg', :'msg', false) \g /dev/null
do $$ begin raise exception '%', current_setting('hookinbox.msg') using errcode = '22023'; end $$;
\endif
select :'do' = 'clear' as clear, :'go'::boolean as go \gset
\if :go
\if :clear
select * from hookinbox.route_clear(:'route', nullif(:'reason', ''));
\else
select * from hookinbox.route_pause(:'route', :'do' = 'pause', nullif(:'reason', ''));
\endif
\else
select 'dry run: route ' || :'route' || ' would be '
       || case :'do' when 'pause' then 'paused' when 'resume' then 'resumed'
		     else 'cleared (hold ended, breaker closed)' end
       || '; nothing changed; add -v go=1 to apply' as msg \gset
\echo :msg
\endif
\endif
\echo 'routes paused, held or with a circuit breaker not closed (others run normally)'
select route, paused, breaker,
       case when hold_until > now() then date_trunc('second', hold_until - now()) end as held_for,
       reason, updated_at, updated_by
  from hookinbox.route_state
 where paused or breaker <> 'closed' or hold_until > now()
 order by route;
