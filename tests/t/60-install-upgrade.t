# SPDX-License-Identifier: ISC
# make install lays out what the README says; an installation at the first
# migration, holding events, is upgraded by sql/install.sql without losing
# any, twice without change, and the responder and the worker work on the
# result.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use HookTest qw(stripe_sig);
use HookTest::Worker;

my $top = HookTest::top();

# ---- make install with PREFIX and DESTDIR
{
	my $stage = tempdir(CLEANUP => 1);
	my $out = `make -s -C $top install PREFIX=/usr DESTDIR=$stage 2>&1`;
	is($?, 0, 'make install PREFIX=/usr DESTDIR=... succeeds') or diag $out;
	for my $f (qw(/usr/sbin/hookinbox.fcgi /usr/sbin/hookinbox-worker /usr/sbin/hookinbox-backfill /usr/bin/hookinbox-send
		/usr/share/hookinbox/sql/backfill_functions.sql /usr/share/man/man8/hookinbox-backfill.8
		/usr/share/hookinbox/sql/install.sql /usr/share/hookinbox/sql/migrations/001_intake.sql
		/usr/share/hookinbox/sql/stats.sql /usr/share/hookinbox/etc/hookinbox.conf)) {
		ok(-e "$stage$f", "installed $f");
	}
	ok(!-e "$stage/usr/local", 'nothing under the default prefix');
	my $ver = `$stage/usr/sbin/hookinbox.fcgi --version`;
	like($ver, qr/hookinbox\.fcgi \d/, 'the installed responder runs');
	my $strings = `strings $stage/usr/sbin/hookinbox.fcgi`;
	unlike($strings, qr/HOOKINBOX_FAILPOINT|HOOKINBOX_TEST_NOW/, 'the release build has no failure points or test clock');
}

# ---- upgrade from the first migration
my $secret = 'whsec_upgrade_test_0123456789';
my $t = HookTest->new(endpoints => { 'stripe-live' => { provider => 'stripe', secrets => [$secret] } },
	routes => { apply => { endpoint => 'stripe-live', handler => 'sql:app.apply' } }, no_lighttpd => 1);
$t->pg->psql_raw('postgres', 'postgres', 'create database old');
my $old = bless { %{ $t->pg }, dbname => 'old', running => 0 }, 'HookTest::Pg';
# the schema as version 1 left it: the first migration only (rows are
# inserted as version 1's accept() did, since today's functions need today's
# columns)
my ($rc, $out);
{
	open my $fh, '>', $t->dir . '/v1.sql' or die $!;
	print $fh "\\set ON_ERROR_STOP 1\nbegin;\ncreate schema hookinbox;\n",
		"create table hookinbox.schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now());\n",
		"\\ir $top/sql/migrations/001_intake.sql\n",
		"insert into hookinbox.schema_migrations (version, name) values (1, 'intake');\n",
		"commit;\n";
	close $fh;
	($rc, $out) = $old->psql_file($t->dir . "/v1.sql");
	is($rc, 0, 'version 1 schema installed') or diag $out;
}
for my $i (1 .. 20) {
	$old->sql("insert into hookinbox.inbox (endpoint, provider, account, environment, event_id, event_type, "
		. "object_id, event_version, body_sha256, headers, body) select 'stripe-live', 'stripe', 'stripe-live', "
		. "'default', 'evt_old_$i', 'invoice.paid', 'in_$i', $i, sha256(b), '{}', b "
		. "from convert_to('{\"id\":\"evt_old_$i\"}', 'UTF8') b");
}
is($old->sql('select count(*) from hookinbox.inbox'), 20, '20 events stored before the upgrade');

($rc, $out) = $old->psql_file("$top/sql/install.sql");
is($rc, 0, 'install.sql upgrades') or diag $out;
my $latest = () = glob("$top/sql/migrations/[0-9]*.sql");
like($out, qr/schema at version $latest\b/, "now at version $latest (every migration)");
is($old->sql('select count(*) from hookinbox.inbox'), 20, 'no event lost');
is($old->sql(q{select string_agg(distinct state, ',') from hookinbox.inbox}), 'pending', 'the states kept (013)');
ok(!eval { $old->sql(q{update hookinbox.inbox set state = 'bogus' where event_id = 'evt_old_1'}); 1 },
	'an unknown inbox state is refused (013: the domain checks it)');
