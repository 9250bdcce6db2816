# SPDX-License-Identifier: ISC
# Operator scripts: stats, parked, replay by route, purge (the dedup key
# outlives the body).
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/no' => '422' });
my $t = HookTest::Worker::setup(routes => {
	yes => { endpoint => 'shop', events => 'yes.*', url => $d->url('/yes'), timeout => 2 },
	no => { endpoint => 'shop', events => 'no.*', url => $d->url('/no'), timeout => 2 },
});
my $sql = HookTest::top() . '/sql';

HookTest::Worker::accept($t, event_id => "y$_", type => 'yes.x') for 1 .. 3;
HookTest::Worker::accept($t, event_id => "n$_", type => 'no.x') for 1 .. 2;
HookTest::Worker::drain($t);
is($t->sql("select count(*) from hookinbox.action where state = 'parked'"), 2, '422 parks');

my ($rc, $out) = $t->pg->psql_file("$sql/stats.sql");
is($rc, 0, 'stats.sql runs') or diag $out;
like($out, qr/shop\s*\|\s*no\s*\|\s*0\s*\|\s*0\s*\|\s*0\s*\|\s*2/, 'stats: parked per endpoint and route') or diag $out;
like($out, qr/oldest_parked_age/, 'stats: oldest parked age');
($rc, $out) = $t->pg->psql_file("$sql/stats.sql", role => 'hookinbox_admin');
is($rc, 0, 'stats.sql runs as hookinbox_admin') or diag $out;

($rc, $out) = $t->pg->psql_file("$sql/parked.sql", vars => { route => 'no' });
is($rc, 0, 'parked.sql runs') or diag $out;
like($out, qr/\bn1\b.*422/, 'parked: lists the event and its last status');
like($out, qr/\(2 rows\)/, 'parked: two rows');
($rc, $out) = $t->pg->psql_file("$sql/parked.sql", vars => { route => "x' or '1'='1" });
like($out, qr/\(0 rows\)/, 'parked: the route variable is quoted, not spliced');

($rc, $out) = $t->pg->psql_file("$sql/replay.sql");
isnt($rc, 0, 'replay.sql without parameters fails');
like($out, qr/choose parked actions with -v action_id/, 'and explains itself');
$d->plan('/no', '200');
my $keys = $t->sql("select string_agg(idem_key, ',' order by id) from hookinbox.action where route = 'no'");
($rc, $out) = $t->pg->psql_file("$sql/replay.sql", vars => { route => 'no', since => '2000-01-01', go => 1 },
	role => 'hookinbox_admin');
is($rc, 0, 'replay.sql by route and since') or diag $out;
HookTest::Worker::drain($t);
is($t->sql("select count(*) from hookinbox.action where route = 'no' and state = 'done'"), 2,
	'replayed by route: done');
is($t->sql("select string_agg(idem_key, ',' order by id) from hookinbox.action where route = 'no'"), $keys,
	'same keys');

# ---- purge: bodies after the payload horizon, keys after the dedup horizon
HookTest::Worker::accept($t, event_id => 'p_pending', type => 'yes.x');     # not fanned out yet
($rc, $out) = $t->pg->psql_file("$sql/purge.sql", vars => { payload_days => 0, dedup_days => 30 },
	role => 'hookinbox_admin');
is($rc, 0, 'purge.sql runs') or diag $out;
is($t->sql("select count(*) from hookinbox.inbox where body is null"), 5, 'finished bodies purged');
is($t->sql("select body is not null from hookinbox.inbox where event_id = 'p_pending'"), 't',
	'a pending event keeps its body');
is($t->sql("select duplicate from hookinbox.accept('shop', 'stripe', 'shop', 'default', 'y1', 'yes.x', null, null, "
	. "'{}', convert_to('{}', 'UTF8'), false)"), 't', 'a redelivery after the body purge is still a duplicate');
my (undef, $log) = HookTest::Worker::worker($t, '--once');
is(scalar(grep { $_->{event_id} eq 'y1' } $d->requests), 1, 'and is not delivered again');

($rc, $out) = $t->pg->psql_file("$sql/purge.sql", vars => { payload_days => 0, dedup_days => 0, force => 1 });
is($rc, 0, 'purge at the dedup horizon') or diag $out;
is($t->sql("select count(*) from hookinbox.inbox"), 0, 'old rows deleted');
is($t->sql("select count(*) from hookinbox.action"), 0, 'with their finished actions');
($rc, $out) = $t->pg->psql_file("$sql/purge.sql", vars => { payload_days => 5, dedup_days => 1 });
like($out, qr/need 0 <= payload_days <= dedup_days/, 'purge refuses a dedup horizon shorter than the payload one');

done_testing();
