-- SPDX-License-Identifier: ISC
-- 008: order = sequence, and actions held for an operator's decision on order.
--
-- hookinbox.action, new:
--   sequenced  the route has order = sequence: every event of an object is
--              delivered, in version order; a later one waits while an
--              earlier one of the same (route, object) is pending, parked
--              or in review (ordered is true too: both orders use it)
--   state review
--              an ordered route (newest or sequence) cannot place the
--              action: it has no version, its version equals another
--              action's of the same (route, object), or (sequence) a later
--              version was already sent.  Never delivered in arrival order
--              silently: an operator releases it (delivered, outside the
--              order) or dismisses it (sql/order-review.sql); last_error
--              says why it is held.
--   inbox_horizon
--              order = sequence: the newest inbox id when the action was
--              made; while an inbox row up to it is still pending (another
--              worker's fan-out has it: it may be an earlier version of the
--              object), the action waits
-- hookinbox.action_history.step: 'release' (review -> pending).
--
-- The new check constraints are supersets of the old ones; adding them
-- scans the tables once under the migration's lock.
alter table hookinbox.action drop constraint action_state_check;
alter table hookinbox.action add constraint action_state_check
	check (state in ('pending', 'done', 'parked', 'stale', 'dismissed', 'resolved', 'review'));
alter table hookinbox.action add column sequenced boolean not null default false;
alter table hookinbox.action add column inbox_horizon bigint;

alter table hookinbox.action_history drop constraint action_history_step_check;
alter table hookinbox.action_history add constraint action_history_step_check
	check (step in ('replay', 'dismiss', 'resolve', 'resend', 'release'));

-- operators' view of actions held for review (sql/order-review.sql, stats.sql)
create index action_review on hookinbox.action (route, updated_at) where state = 'review';
