-- SPDX-License-Identifier: ISC
-- Retention: bodies after the payload horizon, events after the longer
-- dedup horizon; only finished work is touched.
--
--   psql -v payload_days=7 -v dedup_days=30 -f sql/purge.sql
--   psql -v payload_days=7 -v dedup_days=30 -v quiet=1 -f sql/purge.sql   (cron)
--
-- One run purges everything due, in batches (-v batch=N, default 5000 rows)
-- each committed on its own, so it never holds long locks and keeps up at
-- any volume; it prints this run's counts (nothing with -v quiet=1, so
-- that cron mails only errors).  See hookinbox.purge() in
-- worker_purge.sql for the rules:
--   - an event is finished when its inbox row is dispatched or unrouted and
--     none of its actions is pending (waiting, in flight, retrying) or
--     parked; pending rows, parked actions (until replayed, dismissed or
--     resolved) and inbox states this version does not know (an intake's
--     review) are never stripped nor deleted;
--   - finished events older than payload_days lose their body and headers;
--     the row stays, so a late redelivery is still answered as a duplicate;
--   - finished events older than dedup_days are deleted with their actions,
--     history and collapse records; so are deliveries dismissed in review
--     (sql/review.sql); rejection counts of those hours are folded into one
--     total per endpoint and reason, so the exported counters never go down.
-- The delivery keys are the replay defence while the rows last; a deleted
-- row leaves its signed identity (no payload) in hookinbox.ledger, so a
-- captured delivery of it is answered as a duplicate, stores nothing, until
-- ledger_days after it was received (-v ledger_days=N, default 400, at least
-- dedup_days); then the entry is deleted and such a replay would be stored
-- again.  Rows deleted before the ledger existed are not in it.  So
-- dedup_days may still not be shorter than the replay horizon of any provider
-- with rows in the inbox: how long it retries or lets a delivery be
-- re-sent (stripe 3 days, paddle 3, github 3, hmac 3, square 3,
-- shopify 2, standard 2, svix 2, gitlab 2, slack 1, twilio 1, adyen 30,
-- sendgrid 1, hubspot 1, mailgun 1; docusign 15, braintree 1, trello 1, mandrill 1, twitter 1, dropbox 1,
-- asana 1, twitch 1, xero 1, plaid 1, pubsub 7 (the subscription's
-- default retention), paypal 3, sns 1, apple 7, graph 1; docs/providers.md).
-- Below that the script refuses (exit 3), unless run with -v force=1.
-- Exits non-zero (3) on a usage error (need 0 <= payload_days <= dedup_days
-- <= ledger_days).
-- Run it as hookinbox_admin, outside a transaction block.
\set ON_ERROR_STOP 1
\if :{?payload_days} \else \set payload_days 7 \endif
\if :{?dedup_days} \else \set dedup_days 30 \endif
\if :{?batch} \else \set batch 5000 \endif
\if :{?quiet} \else \set quiet 0 \endif
\if :{?force} \else \set force 0 \endif
\if :{?ledger_days} \else \set ledger_days 400 \endif
select :'payload_days'::integer < 0 or :'dedup_days'::integer < :'payload_days'::integer
       or :'ledger_days'::integer < :'dedup_days'::integer
       or :'batch'::integer < 1 as bad \gset
\if :bad
do $$ begin raise exception 'purge.sql: need 0 <= payload_days <= dedup_days <= ledger_days, and batch >= 1' using errcode = '22023'; end $$;
\endif

-- the replay horizon of each provider, in days (docs/providers.md)
select coalesce(string_agg(f.provider || ' (' || f.days || ' days)', ', ' order by f.provider), '') as too_short
  from (values ('stripe', 3), ('paddle', 3), ('github', 3), ('hmac', 3), ('shopify', 2),
	       ('standard', 2), ('svix', 2), ('gitlab', 2), ('slack', 1), ('twilio', 1),
	       ('square', 3), ('adyen', 30), ('sendgrid', 1), ('hubspot', 1), ('mailgun', 1),
	       ('docusign', 15), ('braintree', 1), ('trello', 1), ('mandrill', 1), ('twitter', 1),
	       ('dropbox', 1), ('asana', 1), ('twitch', 1), ('xero', 1),
	       ('plaid', 1), ('pubsub', 7), ('paypal', 3), ('sns', 1), ('apple', 7),
	       ('graph', 1), ('adyen_platform', 30), ('linear', 1), ('mux', 1), ('workos', 3),
	       ('razorpay', 1), ('discord', 1), ('zoom', 1), ('telnyx', 3), ('intercom', 3),
	       ('bitbucket', 3), ('typeform', 3), ('calendly', 3), ('woocommerce', 3),
	       ('sentry', 3), ('pagerduty', 3), ('vercel', 3), ('checkout', 3),
	       ('lemonsqueezy', 3), ('notion', 3), ('postmark', 3), ('chargebee', 3), ('box', 3),
	       ('webflow', 3), ('gocardless', 7), ('meta', 7), ('clerk', 2), ('resend', 2),
	       ('okta', 1), ('zendesk', 3)) f(provider, days)
 where f.days > :'dedup_days'::integer
   and exists (select 1 from hookinbox.inbox i where i.provider = f.provider) \gset
select (:'too_short' <> '' and :'force' <> '1') as refuse \gset
\if :refuse
select set_config('hookinbox.purge_refused', 'purge.sql: dedup_days = ' || :'dedup_days'
	|| ' is shorter than the replay horizon of ' || :'too_short'
	|| ': a replayed delivery would be stored again; use -v force=1 to purge anyway', false) \g /dev/null
do $$ begin raise exception '%', current_setting('hookinbox.purge_refused'); end $$;
\endif

call hookinbox.purge(:'payload_days'::integer, :'dedup_days'::integer, :'batch'::integer) \gset

-- deliveries an operator dismissed in review (never delivered, no action)
-- follow the dedup horizon too; a signed body holds few such copies
with gone as (
	delete from hookinbox.inbox i
	 where i.state = 'dismissed'
	   and i.received_at < now() - make_interval(days => :'dedup_days'::integer)
	   and not exists (select 1 from hookinbox.action a where a.inbox_id = i.id)
	returning 1
)
select count(*) as dismissed_deleted from gone \gset

-- the ledger's entries past their horizon (after the rows: a row deleted
-- above leaves an entry that is not yet due)
with gone as (
	delete from hookinbox.ledger l
	 where l.seen < current_date - :'ledger_days'::integer
	returning 1
)
select count(*) as ledger_deleted from gone \gset
\if :quiet
\else
\echo 'purged this run: bodies' :bodies_purged ', events' :events_deleted ', actions' :actions_deleted ', rejection counts' :rejections_deleted 'in' :batches 'batches'
\echo 'purged this run: dismissed deliveries' :dismissed_deleted ', ledger entries' :ledger_deleted
\endif
