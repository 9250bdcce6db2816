-- SPDX-License-Identifier: ISC
-- Deliveries held for review, and what an operator decides about them.
--
--   psql -f sql/review.sql                              # list (the default)
--   psql -v release=42 -f sql/review.sql                # deliver it after all
--   psql -v dismiss=42 -f sql/review.sql                # never deliver it
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
\if :{?release}
update hookinbox.inbox set state = 'pending'
 where id = :'release'::bigint and state = 'review'
returning id as released, endpoint, event_id, event_type, review_of;
\elif :{?dismiss}
update hookinbox.inbox set state = 'dismissed'
 where id = :'dismiss'::bigint and state = 'review'
returning id as dismissed, endpoint, event_id, event_type, review_of;
\else
select h.id, h.endpoint, h.event_id, h.event_type, h.review_of,
       f.event_id as first_event_id, f.event_type as first_event_type, f.state as first_state,
       h.received_at
  from hookinbox.inbox h
  left join hookinbox.inbox f on f.id = h.review_of
 where h.state = 'review'
 order by h.id;
\endif
