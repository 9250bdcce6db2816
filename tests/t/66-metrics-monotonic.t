# SPDX-License-Identifier: ISC
# The worker's counters and histogram count across runs, so that rate() and
# increase() over a cron-run worker are right: each write adds what the
# process counted since its last write to what the file holds, under a lock.
# Adversarial schedules: runs one after another; several runs at once on
# one file (each call counted exactly once: no run overwrites another's);
# a --loop worker writing every 15 s beside cron runs; the file removed (a
# reset, from zero); a route gone from the configuration (its series kept).
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Worker;
use Time::HiRes qw(sleep time);

my $t = HookTest::Worker::setup(routes => { local => { endpoint => 'shop', handler => 'sql:app.apply', timeout => 2 } });
$t->sql($HookTest::Worker::APPLY_SQL);
my $prom = $t->dir . '/hookinbox.prom';

sub value {
	my ($series) = @_;
	my $text = HookTest::slurp($prom);
	return $text =~ /^\Q$series\E (\S+)$/m ? $1 + 0 : undef;
}
my $calls = 'hookinbox_worker_calls_total{route="local",class="ok"}';
my $done = 'hookinbox_worker_actions_total{route="local",outcome="done"}';
my $count = 'hookinbox_worker_call_duration_seconds_count{route="local"}';
my $inf = 'hookinbox_worker_call_duration_seconds_bucket{route="local",le="+Inf"}';

# ---- runs one after another
my $n = 0;
for my $run (1 .. 3) {
	HookTest::Worker::accept($t, event_id => "evt_seq_${run}_$_", type => 'invoice.paid') for 1 .. $run;
	$n += $run;
	my ($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
	is($rc, 0, "run $run") or diag $log;
	is(value($calls), $n, "after run $run: calls_total is $n (every run's calls)");
}
is(value($done), $n, "actions_total{done} is $n");
is(value($count), $n, "the histogram's count is $n");
is(value($inf), $n, 'and its +Inf bucket');
is(value('hookinbox_worker_last_run_done'), 3, 'the last-run gauges stay per run');

# ---- several runs at once on one file: every call counted once
$t->sql('truncate app.applied');
HookTest::Worker::accept_many($t, 400, prefix => 'par');
# (each run pauses 50 ms between reading the file and renaming the new one
# over it, and --loop-less runs write once, at their end: the runs' writes
# overlap unless the lock orders them)
my @pids = map {
	(HookTest::Worker::worker_bg($t, { HOOKINBOX_FAILPOINT => 'metrics-write' }, '--once', '--batch', '10',
		'--concurrency', '4', '--metrics-file', $prom))[0]
} 1 .. 8;
waitpid $_, 0 for @pids;
is($t->sql('select count(*) from app.applied'), 400, '400 events applied by eight runs at once');
is(value($calls), $n + 400, 'calls_total grew by exactly 400: no run overwrote another');
is(value($count), $n + 400, 'the histogram too');
$n += 400;

# ---- a --loop worker (writes every 15 s and at exit) beside cron runs
my ($loop) = HookTest::Worker::worker_bg($t, '--loop', '--metrics-file', $prom);
HookTest::Worker::accept_many($t, 50, prefix => 'loop');
my $until = time + 30;
sleep 0.2 while $t->sql("select count(*) from app.applied where event_id like 'loop_%'") < 50 && time < $until;
HookTest::Worker::accept_many($t, 20, prefix => 'cron');
my ($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
is($rc, 0, 'a cron run beside the loop');
kill 'TERM', $loop;
waitpid $loop, 0;
is($t->sql("select count(*) from app.applied where event_id like 'loop_%' or event_id like 'cron_%'"), 70,
	'70 more applied');
is(value($calls), $n + 70, 'calls_total counts the loop\'s and the cron run\'s calls once each');
$n += 70;

# ---- the file removed: a reset, counting from zero again
unlink $prom;
HookTest::Worker::accept($t, event_id => 'evt_after_reset', type => 'invoice.paid');
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
is(value($calls), 1, 'after the file is removed the counter starts again (Prometheus sees a reset)');

# ---- a route no longer configured keeps its series
{
	my $text = HookTest::slurp($prom);
	$text =~ s/route="local"/route="gone"/g;
	open my $fh, '>', $prom or die $!;
	print $fh $text;
	close $fh;
}
HookTest::Worker::accept($t, event_id => 'evt_last', type => 'invoice.paid');
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
is(value('hookinbox_worker_calls_total{route="gone",class="ok"}'), 1, 'a route gone from the configuration keeps its count');
is(value($calls), 1, 'and the configured one counts its own');
done_testing();
