# SPDX-License-Identifier: ISC
# Least privilege, checked against a real cluster: the responder's role
# (hookinbox_intake) can only call accept_batch(), accept_one(), accept() and reject(); the worker's
# role (hookinbox_worker) cannot change the schema.  Each statement is run
# with psql as that role; psql_raw dies on an SQL error.
use strict;
use warnings;
use Test::More;
use HookTest;

my $t = HookTest->new(no_lighttpd => 1);
my $pg = $t->pg;

# run sql as role; returns (ok, output or error)
sub as_role {
	my ($role, $sql) = @_;
	my $out = eval { $pg->psql_raw('hookinbox', $role, $sql) };
	return (1, $out) if defined $out;
	return (0, $@);
}

sub refused {
	my ($role, $sql, $what) = @_;
	my ($ok, $out) = as_role($role, $sql);
	ok(!$ok, "$role cannot $what");
	like($out, qr/permission denied|must be owner|must be a member/i, "$role: $what refused by privileges")
		unless $ok;
}

sub allowed {
	my ($role, $sql, $what) = @_;
	my ($ok, $out) = as_role($role, $sql);
	ok($ok, "$role can $what") or diag($out);
	return $out;
}

# a delivery to read and to work on
my $accept = q{select id from hookinbox.accept('ep', 'stripe', 'acct', 'live', 'evt_priv', 'invoice.paid',
	'in_1', 1, '{}'::jsonb, convert_to('{"secret":"body"}', 'UTF8'), false)};

