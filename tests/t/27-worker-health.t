# SPDX-License-Identifier: ISC
# hookinbox-worker --health-check: 0 healthy, 1 when the oldest pending
# event or action, or the oldest parked action, is older than its
# threshold (options or [worker] keys), 75 when the database is down;
# sql/stats.sql shows the same ages.  And the worker as a process: SIGHUP
# in --loop reloads the configuration between sweeps (a bad file keeps the
# running one), SIGTERM lets the call in flight finish and records it.
use strict;
use warnings;
use Test::More;
use POSIX ();
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/bad' => '400', '/down' => '500', '/slow' => 'sleep 2' });
my $t = HookTest::Worker::setup(routes => {
	bad => { endpoint => 'shop', events => 'bad.*', url => $d->url('/bad'), timeout => 2 },
	down => { endpoint => 'shop', events => 'down.*', url => $d->url('/down'), timeout => 2 },
	slow => { endpoint => 'shop', events => 'slow.*', url => $d->url('/slow'), timeout => 4 },
}, worker => { health_max_pending_age => 600 });
my $bin = HookTest::Worker::bin();

sub health {
	my (@args) = @_;
	my ($rc, $out) = HookTest::Worker::worker($t, '--health-check', @args);
	chomp $out;
	return ($rc, $out);
}

# ---- options
{
	my $c = $t->config;
	for my $bad (['--health-check', '--loop'], ['--health-check', '--once'], ['--max-pending-age', '10'],
		['--health-check', '--max-pending-age', '0'], ['--health-check', '--max-parked-age', 'x']) {
		`$bin -c $c @$bad 2>&1`;
		is($? >> 8, 64, "@$bad: usage error 64");
	}
	like(`$bin --help`, qr/--health-check.*--max-pending-age.*--max-parked-age.*1 unhealthy/s, '--help lists the health check');
}

# ---- an empty queue is healthy; the [worker] threshold is used
my ($rc, $out) = health();
is($rc, 0, 'empty queue: healthy (0)') or diag $out;
like($out, qr/^ok: .*limit 600 s.*limit 86400 s\)$/, 'one ok line with the thresholds from [worker] and the default');
is(scalar(split /\n/, $out), 1, 'exactly one line');

# ---- an event not fanned out for 700 s
HookTest::Worker::accept($t, event_id => 'e_old', type => 'nothing.x');
$t->sql("update hookinbox.inbox set received_at = now() - interval '700 seconds' where event_id = 'e_old'");
($rc, $out) = health();
is($rc, 1, 'pending event older than health_max_pending_age: 1');
like($out, qr/^unhealthy: oldest pending event is 7\d\d s old \(endpoint "shop"\), over 600 s$/, 'says what') or diag $out;
($rc, $out) = health('--max-pending-age', '900');
is($rc, 0, '--max-pending-age 900 overrides the configuration: 0') or diag $out;
HookTest::Worker::worker($t, '--once');
($rc, $out) = health();
is($rc, 0, 'fanned out (unrouted): healthy again') or diag $out;

# ---- a retrying action made 1000 s ago
HookTest::Worker::accept($t, event_id => 'e_down', type => 'down.x');
HookTest::Worker::worker($t, '--once');
is(HookTest::Worker::action($t, 'e_down')->{state}, 'pending', 'the 500 leaves it pending');
$t->sql("update hookinbox.action set created_at = now() - interval '1000 seconds' where route = 'down'");
($rc, $out) = health();
is($rc, 1, 'pending action older than the threshold: 1');
like($out, qr/^unhealthy: oldest pending action is 10\d\d s old \(route "down"\), over 600 s$/, 'names the route') or diag $out;
$t->sql("update hookinbox.action set state = 'done', done_at = now() where route = 'down'");

# ---- a parked action, parked 2 days ago
HookTest::Worker::accept($t, event_id => 'e_bad', type => 'bad.x');
HookTest::Worker::worker($t, '--once');
is(HookTest::Worker::action($t, 'e_bad')->{state}, 'parked', '400 parks');
($rc, $out) = health();
is($rc, 0, 'a fresh parked action is healthy') or diag $out;
$t->sql("update hookinbox.action set updated_at = now() - interval '2 days' where route = 'bad'");
($rc, $out) = health();
is($rc, 1, 'parked action older than 86400 s: 1');
like($out, qr/^unhealthy: oldest parked action is 172\d\d\d s old \(route "bad"\), over 86400 s$/, 'says what') or diag $out;
($rc, $out) = health('--max-parked-age', '259200');
is($rc, 0, '--max-parked-age 3 days: 0') or diag $out;

