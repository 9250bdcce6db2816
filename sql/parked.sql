-- List parked actions, newest first (at most 500).
--
--   psql -f sql/parked.sql
--   psql -v route=fulfil -f sql/parked.sql
\set ON_ERROR_STOP 1
\if :{?route}
\else
\set route ''
\endif
select a.id as action_id, a.route, i.endpoint, i.event_id, a.event_type, a.object_id,
       a.attempts, a.last_status, a.last_error, a.response_ref, a.created_at,
       a.updated_at as parked_at
  from hookinbox.action a
  join hookinbox.inbox i on i.id = a.inbox_id
 where a.state = 'parked'
   and (:'route' = '' or a.route = :'route')
 order by a.updated_at desc
 limit 500;
