-- Retention: bodies after the payload horizon, delivery keys after the
-- longer dedup horizon.
--
--   psql -v payload_days=7 -v dedup_days=30 -f sql/purge.sql
--
-- 1. Bodies of inbox rows older than payload_days are set to NULL once all
--    their actions are finished (done, parked or stale) and none is
--    pending.  The row stays, so a late redelivery of that event is still
--    answered as a duplicate.
-- 2. Inbox rows older than dedup_days are deleted with their finished
--    actions; a row with a pending action is kept.  Old rejection counts go
--    too.  dedup_days must not be shorter than payload_days.
--
-- The delivery keys are the replay defence: once a row is deleted, a
-- captured delivery (or a late retry) of that event is stored again.  So
-- dedup_days may not be shorter than the replay horizon of any provider
-- with rows in the inbox: how long it retries or lets a delivery be
-- re-sent (stripe 3 days, paddle 3, github 3, hmac 3, square 3,
-- shopify 2, standard 2, svix 2, gitlab 2, slack 1, twilio 1;
-- docs/providers.md).
-- Below that the script refuses, unless run with -v force=1.
-- Runs in batches of 10,000 rows per statement; run it again if it reports
-- a full batch.
\set ON_ERROR_STOP 1
\if :{?payload_days}
\else
\set payload_days 7
\endif
\if :{?dedup_days}
\else
\set dedup_days 30
\endif
\if :{?force}
\else
\set force 0
\endif
select (:'payload_days'::integer < 0 or :'dedup_days'::integer < :'payload_days'::integer) as bad \gset
\if :bad
\echo 'purge.sql: need 0 <= payload_days <= dedup_days'
\quit
\endif

-- the replay horizon of each provider, in days (docs/providers.md)
select coalesce(string_agg(f.provider || ' (' || f.days || ' days)', ', ' order by f.provider), '') as too_short
  from (values ('stripe', 3), ('paddle', 3), ('github', 3), ('hmac', 3), ('shopify', 2),
	       ('standard', 2), ('svix', 2), ('gitlab', 2), ('slack', 1), ('twilio', 1),
	       ('square', 3)) f(provider, days)
 where f.days > :'dedup_days'::integer
   and exists (select 1 from hookinbox.inbox i where i.provider = f.provider) \gset
select (:'too_short' <> '' and :'force' <> '1') as refuse \gset
\if :refuse
select set_config('hookinbox.purge_refused', 'purge.sql: dedup_days = ' || :'dedup_days'
	|| ' is shorter than the replay horizon of ' || :'too_short'
	|| ': a replayed delivery would be stored again; use -v force=1 to purge anyway', false) \g /dev/null
do $$ begin raise exception '%', current_setting('hookinbox.purge_refused'); end $$;
\endif

begin;
with old as (
	select i.id
	  from hookinbox.inbox i
	 where i.received_at < now() - make_interval(days => :'payload_days'::integer)
	   and i.body is not null
	   and i.state not in ('pending', 'review')
	   and not exists (select 1 from hookinbox.action a
			    where a.inbox_id = i.id and a.state = 'pending')
	 limit 10000
	   for update skip locked
)
update hookinbox.inbox i set body = null, headers = '{}'
  from old where i.id = old.id;
\echo 'bodies purged (payload horizon)'
select count(*) as bodies_purged_total from hookinbox.inbox where body is null;

with old as (
	select i.id
	  from hookinbox.inbox i
	 where i.received_at < now() - make_interval(days => :'dedup_days'::integer)
	   and i.state not in ('pending', 'review')
	   and not exists (select 1 from hookinbox.action a
			    where a.inbox_id = i.id and a.state = 'pending')
	 limit 10000
	   for update skip locked
), gone_actions as (
	delete from hookinbox.action a using old where a.inbox_id = old.id
	returning a.id
), gone as (
	delete from hookinbox.inbox i using old where i.id = old.id
	returning i.id
)
select (select count(*) from gone) as inbox_rows_deleted,
       (select count(*) from gone_actions) as actions_deleted;

delete from hookinbox.rejection
 where hour < now() - make_interval(days => :'dedup_days'::integer);
commit;
