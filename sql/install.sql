-- SPDX-License-Identifier: ISC
-- hookinbox schema: install or upgrade, idempotently.
--
--   psql -v ON_ERROR_STOP=1 -f sql/install.sql  [dbname]
--
-- Each migration runs once, in order, inside one transaction, and is
-- recorded in hookinbox.schema_migrations; running this file twice changes
-- nothing.  An advisory lock keeps two concurrent installs apart.
\set ON_ERROR_STOP 1
\set QUIET 1
set client_min_messages = warning;
begin;
select pg_advisory_xact_lock(7262737);   -- "hookinbox install"
create schema if not exists hookinbox;
create table if not exists hookinbox.schema_migrations (
	version    integer primary key,
	name       text not null,
	applied_at timestamptz not null default now()
);

select not exists (select 1 from hookinbox.schema_migrations where version = 1) as apply \gset
\if :apply
\ir migrations/001_intake.sql
insert into hookinbox.schema_migrations (version, name) values (1, 'intake');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 2) as apply \gset
\if :apply
\ir migrations/002_worker.sql
insert into hookinbox.schema_migrations (version, name) values (2, 'worker');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 3) as apply \gset
\if :apply
\ir migrations/003_storage.sql
insert into hookinbox.schema_migrations (version, name) values (3, 'storage');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 4) as apply \gset
\if :apply
\ir migrations/004_review.sql
insert into hookinbox.schema_migrations (version, name) values (4, 'review');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 5) as apply \gset
\if :apply
\ir migrations/005_lifecycle.sql
insert into hookinbox.schema_migrations (version, name) values (5, 'lifecycle');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 6) as apply \gset
\if :apply
\ir migrations/006_routes.sql
insert into hookinbox.schema_migrations (version, name) values (6, 'routes');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 7) as apply \gset
\if :apply
\ir migrations/007_backfill.sql
insert into hookinbox.schema_migrations (version, name) values (7, 'backfill');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 8) as apply \gset
\if :apply
\ir migrations/008_sequence.sql
insert into hookinbox.schema_migrations (version, name) values (8, 'sequence');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 9) as apply \gset
\if :apply
\ir migrations/009_delivery_key_owner.sql
insert into hookinbox.schema_migrations (version, name) values (9, 'delivery_key_owner');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 10) as apply \gset
\if :apply
\ir migrations/010_signed_ledger.sql
insert into hookinbox.schema_migrations (version, name) values (10, 'signed_ledger');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 11) as apply \gset
\if :apply
\ir migrations/011_route_topup.sql
insert into hookinbox.schema_migrations (version, name) values (11, 'route_topup');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 12) as apply \gset
\if :apply
\ir migrations/012_request_duration.sql
insert into hookinbox.schema_migrations (version, name) values (12, 'request_duration');
\endif

select not exists (select 1 from hookinbox.schema_migrations where version = 13) as apply \gset
\if :apply
\ir migrations/013_inbox_state_domain.sql
insert into hookinbox.schema_migrations (version, name) values (13, 'inbox_state_domain');
\endif

-- Functions and grants are (re)created on every run, so that fixes to them
-- reach existing installations without a new migration.
\ir functions.sql
\ir worker_fanout.sql
\ir worker_claim.sql
\ir worker_routes.sql
\ir worker_operator.sql
\ir worker_purge.sql
\ir backfill_functions.sql
\ir roles.sql
commit;
select 'hookinbox schema at version ' || max(version) as status from hookinbox.schema_migrations;
