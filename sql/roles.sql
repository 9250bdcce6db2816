-- SPDX-License-Identifier: ISC
-- Least-privilege roles, (re)granted on every install run.
--
--   hookinbox_intake  the responder: EXECUTE on accept_batch(), accept_one(), accept(),
--                     reject() and count_requests() (request_metrics.sql) only
--   hookinbox_worker  the worker: reads the inbox and writes only its state and
--                     dispatched_at, works the action tables; cannot call the
--                     intake's functions nor alter the schema
--   hookinbox_backfill  hookinbox-backfill: EXECUTE on backfill_known() and
--                     backfill_store() only (backfill_roles.sql)
--   hookinbox_admin   operators' scripts: everything in the schema
--   hookinbox_owner   NOLOGIN: owns the SECURITY DEFINER functions, with only
--                     what they need (insert and read the inbox, count
--                     rejections), so that they do not run as the superuser
--                     who installed them
--
-- The login roles can log in; give them passwords or map them with pg_hba/peer
-- as your site does.  Roles are cluster-wide, so they are created only if
-- missing.
do $$
begin
	if not exists (select 1 from pg_roles where rolname = 'hookinbox_intake') then
		create role hookinbox_intake login;
	end if;
	if not exists (select 1 from pg_roles where rolname = 'hookinbox_worker') then
		create role hookinbox_worker login;
	end if;
	if not exists (select 1 from pg_roles where rolname = 'hookinbox_admin') then
		create role hookinbox_admin login;
	end if;
	if not exists (select 1 from pg_roles where rolname = 'hookinbox_owner') then
		create role hookinbox_owner nologin;
	end if;
end
$$;

-- The responder sets this on its own session too; the role setting covers a
-- pooler in transaction mode, where a session setting stays with whichever
-- server connection ran it (docs/scaling.md).
alter role hookinbox_intake set synchronous_commit = on;

revoke all on schema hookinbox from public;
revoke all on all tables in schema hookinbox from public;
revoke all on all functions in schema hookinbox from public;
grant usage on schema hookinbox to hookinbox_intake, hookinbox_worker, hookinbox_admin;

-- the SECURITY DEFINER functions run as hookinbox_owner
grant usage on schema hookinbox to hookinbox_owner;
grant select, insert on hookinbox.inbox to hookinbox_owner;
grant select, insert, update on hookinbox.rejection to hookinbox_owner;
-- the ledger: written by the inbox's delete trigger, read before storing
grant select, insert, update on hookinbox.ledger to hookinbox_owner;
alter function hookinbox.ledger_remember() owner to hookinbox_owner;
grant execute on function hookinbox.key_digest(text, text, text, text),
	hookinbox.held_digest(bytea, text),
	hookinbox.ledger_first(text, text, text, text, text, text, boolean, bytea) to hookinbox_owner;
alter function hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[], bytea[], text[]) owner to hookinbox_owner;
alter function hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[]) owner to hookinbox_owner;
alter function hookinbox.accept_one(text, text, text, text, text, text, text, bigint,
	jsonb, bytea, boolean, bytea, text) owner to hookinbox_owner;
alter function hookinbox.reject(text, text, bigint) owner to hookinbox_owner;

grant execute on function hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[], bytea[], text[]) to hookinbox_intake;
grant execute on function hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[]) to hookinbox_intake;
grant execute on function hookinbox.accept_one(text, text, text, text, text, text, text, bigint,
	jsonb, bytea, boolean, bytea, text) to hookinbox_intake;
grant execute on function hookinbox.accept(text, text, text, text, text, text, text, bigint,
	jsonb, bytea, boolean) to hookinbox_intake;
grant execute on function hookinbox.reject(text, text, bigint) to hookinbox_intake;

-- the worker writes only the dispatch state of an inbox row, never its body
revoke update on hookinbox.inbox from hookinbox_worker;
grant select on hookinbox.inbox to hookinbox_worker;
grant update (state, dispatched_at) on hookinbox.inbox to hookinbox_worker;
-- the worker's metrics file counts the responders' rejections
grant select on hookinbox.rejection to hookinbox_worker;
grant select, insert, update, delete on all tables in schema hookinbox to hookinbox_admin;
grant execute on all functions in schema hookinbox to hookinbox_worker, hookinbox_admin;
-- the intake's functions are the responder's alone: a worker that could call
-- them could forge an inbox row
revoke execute on function hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[], bytea[], text[]),
	hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[]),
	hookinbox.accept_one(text, text, text, text, text, text, text, bigint, jsonb, bytea, boolean,
	bytea, text),
	hookinbox.accept(text, text, text, text, text, text, text, bigint, jsonb, bytea, boolean),
	hookinbox.reject(text, text, bigint)
	from hookinbox_worker;
grant usage on all sequences in schema hookinbox to hookinbox_worker, hookinbox_admin;

-- worker tables (migration 002) get their grants in worker_roles.sql
\ir worker_roles.sql
-- and the backfill's role, in backfill_roles.sql
\ir backfill_roles.sql
-- the responders' request-duration histogram: its function and grants
\ir request_metrics.sql
