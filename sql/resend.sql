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
\set op resend
\set states '{done,stale}'
\set wants 'done or stale'
\set needs_reason 0
\set usage_tail 'add -v go=1 to resend them'
\ir choose-actions.inc
\if :{?new_key} \else \set new_key 0 \endif
\if :go
begin;
select * from hookinbox.operate_actions(array(select id from chosen_actions), 'resend',
	nullif(:'reason', ''), :'new_key'::boolean);
commit;
\else
select count(*) as actions_matching from chosen_actions;
\echo 'dry run: nothing changed; add -v go=1 to resend them'
\endif