# ---- both at once: one line naming both
HookTest::Worker::accept($t, event_id => 'e_old2', type => 'nothing.x');
$t->sql("update hookinbox.inbox set received_at = now() - interval '2000 seconds' where event_id = 'e_old2'");
($rc, $out) = health();
is($rc, 1, 'two problems: 1');
like($out, qr/^unhealthy: oldest pending event .*; oldest parked action .*$/, 'one line naming both') or diag $out;

# ---- sql/stats.sql shows the same ages
my ($src, $sout) = $t->pg->psql_file(HookTest::top() . '/sql/stats.sql', role => 'hookinbox_admin');
is($src, 0, 'stats.sql runs') or diag $sout;
like($sout, qr/oldest_pending_event_age.*oldest_parked_action_age/s, 'stats.sql: the oldest ages');
like($sout, qr/00:33:2\d\s*\|[^\n]*\|\s*2 days/, 'stats.sql: 2000 s pending event, parked 2 days') or diag $sout;
like($sout, qr/retrying.*retried_last_hour/s, 'stats.sql: retrying and retried in the last hour');
HookTest::Worker::worker($t, '--once');
$t->sql("update hookinbox.action set updated_at = now() where route = 'bad'");

# ---- database unreachable: 75
{
	open my $fh, '>', $t->dir . '/nodb.conf' or die;
	print $fh "[database]\nconninfo = host=/nonexistent port=1 connect_timeout=2\n";
	close $fh;
	my $o = `$bin -c @{[ $t->dir ]}/nodb.conf --health-check 2>/dev/null`;
	is($? >> 8, 75, 'database unreachable: 75');
	like($o, qr/^unavailable: /, 'and says so');
}

# ---- SIGHUP in --loop: reload between sweeps; a bad file keeps the running one
sub wait_for {
	my ($cond, $secs) = @_;
	my $until = time() + ($secs // 20);
	while (time() < $until) { return 1 if $cond->(); sleep 0.2 }
	return 0;
}
my ($pid, $log) = HookTest::Worker::worker_bg($t, '--loop');
sleep 1;
$t->{o}{routes}{fresh} = { endpoint => 'shop', events => 'fresh.*', url => $d->url('/fresh'), timeout => 2 };
$t->write_config;
kill 'HUP', $pid;
ok(wait_for(sub { HookTest::slurp($log) =~ /event=reload/ }), 'SIGHUP: the configuration is reloaded')
	or diag HookTest::slurp($log);
HookTest::Worker::accept($t, event_id => 'e_fresh', type => 'fresh.x');
ok(wait_for(sub { (HookTest::Worker::action($t, 'e_fresh')->{state} // '') eq 'done' }), 'a route added by the reload delivers');
open my $fh, '>>', $t->config or die;
print $fh "[route broken]\nno_such_key = 1\n";
close $fh;
kill 'HUP', $pid;
ok(wait_for(sub { HookTest::slurp($log) =~ /reload failed, keeping the running configuration\n.*hookinbox\.conf:\d+: / }),
	'a bad file: logged with file:line, the running configuration kept') or diag HookTest::slurp($log);
ok(kill(0, $pid), 'the worker keeps running');
HookTest::Worker::accept($t, event_id => 'e_fresh2', type => 'fresh.x');
ok(wait_for(sub { (HookTest::Worker::action($t, 'e_fresh2')->{state} // '') eq 'done' }), 'and keeps delivering with it');

# ---- SIGTERM with a call in flight: it finishes and is recorded
HookTest::Worker::accept($t, event_id => 'e_slow', type => 'slow.x');
ok(wait_for(sub { $t->sql("select count(*) from hookinbox.action where route = 'slow' and lease_until > now()") == 1 }),
	'the slow call is in flight');
my $t0 = time();
kill 'TERM', $pid;
my $gone = wait_for(sub { waitpid($pid, POSIX::WNOHANG()) == $pid }, 15);
my $rc2 = $?;
my $took = time() - $t0;
ok($gone, sprintf('SIGTERM: exited after %.1f s', $took));
is($rc2 >> 8, 0, 'exit 0');
cmp_ok($took, '<=', 4 + 1, 'within the route timeout (the bound)');
is(HookTest::Worker::action($t, 'e_slow')->{state}, 'done', 'the call in flight finished and was recorded');
like(HookTest::slurp($log), qr/event=summary .*exit=0/, 'summary line at exit');

done_testing();
