# SPDX-License-Identifier: ISC
# Every call is made under a live lease that outlives its timeout.  Two
# workers, lease 5 s, route timeout 3 s, a downstream answering in 2.5 s,
# few call slots so that claimed work queues behind slow calls: each
# action is called once, no call that answered in time is thrown away as
# lease-lost, and on an order = object route the order in which the
# downstream received each object's versions is the order the database
# recorded (a version it recorded stale was never sent).  SQL handlers
# (run one after another on the connection) keep their leases too.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/slow' => 'sleep 2.5', '/ord' => 'sleep 2.5' });
my $t = HookTest::Worker::setup(routes => {
	slow => { endpoint => 'shop', events => 'slow.*', url => $d->url('/slow'), timeout => 3 },
	ord => { endpoint => 'shop', events => 'ord.*', url => $d->url('/ord'), timeout => 3, order => 'object' },
	apply => { endpoint => 'shop', events => 'apply.*', handler => 'sql:app.slow', timeout => 3 },
}, worker => { lease => 5 });

sub two_workers {
	my ($conc) = @_;
	my @p = map { [HookTest::Worker::worker_bg($t, '--once', '--concurrency', $conc // 2)] } 1 .. 2;
	waitpid $_->[0], 0 for @p;
	my $logs = join '', map { HookTest::slurp($_->[1]) } @p;
	return $logs . HookTest::Worker::drain($t, timeout => 60, args => ['--concurrency', '2']);
}

# lease-lost reports: a recorded outcome refused because the lease was gone
sub lost_in_time {
	my ($log) = @_;
	return scalar grep { /event=lease-lost/ || (/outcome=lease-lost/ && /status=2\d\d/) } split /\n/, $log;
}

# ---- queued behind slow calls
HookTest::Worker::accept($t, event_id => "s$_", type => 'slow.x') for 1 .. 10;
my $log = two_workers();
my %calls;
$calls{ $_->{key} }++ for grep { $_->{path} eq '/slow' } $d->requests;
is(scalar(keys %calls), 10, 'slow: ten actions reached the downstream');
is(scalar(grep { $_ != 1 } values %calls), 0, 'slow: calls == actions (no key called twice)')
	or diag explain \%calls;
is(lost_in_time($log), 0, 'slow: no call that answered in time was lost') or diag $log;
is($t->sql("select count(*) from hookinbox.action where route = 'slow' and state = 'done' and attempts = 1"),
	10, 'slow: all done at the first attempt');
like($log, qr/claim_ahead=0/, 'the run says how far it claims ahead (lease 5 s, timeout 3 s: none)');

# ---- order = object under the same pressure: worker A claims version 1 of
# six objects (three rounds of two calls); version 2 arrives, worker B
# starts and claims whatever is due
$d->plan('/ord', 'sleep 2.8');
HookTest::Worker::accept($t, event_id => "o${_}_1", type => 'ord.updated', object_id => "obj$_", version => 1)
	for 1 .. 6;
my @p = ([HookTest::Worker::worker_bg($t, '--loop', '--max-runtime', '10', '--concurrency', '2')]);
sleep 1;
HookTest::Worker::accept($t, event_id => "o${_}_2", type => 'ord.updated', object_id => "obj$_", version => 2)
	for 1 .. 6;
push @p, [HookTest::Worker::worker_bg($t, '--loop', '--max-runtime', '9', '--concurrency', '2')];
waitpid $_->[0], 0 for @p;
$log = join('', map { HookTest::slurp($_->[1]) } @p) . HookTest::Worker::drain($t, timeout => 60);
my %got;
my $ordcalls = 0;
for my $r (sort { $a->{seq} <=> $b->{seq} } grep { $_->{path} eq '/ord' } $d->requests) {
	$ordcalls++;
	my ($o, $v) = $r->{event_id} =~ /^o(\d)_(\d)$/ or next;
	next if $r->{replay};
	push @{ $got{$o} }, $v;
}
for my $o (1 .. 6) {
	my @db = split /\n/, $t->sql("select i.event_version from hookinbox.action a join hookinbox.inbox i "
		. "on i.id = a.inbox_id where a.route = 'ord' and i.object_id = 'obj$o' and a.state = 'done' "
		. "order by a.done_at, a.id");
	is_deeply($got{$o} // [], \@db, "ord: obj$o reached the downstream in the order the database recorded");
	my @sorted = sort { $a <=> $b } @{ $got{$o} // [] };
	is_deeply($got{$o} // [], \@sorted, "ord: obj$o versions never went backwards");
}
is($ordcalls, $t->sql("select count(*) from hookinbox.action where route = 'ord' and state = 'done'"),
	'ord: every call is recorded done (stale ones were never sent)');
is($t->sql("select count(*) from hookinbox.action where route = 'ord' and state not in ('done', 'stale')"), 0,
	'ord: nothing left pending or parked');
is(lost_in_time($log), 0, 'ord: no call that answered in time was lost') or diag $log;

# ---- SQL handlers run one after another: the lease is renewed before each
$t->sql(q{create schema app;
	create table app.applied (event_id text, at timestamptz default clock_timestamp());
	create function app.slow(e jsonb) returns void language plpgsql as
		$$ begin perform pg_sleep(1); insert into app.applied (event_id) values (e->>'event_id'); end $$;
	grant usage on schema app to hookinbox_worker;
	grant insert on app.applied to hookinbox_worker;
	grant execute on function app.slow(jsonb) to hookinbox_worker;});
HookTest::Worker::accept($t, event_id => "h$_", type => 'apply.x') for 1 .. 6;
$log = two_workers(8);
is($t->sql("select count(*) from app.applied"), 6, 'handler: each event applied once');
is($t->sql("select count(*) from hookinbox.action where route = 'apply' and state = 'done' and attempts = 1"),
	6, 'handler: all done at the first attempt (no lease ran out while queued)') or diag $log;
unlike($log, qr/lease-lost/, 'handler: no lease lost');
my $renewed = 0;
$renewed += $_ for $log =~ /event=summary .* renewed=(\d+)/g;
cmp_ok($renewed, '>', 0, 'handler: leases were renewed before the later handlers ran') or diag $log;

# ---- claim_ahead and lease are checked together when the configuration loads
# (into the [worker] section the harness wrote: a section given twice is an error)
my $text = HookTest::slurp($t->config);
$text =~ s/^\[worker\]\n/[worker]\nclaim_ahead = 2\n/m or die "no [worker] section in the test configuration";
open my $fh, '>', $t->config or die $!;
print $fh $text;
close $fh;
my ($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 78, 'claim_ahead = 2 with timeout 3 s and lease 5 s: configuration error');
like($out, qr/claim_ahead = 2 with a route timeout of 3 s needs a lease of at least 9 s, not 5 s/,
	'and says what would fit');

done_testing();
