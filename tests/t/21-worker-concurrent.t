# SPDX-License-Identifier: ISC
# Several workers started together over 2,000 events: every action done
# exactly once, none twice, none lost; and --max-runtime / SIGTERM leave
# no claim dangling.
use strict;
use warnings;
use Test::More;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

sub together {
	my ($t, $d, $workers, $n, $prefix, @args) = @_;
	HookTest::Worker::accept_many($t, $n, prefix => $prefix);
	my $t0 = time();
	my @p = map { [HookTest::Worker::worker_bg($t, '--once', @args)] } 1 .. $workers;
	my $fail = 0;
	for my $p (@p) {
		waitpid $p->[0], 0;
		$fail++ if $? != 0;
	}
	# a worker may finish before another's retries are due: sweep up
	HookTest::Worker::drain($t, timeout => 60);
	my $logs = join '', map { HookTest::slurp($_->[1]) } @p;
	is($fail, 0, "$workers workers exit 0") or diag $logs;
	is($t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where i.event_id like '${prefix}_%' and a.state = 'done'"), $n, "$workers workers: all $n actions done");
	my %calls;
	my %eff;
	for my $r (grep { ($_->{event_id} // '') =~ /^${prefix}_/ } $d->requests) {
		$calls{ $r->{key} }++;
		$eff{ $r->{key} } += $r->{effect};
	}
	is(scalar(keys %eff), $n, "$workers workers: $n distinct keys reached the downstream (none lost)");
	is(scalar(grep { $_ != 1 } values %eff), 0, "$workers workers: each key had exactly one effect");
	is(scalar(grep { $_ != 1 } values %calls), 0, "$workers workers: no action was called twice");
	my @runs = $logs =~ /event=summary fanned_out=(\d+)/g;
	is(scalar @runs, $workers, 'one summary line per worker');
	my @sent = $logs =~ /event=summary .*? sent=(\d+)/g;
	cmp_ok(scalar(grep { $_ > 0 } @sent), '>=', 2, "$workers workers: the work was shared");
	diag sprintf('%d workers, %d events: %.1f s', $workers, $n, time() - $t0);
}

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(routes => {
	bulk => { endpoint => 'shop', url => $d->url('/bulk'), timeout => 3 },
}, worker => { batch => 50, concurrency => 16 });

together($t, $d, 2, 2000, 'two');
together($t, $d, 8, 2000, 'eight');

# ---- --max-runtime and SIGTERM: stop claiming, finish in flight, record, exit
$d->plan('/bulk', 'sleep 1');
HookTest::Worker::accept_many($t, 200, prefix => 'rt');
my $t0 = time();
my ($rc, $log) = HookTest::Worker::worker($t, '--loop', '--max-runtime', '2', '--concurrency', '8');
my $took = time() - $t0;
is($rc, 0, '--max-runtime ends a --loop run with 0') or diag $log;
cmp_ok($took, '<', 5, 'within max-runtime plus one call');
is($t->sql("select count(*) from hookinbox.action where lease_token is not null"), 0,
	'--max-runtime: no claim left dangling');
my ($pid, $lf) = HookTest::Worker::worker_bg($t, '--loop', '--concurrency', '8');
sleep 1.5;
kill 'TERM', $pid;
waitpid $pid, 0;
is($? >> 8, 0, 'SIGTERM: exit 0');
like(HookTest::slurp($lf), qr/event=summary/, 'SIGTERM: summary line');
is($t->sql("select count(*) from hookinbox.action where lease_token is not null"), 0,
	'SIGTERM: no claim left dangling');
$d->plan('/bulk', '200');
HookTest::Worker::drain($t);
is($t->sql("select count(*) from hookinbox.action where state <> 'done'"), 0, 'the rest done later');

done_testing();