# ---- hookinbox_intake
my $id = allowed('hookinbox_intake', $accept, 'call accept()');
like($id // '', qr/^\d+$/, 'accept() as hookinbox_intake returns an id');
allowed('hookinbox_intake', q{select hookinbox.reject('ep', 'signature mismatch', 1)}, 'call reject()');

refused('hookinbox_intake', 'select body from hookinbox.inbox', 'select bodies from hookinbox.inbox');
refused('hookinbox_intake', 'select count(*) from hookinbox.inbox', 'count hookinbox.inbox');
refused('hookinbox_intake', "update hookinbox.inbox set state = 'dispatched'", 'update hookinbox.inbox');
refused('hookinbox_intake', 'delete from hookinbox.inbox', 'delete from hookinbox.inbox');
refused('hookinbox_intake', "update hookinbox.action set state = 'done'", 'update hookinbox.action');
refused('hookinbox_intake', 'select * from hookinbox.action', 'select from hookinbox.action');
refused('hookinbox_intake', 'select * from hookinbox.rejection', 'select from hookinbox.rejection');
refused('hookinbox_intake', 'create table hookinbox.mine (x int)', 'create tables in schema hookinbox');
refused('hookinbox_intake', 'create function hookinbox.f() returns int language sql as $$select 1$$',
	'create functions in schema hookinbox');
refused('hookinbox_intake', 'create schema intake_own', 'create a schema');

# every table, sequence and function of the schema, as the catalogue sees it
is($pg->sql(q{select coalesce(string_agg(c.relname || ':' || p, ',' order by c.relname), '')
	from pg_class c join pg_namespace n on n.oid = c.relnamespace,
	unnest(array['select','insert','update','delete','truncate','references','trigger']) p
	where n.nspname = 'hookinbox' and c.relkind in ('r','p','v','m')
	and has_table_privilege('hookinbox_intake', c.oid, p)}), '',
	'hookinbox_intake holds no privilege on any table of the schema');
is($pg->sql(q{select coalesce(string_agg(c.relname, ','), '') from pg_class c
	join pg_namespace n on n.oid = c.relnamespace
	where n.nspname = 'hookinbox' and c.relkind = 'S'
	and (has_sequence_privilege('hookinbox_intake', c.oid, 'usage')
	  or has_sequence_privilege('hookinbox_intake', c.oid, 'update'))}), '',
	'hookinbox_intake holds no privilege on any sequence');
is($pg->sql(q{select coalesce(string_agg(p.proname, ',' order by p.proname), '') from pg_proc p
	join pg_namespace n on n.oid = p.pronamespace
	where n.nspname = 'hookinbox' and p.proname not in ('accept_batch', 'accept_one', 'accept', 'reject', 'count_requests')
	and has_function_privilege('hookinbox_intake', p.oid, 'execute')}), '',
	'hookinbox_intake can execute no function but accept_batch(), accept_one(), accept(), reject() and count_requests()');
is($pg->sql(q{select has_schema_privilege('hookinbox_intake', 'hookinbox', 'create')::text
	|| has_database_privilege('hookinbox_intake', current_database(), 'create')::text}), 'falsefalse',
	'hookinbox_intake: no CREATE on the schema or the database');
is($pg->sql(q{select rolsuper::text || rolcreaterole::text || rolcreatedb::text || rolbypassrls::text
	from pg_roles where rolname = 'hookinbox_intake'}), 'falsefalsefalsefalse',
	'hookinbox_intake: not superuser, no CREATEROLE/CREATEDB/BYPASSRLS');

# ---- hookinbox_worker
allowed('hookinbox_worker', 'select count(*) from hookinbox.inbox', 'read the inbox');
refused('hookinbox_worker', 'create table hookinbox.mine (x int)', 'create tables in schema hookinbox');
refused('hookinbox_worker', 'alter table hookinbox.inbox add column x int', 'alter table hookinbox.inbox');
refused('hookinbox_worker', 'alter table hookinbox.action drop column state', 'alter table hookinbox.action');
refused('hookinbox_worker', 'drop table hookinbox.inbox', 'drop table hookinbox.inbox');
refused('hookinbox_worker', 'drop table hookinbox.action', 'drop table hookinbox.action');
refused('hookinbox_worker', 'truncate hookinbox.inbox', 'truncate hookinbox.inbox');
refused('hookinbox_worker', 'delete from hookinbox.inbox', 'delete from hookinbox.inbox');
refused('hookinbox_worker', 'drop schema hookinbox cascade', 'drop the schema');
refused('hookinbox_worker', 'create index on hookinbox.inbox (event_type)', 'create an index');
refused('hookinbox_worker', 'create or replace function hookinbox.accept() returns int language sql as $$select 1$$',
	'create or replace functions');
refused('hookinbox_worker', 'alter function hookinbox.accept(text, text, text, text, text, text, text, bigint, jsonb, bytea, boolean) owner to hookinbox_worker',
	'take over accept()');
is($pg->sql(q{select has_schema_privilege('hookinbox_worker', 'hookinbox', 'create')::text
	|| has_database_privilege('hookinbox_worker', current_database(), 'create')::text}), 'falsefalse',
	'hookinbox_worker: no CREATE on the schema or the database');
is($pg->sql(q{select coalesce(string_agg(c.relname, ','), '') from pg_class c
	join pg_namespace n on n.oid = c.relnamespace
	where n.nspname = 'hookinbox' and pg_has_role('hookinbox_worker', c.relowner, 'usage')}), '',
	'hookinbox_worker owns nothing in the schema');

# the operators' steps are hookinbox_admin's alone (worker_roles.sql)
my $operators = q{'find_actions', 'operate_actions', 'purge', 'purge_batch', 'reroute_unrouted',
	'reroute_dispatched', 'route_pause', 'route_clear'};
is($pg->sql(qq{select count(distinct p.proname) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
	where n.nspname = 'hookinbox' and p.proname in ($operators)}), 8, 'the operators\' functions exist');
is($pg->sql(qq{select coalesce(string_agg(p.proname, ',' order by p.proname), '') from pg_proc p
	join pg_namespace n on n.oid = p.pronamespace
	where n.nspname = 'hookinbox' and p.proname in ($operators)
	and (has_function_privilege('hookinbox_worker', p.oid, 'execute')
	  or not has_function_privilege('hookinbox_admin', p.oid, 'execute'))}), '',
	'only hookinbox_admin, not hookinbox_worker, can execute the operators\' functions');
refused('hookinbox_worker', q{select hookinbox.purge_batch(0, 9223372036854775807, now(), false, 10)},
	'lock inbox rows for the purge');

# the worker cannot forge or alter what the intake stored
my $batch = q{select * from hookinbox.accept_batch(array['ep'], array['stripe'], array['acct'], array['live'],
	array['evt_forged'], array['t'], array[null]::text[], array[null]::bigint[], array['{}']::jsonb[],
	array['x']::bytea[], array[false], array[null]::bytea[], array[null]::text[])};
refused('hookinbox_worker', $batch, 'execute accept_batch()');
(my $old_batch = $batch) =~ s/, array\[null\]::bytea\[\], array\[null\]::text\[\]\)/)/;
refused('hookinbox_worker', $old_batch, 'execute the older accept_batch()');
refused('hookinbox_worker', q{select * from hookinbox.accept_one('ep', 'stripe', 'acct', 'live', 'evt_forged',
	't', null, null, '{}', 'x', false, null, null)}, 'execute accept_one()');
