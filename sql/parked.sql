-- SPDX-License-Identifier: ISC
-- List parked actions (or dismissed / resolved ones), newest first, at most 500.
--
--   psql -f sql/parked.sql
--   psql -v route=fulfil -f sql/parked.sql
--   psql -v state=dismissed -f sql/parked.sql      (dismissed | resolved | all)
--
-- Parked actions wait for an operator: replay.sql, dismiss.sql or
-- resolve.sql.  For each: the event, the attempts and the last status and
-- error, when it was parked, how often it was replayed before, how many
-- later actions of its object it holds (order = sequence: they wait until
-- it is replayed and done, dismissed or resolved); for a
-- dismissed or resolved one also the reason, who and when.  Exits non-zero
-- (3) on an unknown state.
\set ON_ERROR_STOP 1
\if :{?route} \else \set route '' \endif
\if :{?state} \else \set state parked \endif
select :'state' not in ('parked', 'dismissed', 'resolved', 'all') as bad \gset
\if :bad
do $$ begin raise exception 'parked.sql: -v state= must be parked, dismissed, resolved or all' using errcode = '22023'; end $$;
\endif
select a.id as action_id, a.state, a.route, i.endpoint, i.event_id, a.event_type, a.object_id,
       a.attempts, a.last_status, a.last_error, a.response_ref, a.created_at,
       a.updated_at as since,
       (select count(*) from hookinbox.action_history h
         where h.action_id = a.id and h.step = 'replay') as replays,
       case when a.ordered and a.state = 'parked' then
            (select count(*) from hookinbox.action w
              where w.route = a.route and w.object_id = a.object_id and w.sequenced
                and w.state = 'pending' and w.event_version > a.event_version) end as holds,
       a.resolution as reason, h.by_role as by, h.at as closed_at
  from hookinbox.action a
  join hookinbox.inbox i on i.id = a.inbox_id
  left join lateral (select h.by_role, h.at from hookinbox.action_history h
                      where h.action_id = a.id and h.step in ('dismiss', 'resolve')
                      order by h.id desc limit 1) h on a.state in ('dismissed', 'resolved')
 where (a.state = :'state' or (:'state' = 'all' and a.state in ('parked', 'dismissed', 'resolved')))
   and (:'route' = '' or a.route = :'route')
 order by a.updated_at desc
 limit 500;