is($old->sql(q{select state from hookinbox.inbox where event_id = 'evt_old_1'}), 'pending', 'and nothing changed');
is($old->sql('select count(*) from hookinbox.inbox where backfilled_at is not null'), 0,
	'no delivered event is marked backfilled (007)');
my $dump1 = $old->sql(q{select string_agg(id || ':' || event_id || ':' || encode(body, 'hex'), ',' order by id) from hookinbox.inbox});
my $applied = $old->sql(q{select string_agg(version || ':' || applied_at, ',' order by version) from hookinbox.schema_migrations});
# every function as a fresh install makes it: signature, definition, owner, grants
my $functions = q{select string_agg(f, E'\n' order by f) from (select p.oid::regprocedure::text
	|| ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || pg_get_userbyid(p.proowner) || ' '
	|| coalesce(p.proacl::text, '') as f from pg_proc p join pg_namespace n on n.oid = p.pronamespace
	where n.nspname = 'hookinbox') s};
my $fresh = $t->pg->sql($functions);
ok($fresh =~ tr/\n// > 30, 'the fresh install has its functions');
is($old->sql($functions), $fresh, 'the upgrade leaves the same functions as a fresh install');
($rc, $out) = $old->psql_file("$top/sql/install.sql");
is($rc, 0, 'install.sql again');
is($old->sql(q{select string_agg(version || ':' || applied_at, ',' order by version) from hookinbox.schema_migrations}),
	$applied, 'the second run applies nothing');
is($old->sql($functions), $fresh, 'and leaves every function and grant as it was');
is($old->sql(q{select string_agg(id || ':' || event_id || ':' || encode(body, 'hex'), ',' order by id) from hookinbox.inbox}),
	$dump1, 'and changes no row');

# 003: a typical event (here 6 KB) is stored whole in its heap row, not
# compressed and cut into TOAST chunks; a 64 KB one still goes to TOAST
my $toast = $old->sql(q{select reltoastrelid::regclass from pg_class where oid = 'hookinbox.inbox'::regclass});
# (random bytes, which no compression shrinks)
sub random_body { "(select decode(string_agg(md5(i::text), ''), 'hex') from generate_series(1, $_[0] / 16) i)" }
$old->sql("select hookinbox.accept('stripe-live', 'stripe', 'stripe-live', 'default', 'evt_6k', "
	. "'invoice.paid', 'in_6k', 1, '{}', " . random_body(6000) . ", false)");
is($old->sql("select count(*) from $toast"), 0, 'a 6 KB event is stored inline: no TOAST chunk');
$old->sql("select hookinbox.accept('stripe-live', 'stripe', 'stripe-live', 'default', 'evt_64k', "
	. "'invoice.paid', 'in_64k', 1, '{}', " . random_body(65536) . ", false)");
ok($old->sql("select count(*) from $toast") > 0, 'a 64 KB event goes to TOAST');
is($old->sql(q{select length(body) from hookinbox.inbox where event_id = 'evt_64k'}), 65536,
	'and reads back whole');
$old->sql(q{delete from hookinbox.inbox where event_id in ('evt_6k', 'evt_64k')});

# the responder and the worker on the upgraded database
$old->sql($HookTest::Worker::APPLY_SQL);
(my $conf = do { local (@ARGV, $/) = $t->config; <> }) =~ s/dbname=hookinbox user=hookinbox_intake/dbname=old user=hookinbox_intake/;
open my $fh, '>', $t->config or die $!;
print $fh $conf;
close $fh;
my $h = HookTest::Lighttpd->new(dir => $t->dir, fcgi => "$top/obj/test/hookinbox.fcgi", config => $t->config)->start;
my $http = HTTP::Tiny->new;
my $body = '{"id":"evt_new_1","type":"invoice.paid","created":1,"data":{"object":{"id":"in_x"}}}';
my $r = $http->request('POST', $h->url . '/stripe-live',
	{ content => $body, headers => { 'Stripe-Signature' => stripe_sig($secret, $body) } });
is($r->{status}, 200, 'the responder accepts on the upgraded schema');
$r = $http->request('POST', $h->url . '/stripe-live',
	{ content => '{"id":"evt_old_3"}', headers => { 'Stripe-Signature' => stripe_sig($secret, '{"id":"evt_old_3"}') } });
like($r->{content}, qr/"duplicate":true/, 'an event stored before the upgrade is still a duplicate');
# a responder newer than its schema (here: accept_batch() missing) answers
# 503, stores nothing and says why; the provider's retry lands after the upgrade
{
	my $sig = "text, text, text, text, text, text, text, bigint, jsonb, bytea, boolean, bytea, text";
	$old->sql("alter function hookinbox.accept_batch(" . join(', ', map { "$_\[\]" } split /, /, $sig)
		. ") rename to accept_batch_hidden");
	$h->restart;
	my $rows = $old->sql('select count(*) from hookinbox.inbox');
	my $b = '{"id":"evt_new_2","type":"invoice.paid","created":1}';
	$r = $http->request('POST', $h->url . '/stripe-live', { content => $b, headers => { 'Stripe-Signature' => stripe_sig($secret, $b) } });
	is($r->{status}, 503, 'schema older than the responder: 503');
	is($old->sql('select count(*) from hookinbox.inbox'), $rows, 'schema older than the responder: nothing stored');
	like($t->responder_log, qr/could not prepare hookinbox\.accept_batch: .*is sql\/install\.sql applied\?/,
		'schema older than the responder: the log says so');
	$old->sql("alter function hookinbox.accept_batch_hidden(" . join(', ', map { "$_\[\]" } split /, /, $sig)
		. ") rename to accept_batch");
	$h->restart;
	$r = $http->request('POST', $h->url . '/stripe-live', { content => $b, headers => { 'Stripe-Signature' => stripe_sig($secret, $b) } });
	is($r->{status}, 200, 'after the upgrade the retry is stored');
}
# a schema without accept_one() (older than the responder): a delivery
# alone goes through accept_batch(), stored and answered as ever
{
	my $sig = 'text, text, text, text, text, text, text, bigint, jsonb, bytea, boolean, bytea, text';
	$old->sql("alter function hookinbox.accept_one($sig) rename to accept_one_hidden");
	$h->restart;
	my $rows = $old->sql('select count(*) from hookinbox.inbox');
	my $b = '{"id":"evt_new_3","type":"invoice.paid","created":1}';
	for my $try (1, 2) {
		$r = $http->request('POST', $h->url . '/stripe-live',
			{ content => $b, headers => { 'Stripe-Signature' => stripe_sig($secret, $b) } });
		is($r->{status}, 200, "no accept_one(): delivery $try answered 200");
		like($r->{content}, $try == 1 ? qr/"duplicate":false/ : qr/"duplicate":true/,
			"no accept_one(): delivery $try " . ($try == 1 ? 'stored' : 'a duplicate'));
	}
	is($old->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_new_3'}), 1,
		'no accept_one(): one row');
	like($t->responder_log, qr/the schema has no hookinbox\.accept_one\(\): single-row deliveries go through accept_batch\(\)/,
		'no accept_one(): the log says so');
	$old->sql("alter function hookinbox.accept_one_hidden($sig) rename to accept_one");
	$h->restart;
}
$h->stop;
(my $wconf = $conf) =~ s/user=hookinbox_intake/user=hookinbox_worker/;
open $fh, '>', $t->dir . '/worker.conf' or die $!;
print $fh $wconf;
close $fh;
# a worker newer than its schema says so on every run, as cron runs it (no
# -v): exit 78 and one line, so cron mails it; nothing is claimed
{
	my $saved = $old->sql(q{select string_agg(format('(%s, %L, %L)', version, name, applied_at), ', ')
		from hookinbox.schema_migrations where version >= 8});
	$old->sql('delete from hookinbox.schema_migrations where version >= 8');
	my $o = `$top/obj/test/hookinbox-worker -c @{[ $t->dir ]}/worker.conf --max-runtime 55 2>&1`;
	is($? >> 8, 78, 'schema older than the worker: a cron run exits 78');
	like($o, qr/lacks migration \d+: run sql\/install\.sql/, 'and says which migration is missing') or diag $o;
	is($old->sql(q{select count(*) from hookinbox.action where state <> 'pending'}), 0, 'and works no action');
	$old->sql("insert into hookinbox.schema_migrations (version, name, applied_at) values $saved");
}
my $wout = `$top/obj/test/hookinbox-worker -c @{[ $t->dir ]}/worker.conf --once 2>&1`;
is($? >> 8, 0, 'the worker runs on the upgraded schema') or diag $wout;
is($old->sql('select count(*) from app.applied'), 23, 'every old and new event applied once');
done_testing();
