-- SPDX-License-Identifier: ISC
-- Actions an ordered route (order = newest or sequence) could not place,
-- and what an operator decides about them.
--
--   psql -f sql/order-review.sql [-v route=R]                      (list)
--   psql -v action_id=42 -v do=release -f sql/order-review.sql     (dry run: counts)
--   psql -v action_id=42 -v do=release -v go=1 -f sql/order-review.sql
--   psql -v route=R -v object=in_1 -v do=dismiss -v reason='...' -v go=1 -f sql/order-review.sql
--
-- An action goes to state review, instead of being delivered in the order
-- it happened to arrive in, when its event has no version, when its
-- version equals that of another action of the same route and object
-- (Stripe's "created" counts seconds: two events of one object within a
-- second), or (order = sequence) when a later version of its object was
-- sent before it arrived.  last_error says which.  On order = sequence a
-- held action with a version holds the later versions of its object.
--
--   release  deliver it after all, outside its object's order (the
--            operator says the order does not matter here, or has
--            decided): pending, due now, attempts from 0; it no longer
--            holds anything
--   dismiss  never deliver it (needs -v reason=TEXT): final, kept with
--            its reason (sql/parked.sql -v state=dismissed shows it)
--
-- Choose actions with -v action_id=N, or any of -v route=R, -v object=O,
-- -v endpoint=E; without -v go=1 it only says how many match.  Each step is
-- kept in hookinbox.action_history (release, dismiss).  Exits non-zero (3)
-- on a usage error.
\set ON_ERROR_STOP 1
\if :{?action_id} \else \set action_id '' \endif
\if :{?route} \else \set route '' \endif
\if :{?object} \else \set object '' \endif
\if :{?endpoint} \else \set endpoint '' \endif
\if :{?do} \else \set do '' \endif
\if :{?reason} \else \set reason '' \endif
\if :{?go} \else \set go 0 \endif
select :'do' <> '' and (:'do' not in ('release', 'dismiss')
        or (:'action_id' = '' and :'route' = '' and :'object' = '' and :'endpoint' = '')
        or (:'do' = 'dismiss' and btrim(:'reason') = '')) as bad \gset
\if :bad
do $$ begin raise exception 'order-review.sql: -v do=release or -v do=dismiss (with -v reason=TEXT), on actions chosen with -v action_id=N or any of -v route=R, -v object=O, -v endpoint=E; add -v go=1 to apply' using errcode = '22023'; end $$;
\endif
create temporary table review_chosen as
select a.id
  from hookinbox.action a
  join hookinbox.inbox i on i.id = a.inbox_id
 where a.state = 'review'
   and (:'action_id' = '' or a.id = nullif(:'action_id', '')::bigint)
   and (:'route' = '' or a.route = :'route')
   and (:'object' = '' or a.object_id = :'object')
   and (:'endpoint' = '' or i.endpoint = :'endpoint');
select :'do' = '' as listing \gset
\if :listing
select a.id as action_id, a.route, i.endpoint, i.event_id, a.event_type, a.object_id,
       a.event_version as version, a.last_error as why, a.updated_at as since,
       case when a.sequenced and a.event_version is not null then
            (select count(*) from hookinbox.action w
              where w.route = a.route and w.object_id = a.object_id and w.sequenced
                and w.state = 'pending' and w.event_version > a.event_version) end as holds
  from review_chosen c
  join hookinbox.action a on a.id = c.id
  join hookinbox.inbox i on i.id = a.inbox_id
 order by a.route, a.object_id, a.event_version, a.id
 limit 500;
\elif :go
begin;
select * from hookinbox.operate_actions(array(select id from review_chosen), :'do',
	nullif(btrim(:'reason'), ''));
commit;
\else
select count(*) as review_actions_matching from review_chosen;
\echo 'dry run: nothing changed; add -v go=1 to apply'
\endif
