-- Least-privilege roles, (re)granted on every install run.
--
--   hookinbox_intake  the responder: EXECUTE on accept_batch(), accept() and reject() only
--   hookinbox_worker  the worker: reads the inbox, works the action tables;
--                     cannot alter the schema
--   hookinbox_admin   operators' scripts: everything in the schema
--
-- The roles can log in; give them passwords or map them with pg_hba/peer
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
end
$$;

revoke all on schema hookinbox from public;
revoke all on all tables in schema hookinbox from public;
revoke all on all functions in schema hookinbox from public;
grant usage on schema hookinbox to hookinbox_intake, hookinbox_worker, hookinbox_admin;

grant execute on function hookinbox.accept_batch(text[], text[], text[], text[], text[], text[],
	text[], bigint[], jsonb[], bytea[], boolean[]) to hookinbox_intake;
grant execute on function hookinbox.accept(text, text, text, text, text, text, text, bigint,
	jsonb, bytea, boolean) to hookinbox_intake;
grant execute on function hookinbox.reject(text, text, bigint) to hookinbox_intake;

grant select, update on hookinbox.inbox to hookinbox_worker;
-- the worker's metrics file counts the responders' rejections
grant select on hookinbox.rejection to hookinbox_worker;
grant select, insert, update, delete on all tables in schema hookinbox to hookinbox_admin;
grant execute on all functions in schema hookinbox to hookinbox_worker, hookinbox_admin;
grant usage on all sequences in schema hookinbox to hookinbox_worker, hookinbox_admin;

-- worker tables (migration 002) get their grants in worker_roles.sql
\ir worker_roles.sql
