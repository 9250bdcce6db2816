-- SPDX-License-Identifier: ISC
-- Dismiss parked actions: the action needs no delivery (e.g. the order was cancelled).
--
--   psql -v action_id=42 -v reason='...' -f sql/dismiss.sql            (dry run: counts)
--   psql -v action_id=42 -v reason='...' -v go=1 -f sql/dismiss.sql    (dismissed)
--   psql -v route=fulfil -v error='status 410' -v reason='...' -v go=1 -f sql/dismiss.sql
--
-- Selects parked actions as replay.sql does (action_id, route, endpoint,
-- error, since, until; at least one) and needs -v reason=TEXT.  Without
-- -v go=1 it only says how many match.  With it, each becomes dismissed: a
-- final state, kept with its reason (sql/parked.sql -v state=dismissed
-- shows it, who did it and when) and purged like a done action after the
-- dedup horizon.  The step is kept in hookinbox.action_history.
-- Exits non-zero (3) on a usage error.
\set op dismiss
\ir close-parked.inc
