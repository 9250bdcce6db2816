-- SPDX-License-Identifier: ISC
-- Replay parked actions with their original idempotency key.
--
--   psql -v action_id=42 -f sql/replay.sql                    (dry run: counts)
--   psql -v action_id=42 -v go=1 -f sql/replay.sql            (replays it)
--   psql -v route=fulfil -v error='status 422' -v since='2026-01-01 00:00+00' \
--        -v until='2026-01-02 00:00+00' -f sql/replay.sql     (a filtered set)
--
-- Selects parked actions by any of: action_id, route, endpoint, error (a
-- piece of the last error, case insensitive), since/until (when they were
-- parked); at least one is required.  Without -v go=1 it only says how
-- many match (a dry run); with it, each is set back to pending, due now,
-- its attempts counted from 0 and its retry window opened again from now,
-- with the same idempotency key.  The attempts before the replay are kept
-- in hookinbox.action_history (step replay, with -v reason=...).
-- An action whose payload was purged is not replayed (it is reported).
-- The dry run lists the chosen actions with their last outcome.  A blind
-- resend is refused unless -v blind=1 is given too: an action whose last
-- outcome is unknown (sent, then no answer: the downstream may have done
-- it) and whose first attempt is more than 24 hours old, when the
-- downstream may have forgotten the key and would act a second time.
-- Check with the downstream first (a route with reconcile_url asks it).
--
-- The lifecycle of an action: pending (waiting, in flight or retrying) ->
-- done | stale | parked; parked -> pending (replay.sql) | dismissed
-- (dismiss.sql) | resolved (resolve.sql); done or stale -> pending
-- (resend.sql).  Exits non-zero (3) on a usage error.
\set op replay
\set states '{parked}'
\set wants parked
\set needs_reason 0
\set usage_tail 'add -v go=1 to replay them'
\ir choose-actions.inc
\if :{?blind} \else \set blind 0 \endif
select count(*) filter (where strpos(coalesce(a.last_error, ''), 'outcome unknown') > 0
			  and coalesce(a.replayed_at, a.created_at) < now() - interval '24 hours') as blind_n
  from hookinbox.action a where a.id in (select id from chosen_actions) \gset
select :go::boolean and :blind_n > 0 and not :blind::boolean as refuse_blind \gset
\if :refuse_blind
\set msg 'replay.sql: ' :blind_n ' of the chosen actions had an unknown last outcome (sent, then no answer) over 24 hours ago: the downstream may have done it and forgotten the key, so a replay may act twice; ask the downstream first, or add -v blind=1 to replay anyway (nothing changed)'
select set_config('hookinbox.msg', :'msg', false) \g /dev/null
do $$ begin raise exception '%', current_setting('hookinbox.msg') using errcode = '22023'; end $$;
\endif
\if :go
begin;
select * from hookinbox.operate_actions(array(select id from chosen_actions), 'replay',
	nullif(:'reason', ''));
commit;
\else
select count(*) as parked_actions_matching from chosen_actions;
select a.id, a.route, a.attempts, a.last_status, left(a.last_error, 100) as last_outcome,
       strpos(coalesce(a.last_error, ''), 'outcome unknown') > 0 as unknown
  from hookinbox.action a where a.id in (select id from chosen_actions)
 order by a.id limit 20;
\echo 'dry run: nothing changed; add -v go=1 to replay them'
\endif
