-- SPDX-License-Identifier: ISC
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
\set op resolve
\ir close-parked.inc
