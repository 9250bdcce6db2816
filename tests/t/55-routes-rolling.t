# SPDX-License-Identifier: ISC
# A rolling route change across hosts.  Route b is added on one host
# ("new": routes a and b) while the other ("old": route a) still runs
# without it.  Every event received once both run reaches each route's own
# downstream exactly once: what the old host fans out (dispatched, its
# fan-out sees no route b) is recorded, and the new host adds the missing
# (b, event) actions under the usual idempotency key.  Events from before
# route b existed anywhere are not given to it (no work made up for old
# events) unless an operator asks (sql/reroute.sql -v since=); a purge
# keeps an event a worker still owes actions; a route removed everywhere
# gets nothing more.  Assertions are the effects at the two downstreams
# and the rows in PostgreSQL.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;
use Time::HiRes qw(sleep time);

my $top = HookTest::top();
my $da = HookTest::Downstream->new(dir => File::Temp::tempdir('dsa-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my $db = HookTest::Downstream->new(dir => File::Temp::tempdir('dsb-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my ($t, $conf_new, $conf_old) = HookTest::Worker::two_hosts(lacking => 'b', routes => {
	a => { endpoint => 'shop', events => '*', url => $da->url('/a'), timeout => 3 },
	b => { endpoint => 'shop', events => '*', url => $db->url('/b'), timeout => 3 },
});

# event id => effects at one downstream
sub effects_by_event {
	my ($d) = @_;
	my %e;
	$e{ $_->{event_id} } += $_->{effect} for $d->requests;
	return \%e;
}
sub ids { my ($p, $n) = @_; return map { "${p}_$_" } 1 .. $n }
sub once_each {
	my ($d, $name, @ids) = @_;
	my $e = effects_by_event($d);
	my @bad = grep { ($e->{$_} // 0) != 1 } @ids;
	is(scalar @bad, 0, "$name: each of " . scalar(@ids) . ' events exactly one effect')
		or diag join ' ', map { "$_=" . ($e->{$_} // 0) } @bad[0 .. ($#bad < 9 ? $#bad : 9)];
}
sub none_of {
	my ($d, $name, @ids) = @_;
	my $e = effects_by_event($d);
	my %want = map { $_ => 1 } @ids;
	is(scalar(grep { $want{ $_->{event_id} // '' } } $d->requests), 0, "$name: not one call");
}
my $pairs_twice = "select count(*) from (select inbox_id, route from hookinbox.action"
	. " group by 1, 2 having count(*) > 1) x";

# 1. before route b exists anywhere: the old host alone
my $t_pre = $t->sql('select now()');
HookTest::Worker::accept_many($t, 5, prefix => 'pre');
my ($rc, $out) = HookTest::Worker::run_once($conf_old);
is($rc, 0, 'old host runs') or diag $out;
once_each($da, 'route a before the change', ids('pre', 5));

# 2. the new host starts: events older than route b are not made up for
($rc, $out) = HookTest::Worker::run_once($conf_new);
is($rc, 0, 'new host runs') or diag $out;
none_of($db, 'route b: events received before it existed', ids('pre', 5));

# 3. the old host fans out while the new one runs: dispatched, recorded
HookTest::Worker::accept_many($t, 10, prefix => 'mid');
($rc, $out) = HookTest::Worker::run_once($conf_old);
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'mid_%' and state = 'dispatched'"),
	10, 'old host: the events are dispatched (it routes them to a only)');
is($t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id"
	. " where i.event_id like 'mid_%' and a.route = 'b'"), 0, 'old host: no action of route b');
is($t->sql("select count(*) from hookinbox.route_topup t join hookinbox.inbox i on i.id = t.inbox_id"
	. " where i.event_id like 'mid_%'"), 10, 'recorded for the top-up');
($rc, $out) = $t->pg->psql_file("$top/sql/stats.sql", role => 'hookinbox_admin');
like($out, qr/^\s*\{\w+\}\s*\|\s*10\s*\|/m, 'stats.sql shows the 10 events seen by one configuration') or diag $out;
($rc, $out) = HookTest::Worker::reroute($t, endpoint => 'shop');
like($out, qr/\b10 dispatched events wait for a worker with other routes/,
	'reroute.sql sees them waiting for the top-up') or diag $out;
($rc, $out) = HookTest::Worker::run_once($conf_new);
is($rc, 0, 'new host runs again') or diag $out;
once_each($db, 'route b, events the old host fanned out', ids('mid', 10));
once_each($da, 'route a, the same events', ids('mid', 10));

# 4. both hosts in --loop at once while events arrive in bursts
sub loop {
	my ($conf, $name) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		open STDERR, '>', $t->dir . "/$name-loop.log" or die $!;
		open STDOUT, '>&', \*STDERR or die $!;
		exec(HookTest::Worker::bin(), '-c', $conf, '-v', '--loop') or POSIX::_exit(127);
	}
	return $pid;
}
my $p_old = loop($conf_old, 'old');
my $p_new = loop($conf_new, 'new');
for my $burst (1 .. 6) {
	HookTest::Worker::accept_many($t, 10, prefix => "live$burst");
	sleep 0.4;
}
my @live = map { ids("live$_", 10) } 1 .. 6;
my $until = time() + 60;
while (time() < $until) {
	last if $t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id"
		. " where i.event_id like 'live%' and a.state = 'done'") == 120;
	sleep 0.3;
}
for my $p ($p_old, $p_new) { kill 'TERM', $p; waitpid $p, 0 }
once_each($da, 'route a, events during the change (two hosts looping)', @live);
once_each($db, 'route b, events during the change (two hosts looping)', @live);
is($t->sql($pairs_twice), 0, 'no (route, event) pair has two actions');

# 5. reroute.sql since: the events from before the change, on request
($rc, $out) = HookTest::Worker::reroute($t, endpoint => 'shop', since => $t_pre);
like($out, qr/\b75 dispatched events match .* dry run/, 'reroute.sql since: dry run counts dispatched events')
	or diag $out;
($rc, $out) = HookTest::Worker::reroute($t, endpoint => 'shop', since => $t_pre, go => 1);
is($rc, 0, 'reroute.sql since, go') or diag $out;
($rc, $out) = HookTest::Worker::run_once($conf_old);
($rc, $out) = HookTest::Worker::run_once($conf_new);
once_each($db, 'route b, the events from before it existed, rerouted', ids('pre', 5));
once_each($da, 'route a, not a second time for any event', ids('pre', 5), ids('mid', 10), @live);
is($t->sql($pairs_twice), 0, 'still no (route, event) pair with two actions');

# 6. purge keeps an event a worker still owes actions
HookTest::Worker::accept_many($t, 3, prefix => 'old');
($rc, $out) = HookTest::Worker::run_once($conf_old);
$t->sql("update hookinbox.inbox set received_at = now() - interval '40 days' where event_id like 'old_%'");
($rc, $out) = $t->pg->psql_file("$top/sql/purge.sql", role => 'hookinbox_admin',
	vars => { payload_days => 7, dedup_days => 30 });
is($rc, 0, 'purge.sql runs') or diag $out;
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'old_%'"), 3,
	'purge: events a worker still owes actions are kept');
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'old_%' and body is not null"), 3,
	'purge: and their bodies');
($rc, $out) = HookTest::Worker::run_once($conf_new);
once_each($db, 'route b gets them after all', ids('old', 3));

# 7. route b removed everywhere: nothing more for it, whatever is recorded
my $b_before = $t->sql("select count(*) from hookinbox.action where route = 'b'");
HookTest::Worker::accept_many($t, 5, prefix => 'post');
($rc, $out) = HookTest::Worker::run_once($conf_old);
($rc, $out) = HookTest::Worker::run_once($conf_old);
($rc, $out) = HookTest::Worker::reroute($t, endpoint => 'shop', since => $t_pre, go => 1);
($rc, $out) = HookTest::Worker::run_once($conf_old);
is($t->sql("select count(*) from hookinbox.action where route = 'b'"), $b_before,
	'route removed everywhere: no new action of it');
once_each($da, 'route a, after the removal', ids('post', 5));
none_of($db, 'route b after its removal', ids('post', 5));
is($t->sql($pairs_twice), 0, 'no (route, event) pair with two actions at the end');

done_testing;
