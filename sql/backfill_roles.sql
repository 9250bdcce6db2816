-- SPDX-License-Identifier: ISC
-- hookinbox_backfill: the role hookinbox-backfill connects as.
--
-- It may EXECUTE backfill_known() and backfill_store() (SECURITY DEFINER,
-- owned by hookinbox_owner) and nothing else: it reads no body, changes and
-- deletes no row, and cannot call the intake's functions.  It is a role of
-- its own rather than hookinbox_intake because it runs elsewhere (an
-- operator's command, with the provider's API credential) and writes rows
-- no signature vouches for: the responder's role cannot mark a row
-- backfilled, and the backfill's cannot pass as the responder.
do $$
begin
	if not exists (select 1 from pg_roles where rolname = 'hookinbox_backfill') then
		create role hookinbox_backfill login;
	end if;
end
$$;

grant usage on schema hookinbox to hookinbox_backfill;
alter function hookinbox.backfill_known(text, text, text, text[]) owner to hookinbox_owner;
alter function hookinbox.backfill_store(text, text, text, text, text, text, text, bigint,
	jsonb, bytea, text) owner to hookinbox_owner;
alter function hookinbox.backfill_known(text, text, text, text, text[]) owner to hookinbox_owner;
alter function hookinbox.backfill_store(text, text, text, text, text, text, text, bigint,
	jsonb, bytea, text, boolean) owner to hookinbox_owner;
-- backfilled_at is set by backfill_store() on the row accept_batch() stored
grant update (backfilled_at) on hookinbox.inbox to hookinbox_owner;
grant execute on function hookinbox.backfill_known(text, text, text, text[]),
	hookinbox.backfill_store(text, text, text, text, text, text, text, bigint, jsonb, bytea, text),
	hookinbox.backfill_known(text, text, text, text, text[]),
	hookinbox.backfill_store(text, text, text, text, text, text, text, bigint, jsonb, bytea, text,
		boolean)
	to hookinbox_backfill;
-- roles.sql grants the worker every function of the schema: not these (a
-- worker that could call backfill_store could add inbox rows)
revoke execute on function hookinbox.backfill_known(text, text, text, text[]),
	hookinbox.backfill_store(text, text, text, text, text, text, text, bigint, jsonb, bytea, text),
	hookinbox.backfill_known(text, text, text, text, text[]),
	hookinbox.backfill_store(text, text, text, text, text, text, text, bigint, jsonb, bytea, text,
		boolean)
	from hookinbox_worker;