refused('hookinbox_worker', $accept =~ s/evt_priv/evt_forged/r, 'execute accept()');
refused('hookinbox_worker', q{select hookinbox.reject('ep', 'x', 1)}, 'execute reject()');
refused('hookinbox_worker', q{update hookinbox.inbox set body = 'forged'}, 'update an inbox body');
refused('hookinbox_worker', q{update hookinbox.inbox set headers = '{}'}, 'update inbox headers');
refused('hookinbox_worker', q{update hookinbox.inbox set event_id = 'x'}, 'update an inbox event id');
allowed('hookinbox_worker', q{update hookinbox.inbox set state = state, dispatched_at = dispatched_at},
	'update an inbox row\'s state and dispatched_at');
is($pg->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_forged'}), 0, 'nothing was forged');

# the SECURITY DEFINER functions run as a NOLOGIN owner, not the superuser who installed them
is($pg->sql(q{select string_agg(distinct pg_get_userbyid(p.proowner), ',') from pg_proc p
	join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'hookinbox' and p.prosecdef}),
	'hookinbox_owner', 'every SECURITY DEFINER function is owned by hookinbox_owner');
is($pg->sql(q{select rolcanlogin::text || rolsuper::text || rolcreaterole::text || rolcreatedb::text
	from pg_roles where rolname = 'hookinbox_owner'}), 'falsefalsefalsefalse',
	'hookinbox_owner: NOLOGIN, not superuser, no CREATEROLE/CREATEDB');
is($pg->sql(q{select coalesce(string_agg(c.relname || ':' || p, ',' order by c.relname, p), '')
	from pg_class c join pg_namespace n on n.oid = c.relnamespace,
	unnest(array['select','insert','update','delete','truncate']) p
	where n.nspname = 'hookinbox' and c.relkind = 'r' and has_table_privilege('hookinbox_owner', c.oid, p)}),
	'inbox:insert,inbox:select,ledger:insert,ledger:select,ledger:update,rejection:insert,rejection:select,rejection:update,'
	. 'request_duration:insert,request_duration:select,request_duration:update',
	'hookinbox_owner: only what accept_batch(), reject(), count_requests() and the ledger\'s trigger need (no delete)');

# what one reject() call can add is bounded, and a count never overflows
allowed('hookinbox_intake', q{select hookinbox.reject('ep', 'flood', 9223372036854775807)}, 'call reject() with a huge count');
is($pg->sql(q{select count from hookinbox.rejection where reason = 'flood'}), 1000000, 'one call adds at most 1,000,000');
$pg->sql(q{update hookinbox.rejection set count = 9223372036854775800 where reason = 'flood'});
allowed('hookinbox_intake', q{select hookinbox.reject('ep', 'flood', 1000)}, 'count past the bigint limit');
is($pg->sql(q{select count from hookinbox.rejection where reason = 'flood'}), '9223372036854775807',
	'the count stops at the bigint limit, and later flushes still work');
allowed('hookinbox_intake', q{select hookinbox.reject('ep', 'flood', -5)}, 'call reject() with a negative count');
is($pg->sql(q{select count from hookinbox.rejection where reason = 'flood'}), '9223372036854775807', 'which adds nothing');

# the schema is unchanged by all of the above
is($pg->sql(q{select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
	where n.nspname = 'hookinbox' and c.relname = 'mine'}), 0, 'no table was created');
is($pg->sql('select count(*) from hookinbox.inbox'), 1, 'the one accepted row is still there');

done_testing();
