-- Resolve parked actions: the action was delivered by other means (e.g. applied by hand).
--
--   psql -v action_id=42 -v reason='...' -f sql/resolve.sql            (dry run: counts)
--   psql -v action_id=42 -v reason='...' -v go=1 -f sql/resolve.sql    (resolved)
--   psql -v route=fulfil -v error='status 410' -v reason='...' -v go=1 -f sql/resolve.sql
--
-- Selects parked actions as replay.sql does (action_id, route, endpoint,
-- error, since, until; at least one) and needs -v reason=TEXT.  Without
-- -v go=1 it only says how many match.  With it, each becomes resolved: a
-- final state, kept with its reason (sql/parked.sql -v state=resolved
-- shows it, who did it and when) and purged like a done action after the
-- dedup horizon.  The step is kept in hookinbox.action_history.
-- Exits non-zero (3) on a usage error.
\set ON_ERROR_STOP 1
\if :{?action_id} \else \set action_id '' \endif
\if :{?route} \else \set route '' \endif
\if :{?endpoint} \else \set endpoint '' \endif
\if :{?error} \else \set error '' \endif
\if :{?since} \else \set since '' \endif
\if :{?until} \else \set until '' \endif
\if :{?reason} \else \set reason '' \endif
\if :{?go} \else \set go 0 \endif
select (:'action_id' = '' and :'route' = '' and :'endpoint' = '' and :'error' = ''
        and :'since' = '' and :'until' = '') or btrim(:'reason') = '' as missing \gset
\if :missing
do $$ begin raise exception 'resolve.sql: choose parked actions with -v action_id=N, or any of -v route=R, -v endpoint=E, -v error=TEXT, -v since=TIME, -v until=TIME; give -v reason=TEXT; add -v go=1 to apply' using errcode = '22023'; end $$;
\endif
create temporary table resolve_chosen as
select id from hookinbox.find_actions('{parked}', nullif(:'action_id', '')::bigint,
	nullif(:'route', ''), nullif(:'endpoint', ''), nullif(:'error', ''),
	nullif(:'since', '')::timestamptz, nullif(:'until', '')::timestamptz) as id;
\if :go
begin;
select * from hookinbox.operate_actions(array(select id from resolve_chosen), 'resolve', :'reason');
commit;
\else
select count(*) as parked_actions_matching from resolve_chosen;
\echo 'dry run: nothing changed; add -v go=1 to apply'
\endif
