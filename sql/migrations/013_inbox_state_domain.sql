-- SPDX-License-Identifier: ISC
-- The inbox's states as a domain instead of a table CHECK constraint.  A
-- table's CHECK constraint is read from the catalog and planned again by
-- every statement that writes the table (a sixth of PostgreSQL's
-- instructions for one delivery in single-row mode, BENCHMARKS.md); a
-- domain's check is planned once per session and kept.  The states and
-- the rule are the same.
--
-- The heap is not rewritten (a domain without a constraint over the same
-- type), but PostgreSQL rebuilds the two partial indexes whose predicate
-- names the column (inbox_pending, inbox_review): one scan of the inbox
-- under the install's lock (300,000 rows with 500-byte bodies in 0.25 s on
-- the bench's machine).  The constraint is added NOT VALID, so that no second scan
-- checks what every row already passed; every new or changed value is
-- checked.
alter table hookinbox.inbox drop constraint inbox_state_check;
create domain hookinbox.inbox_state as text;
alter table hookinbox.inbox alter column state type hookinbox.inbox_state;
alter domain hookinbox.inbox_state add constraint inbox_state_check
	check (value in ('pending', 'dispatched', 'unrouted', 'review', 'dismissed')) not valid;
