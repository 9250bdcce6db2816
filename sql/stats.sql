-- Queue health, per endpoint and route.
--
--   psql -f sql/stats.sql
--
-- Counts by state, the age of the oldest pending event (not yet fanned out)
-- and of the oldest due action, the oldest parked action, and the calls
-- retried in the last hour (actions with more than one attempt touched in
-- the last hour).
\set ON_ERROR_STOP 1
\pset footer off

\echo 'inbox by endpoint'
select endpoint,
       count(*) filter (where state = 'pending')    as pending,
       count(*) filter (where state = 'dispatched') as dispatched,
       count(*) filter (where state = 'unrouted')   as unrouted,
       count(*) filter (where body is null)         as body_purged,
       date_trunc('second', now() - min(received_at) filter (where state = 'pending'))
           as oldest_pending_age
  from hookinbox.inbox
 group by endpoint
 order by endpoint;

\echo 'actions by endpoint and route'
select i.endpoint, a.route,
       count(*) filter (where a.state = 'pending')  as pending,
       count(*) filter (where a.state = 'pending' and a.lease_until > now()) as in_flight,
       count(*) filter (where a.state = 'done')     as done,
       count(*) filter (where a.state = 'parked')   as parked,
       count(*) filter (where a.state = 'stale')    as stale,
       date_trunc('second', now() - min(a.created_at) filter (where a.state = 'pending'))
           as oldest_pending_age,
       date_trunc('second', now() - min(a.updated_at) filter (where a.state = 'parked'))
           as oldest_parked_age,
       count(*) filter (where a.attempts > 1 and a.updated_at > now() - interval '1 hour')
           as retried_last_hour
  from hookinbox.action a
  join hookinbox.inbox i on i.id = a.inbox_id
 group by i.endpoint, a.route
 order by i.endpoint, a.route;
