-- SPDX-License-Identifier: ISC
-- Send done or stale actions again, on purpose.
--
--   psql -v action_id=42 -f sql/resend.sql                        (dry run: counts)
--   psql -v action_id=42 -v reason='downstream restored' -v go=1 -f sql/resend.sql
--   psql -v action_id=42 -v new_key=1 -v go=1 -f sql/resend.sql   (fresh idempotency key)
--
-- Selects done or stale actions as replay.sql selects parked ones
-- (action_id, route, endpoint, error, since, until; at least one).  With
-- -v go=1 each is set back to pending, due now, attempts from 0, a new
-- retry window; the step is kept in hookinbox.action_history.  The same
-- idempotency key is sent unless -v new_key=1: a downstream that still
-- remembers the key answers with the first call's stored response and does
-- nothing, which is right when unsure whether it has the effect; a fresh
-- key (the old one with ":resend-N") makes it act again.  A stale action
-- (order = object) is sent outside its object's order: it does not move the
-- object's applied version.  Exits non-zero (3) on a usage error.
\set ON_ERROR_STOP 1
\if :{?action_id} \else \set action_id '' \endif
\if :{?route} \else \set route '' \endif
\if :{?endpoint} \else \set endpoint '' \endif
\if :{?error} \else \set error '' \endif
\if :{?since} \else \set since '' \endif
\if :{?until} \else \set until '' \endif
\if :{?reason} \else \set reason '' \endif
\if :{?new_key} \else \set new_key 0 \endif
\if :{?go} \else \set go 0 \endif
select :'action_id' = '' and :'route' = '' and :'endpoint' = '' and :'error' = ''
       and :'since' = '' and :'until' = '' as missing \gset
\if :missing
do $$ begin raise exception 'resend.sql: choose done or stale actions with -v action_id=N, or any of -v route=R, -v endpoint=E, -v error=TEXT, -v since=TIME, -v until=TIME; add -v go=1 to resend them' using errcode = '22023'; end $$;
\endif
create temporary table resend_chosen as
select id from hookinbox.find_actions('{done,stale}', nullif(:'action_id', '')::bigint,
	nullif(:'route', ''), nullif(:'endpoint', ''), nullif(:'error', ''),
	nullif(:'since', '')::timestamptz, nullif(:'until', '')::timestamptz) as id;
\set chosen resend_chosen
\set op resend
\set wants 'done or stale'
\ir action-state.inc
\if :go
begin;
select * from hookinbox.operate_actions(array(select id from resend_chosen), 'resend',
	nullif(:'reason', ''), :'new_key'::boolean);
commit;
\else
select count(*) as actions_matching from resend_chosen;
\echo 'dry run: nothing changed; add -v go=1 to resend them'
\endif
