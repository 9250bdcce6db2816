-- Replay parked actions with their original idempotency key.
--
--   psql -v action_id=42 -f sql/replay.sql
--   psql -v route=fulfil -v since='2026-01-01 00:00+00' -f sql/replay.sql
--
-- Sets the chosen parked actions back to pending, due now, with their
-- attempts reset; the next worker run calls them again with the same key.
\set ON_ERROR_STOP 1
\if :{?action_id}
\else
\set action_id ''
\endif
\if :{?route}
\else
\set route ''
\endif
\if :{?since}
\else
\set since ''
\endif
select (:'action_id' = '' and :'route' = '') as missing \gset
\if :missing
\echo 'replay.sql: set -v action_id=N, or -v route=NAME [-v since=TIMESTAMP]'
\quit
\endif
update hookinbox.action
   set state = 'pending', due_at = now(), attempts = 0, lease_token = null,
       lease_until = null, done_at = null, updated_at = now()
 where state = 'parked'
   and (:'action_id' = '' or id = nullif(:'action_id', '')::bigint)
   and (:'route' = '' or route = :'route')
   and (:'since' = '' or updated_at >= nullif(:'since', '')::timestamptz)
returning id as replayed, route, idem_key;
