-- SPDX-License-Identifier: ISC
-- Queue health, per endpoint and route: the picture the worker's metrics
-- file and --health-check give, for someone with only psql.
--
--   psql -f sql/stats.sql
--
-- Counts by state (pending, in flight, done, parked, stale, retrying,
-- dismissed, resolved, review: held because an ordered route cannot place
-- them; blocked: pending, order = sequence, waiting behind an earlier
-- version of their object; collapsed: events business dedup folded into
-- another event's action), the age of the oldest pending event (not yet fanned out)
-- and of the oldest pending action (since it was made: retries included),
-- the oldest parked action (since it was parked), and the actions retried
-- in the last hour (more than one attempt, touched in the last hour).
-- backfilled: inbox rows hookinbox-backfill stored from the provider's API.
-- While hosts run different routes: the events fanned out meanwhile, by
-- the configurations (routes fingerprints) that saw them so far.
--
-- Cost: the two tables are read in full (done and dispatched rows
-- included), so on a large database run it by hand, not from monitoring
-- every few seconds; the worker's metrics and health check read only the
-- partial indexes of pending and parked rows.
\set ON_ERROR_STOP 1
\pset footer off

\echo 'inbox by endpoint'
select endpoint,
       count(*) filter (where state = 'pending')    as pending,
       count(*) filter (where state = 'dispatched') as dispatched,
       count(*) filter (where state = 'unrouted')   as unrouted,
       count(*) filter (where state = 'review')     as held_for_review,
       count(*) filter (where received_at > now() - interval '1 hour') as accepted_last_hour,
       count(*) filter (where body is null)         as body_purged,
       count(*) filter (where backfilled_at is not null) as backfilled,
       date_trunc('second', now() - min(received_at) filter (where state = 'pending'))
           as oldest_pending_age
  from hookinbox.inbox
 group by endpoint
 order by endpoint;

\echo 'hosts running different routes: events fanned out meanwhile, by the configurations that saw them (a worker of each other configuration adds its missing route actions)'
select t.fingerprints as seen_by, count(*) as events,
       date_trunc('second', now() - min(t.created_at)) as oldest_age
  from hookinbox.route_topup t
 group by t.fingerprints
 order by min(t.created_at);

\echo 'actions by endpoint and route'
select i.endpoint, a.route,
       count(*) filter (where a.state = 'pending')  as pending,
       count(*) filter (where a.state = 'pending' and a.lease_until > now()) as in_flight,
       count(*) filter (where a.state = 'done')     as done,
       count(*) filter (where a.state = 'parked')   as parked,
       count(*) filter (where a.state = 'stale')    as stale,
       count(*) filter (where a.state = 'pending' and a.attempts > 0) as retrying,
       date_trunc('second', now() - min(a.created_at) filter (where a.state = 'pending'))
           as oldest_pending_age,
       date_trunc('second', now() - min(a.updated_at) filter (where a.state = 'parked'))
           as oldest_parked_age,
       count(*) filter (where a.attempts > 1 and a.updated_at > now() - interval '1 hour')
           as retried_last_hour,
       count(*) filter (where a.state = 'dismissed') as dismissed,
       count(*) filter (where a.state = 'resolved')  as resolved,
       count(*) filter (where a.state = 'review')    as review,
       count(*) filter (where a.state = 'pending' and a.sequenced and exists (
           select 1 from hookinbox.action e
            where e.route = a.route and e.object_id = a.object_id and e.ordered
              and e.event_version < a.event_version
              and e.state in ('pending', 'parked', 'review'))) as blocked,
       (select count(*) from hookinbox.action_collapse c where c.route = a.route
          and c.inbox_id in (select id from hookinbox.inbox where endpoint = i.endpoint))
           as collapsed
  from hookinbox.action a
  join hookinbox.inbox i on i.id = a.inbox_id
 group by i.endpoint, a.route
 order by i.endpoint, a.route;

\echo 'routes paused, held (429, Retry-After) or with an open circuit breaker (sql/route.sql)'
select route, paused, breaker,
       case when hold_until > now() then date_trunc('second', hold_until - now()) end as held_for,
       reason, updated_at
  from hookinbox.route_state
 where paused or breaker <> 'closed' or hold_until > now()
 order by route;

\echo 'objects held (order = sequence): the earliest unfinished action of an object, and what waits behind it'
select b.route, b.object_id, b.id as held_by_action, b.state as held_by_state,
       b.event_version as held_at_version, w.waiting, w.next_version, b.last_error,
       case b.state when 'parked' then 'replay.sql, dismiss.sql or resolve.sql'
                    when 'review' then 'order-review.sql'
                    else 'retrying: waits for its outcome' end as resolve_with
  from hookinbox.action b
  join lateral (select count(*) as waiting, min(w.event_version) as next_version
                  from hookinbox.action w
                 where w.route = b.route and w.object_id = b.object_id and w.sequenced
                   and w.state = 'pending' and w.event_version > b.event_version) w
    on w.waiting > 0
 where b.ordered and b.state in ('pending', 'parked', 'review')
   and not exists (select 1 from hookinbox.action e
                    where e.route = b.route and e.object_id = b.object_id and e.ordered
                      and e.event_version < b.event_version
                      and e.state in ('pending', 'parked', 'review'))
 order by b.route, b.object_id, b.event_version, b.id;

\echo 'refused and not stored (503: storage unavailable), last 24 hours, by endpoint and reason'
select endpoint, reason, sum(count) as requests, max(hour) as last_hour
  from hookinbox.rejection
 where hour > now() - interval '24 hours' and reason <> 'duplicate'
 group by endpoint, reason
 order by endpoint, requests desc, reason;

\echo 'duplicates answered (200 with the stored delivery''s id, nothing stored), last 24 hours, by endpoint'
select endpoint, sum(count) as duplicates, max(hour) as last_hour
  from hookinbox.rejection
 where hour > now() - interval '24 hours' and reason = 'duplicate'
 group by endpoint
 order by endpoint;

\echo 'oldest (what hookinbox-worker --health-check compares with its thresholds)'
select date_trunc('second', now() - (select min(received_at) from hookinbox.inbox
                                      where state = 'pending')) as oldest_pending_event_age,
       date_trunc('second', now() - (select min(created_at) from hookinbox.action
                                      where state = 'pending')) as oldest_pending_action_age,
       date_trunc('second', now() - (select min(updated_at) from hookinbox.action
                                      where state = 'parked')) as oldest_parked_action_age;
