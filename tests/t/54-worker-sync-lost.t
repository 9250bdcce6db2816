# SPDX-License-Identifier: ISC
# A primary that waits for a synchronous standby it lost never answers a
# commit, and statement_timeout does not cover that wait.  The worker's
# claim flushes its commit, so it would wait there for ever, holding its
# cron slot: instead a statement of the sweep not answered within a lease
# is cancelled and the connection given up.  --once exits 75 with that
# said, and calls nothing; once the standby is back (here: the setting
# undone) the next run delivers every event once.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use POSIX ();
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(routes => {
	sl => { endpoint => 'shop', events => 'sl.*', url => $d->url('/sl'), timeout => 2 },
});
HookTest::Worker::accept_many($t, 3, prefix => 'sl', type => 'sl.x');

$t->sql(q{alter system set synchronous_standby_names = 'ghost'});
$t->sql('select pg_reload_conf()');
my $t0 = time();
my ($pid, $log) = HookTest::Worker::worker_bg($t, '--once');
my $rc;
while (time() < $t0 + 60) {
	if (waitpid($pid, POSIX::WNOHANG) == $pid) {
		$rc = $? >> 8;
		last;
	}
	sleep 0.2;
}
my $took = time() - $t0;
unless (defined $rc) {
	kill 'KILL', $pid;
	waitpid $pid, 0;
}
ok(defined $rc, sprintf('--once against a primary waiting for a lost standby ends (%.1f s, lease 5 s)', $took));
is($rc, 75, '--once exits 75 (try again later)');
my $text = HookTest::slurp($log);
like($text, qr/did not answer within 5000 ms/, 'it says the database did not answer within the lease')
	or diag $text;
is(scalar($d->requests), 0, 'nothing was called under the claim it gave up');

$t->sql(q{alter system reset synchronous_standby_names});
$t->sql('select pg_reload_conf()');
sleep 6;   # the leases the cancelled claim committed locally run out
my ($rc2, $log2) = HookTest::Worker::worker($t, '--once');
is($rc2, 0, 'with the standby back, the next run exits 0') or diag $log2;
is($t->sql(q{select count(*) from hookinbox.action where route = 'sl' and state = 'done'}), 3,
	'every action is done');
my %eff = $d->effects;
is(scalar(grep { $_ == 1 } values %eff), 3, 'each key applied once at the downstream');
is(scalar(keys %eff), 3, 'three keys');

done_testing;
