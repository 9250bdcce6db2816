-- SPDX-License-Identifier: ISC
-- Deliveries held for review, and what an operator decides about them.
--
--   psql -f sql/review.sql                              # list (the default)
--   psql -v release=42 -v go=1 -f sql/review.sql        # deliver it after all
--   psql -v dismiss=42 -v go=1 -f sql/review.sql        # never deliver it
--
-- Without -v go=1 a release or dismiss is a dry run: it shows the row and
-- changes nothing (as every operator script that changes state).  A row
-- that is not held is refused (exit 3), saying which state it is in.
--
-- A delivery is held (inbox state 'review') when its signed content (the
-- body, or what Twilio signs) is that of an earlier delivery of the same
-- endpoint but its unsigned type differs: Shopify sends "orders/create"
-- and "orders/paid" with byte-identical bodies, and a captured body
-- replayed under another topic looks exactly the same.  It was stored and
-- answered 2xx; review_of is the intake id it collides with.  Release
-- makes it pending (the next worker run delivers it); dismiss marks it
-- 'dismissed' (kept until the dedup horizon, so a replay of it is still a
-- duplicate, and never delivered).  Either applies only to a held row.
--
-- Actions (not deliveries) an ordered route could not place, such as two
-- events of one object with the same version, are held in state review of
-- hookinbox.action: sql/order-review.sql lists, releases and dismisses them.
\set ON_ERROR_STOP 1
\if :{?go} \else \set go 0 \endif
\if :{?release}
\set row_id :release
\set step release
\set step_done released
\elif :{?dismiss}
\set row_id :dismiss
\set step dismiss
\set step_done dismissed
\endif
\if :{?row_id}
select coalesce((select 'review.sql: delivery ' || i.id || ' is ' || i.state
		       || ', not held for review: only a held delivery can be released or dismissed'
		  from hookinbox.inbox i where i.id = :'row_id'::bigint and i.state <> 'review'),
		(select 'review.sql: no delivery ' || :'row_id'
		  where not exists (select 1 from hookinbox.inbox i where i.id = :'row_id'::bigint)),
		'') as refusal \gset
select :'refusal' <> '' as refused, :'go'::boolean as go \gset
\if :refused
select set_config('hookinbox.msg', :'refusal', false) \g /dev/null
do $$ begin raise exception '%', current_setting('hookinbox.msg') using errcode = '22023'; end $$;
\endif
\if :go
update hookinbox.inbox set state = case :'step' when 'release' then 'pending' else 'dismissed' end
 where id = :'row_id'::bigint and state = 'review'
returning id as :step_done, endpoint, event_id, event_type, review_of;
\else
select id, endpoint, event_id, event_type, review_of from hookinbox.inbox
 where id = :'row_id'::bigint;
\echo 'dry run: nothing changed; add -v go=1 to' :step 'it'
\endif
\else
select h.id, h.endpoint, h.event_id, h.event_type, h.review_of,
       f.event_id as first_event_id, f.event_type as first_event_type, f.state as first_state,
       h.received_at
  from hookinbox.inbox h
  left join hookinbox.inbox f on f.id = h.review_of
 where h.state = 'review'
 order by h.id;
\endif
