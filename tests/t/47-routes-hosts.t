# SPDX-License-Identifier: ISC
# Hosts that disagree.  Worker A lacks route "b" that worker B has: A fans
# out b's events as unrouted and leaves b's actions alone; each worker
# remembers its routes' fingerprint and a worker whose routes differ from
# those another worker ran since its own last run says so once per run
# (without -v too: it is a warning), and stops as soon as the other stops;
# sql/reroute.sql (dry run first) fans the unrouted events out again, and B
# delivers them, each exactly once.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my ($t, $conf_b, $conf_a) = HookTest::Worker::two_hosts(lacking => 'b', routes => {
	a => { endpoint => 'shop', events => 'a.*', url => $d->url('/a'), timeout => 3 },
	b => { endpoint => 'shop', events => 'b.*', url => $d->url('/b'), timeout => 3 },
});

# A alone: its fingerprint, no warning
HookTest::Worker::accept_many($t, 3, prefix => 'ea', type => 'a.x');
HookTest::Worker::accept_many($t, 4, prefix => 'eb', type => 'b.x');
my ($rc, $out) = HookTest::Worker::run_once($conf_a);
is($rc, 0, 'worker A runs') or diag $out;
unlike($out, qr/routes-differ/, 'A: nothing to compare with yet');
is($t->sql("select count(*) from hookinbox.inbox where state = 'unrouted'"), 4, "A: b's events unrouted");
is(scalar(grep { $_->{path} eq '/a' } $d->requests), 3, "A: a's events delivered");

# B: new routes.  Its first run says nothing: A's configuration ran before
# B's existed, which on one host is a configuration changed in place, not
# hosts that disagree (else the warning, written without -v too, would go
# on for 24 h after every route added)
($rc, $out) = HookTest::Worker::run_once($conf_b);
is($rc, 0, 'worker B runs') or diag $out;
unlike($out, qr/routes-differ/, "B's first run: nothing to say (A ran before B's routes existed)");
my $fp_a = $t->sql("select fingerprint from hookinbox.worker_routes where routes not like '%b|order%'");
my $fp_b = $t->sql("select fingerprint from hookinbox.worker_routes where routes like '%b|order%'");
is($t->sql('select count(*) from hookinbox.worker_routes'), 2, 'two fingerprints remembered');
is(scalar(grep { $_->{path} eq '/b' } $d->requests), 0, 'B: unrouted events are not routed by themselves');

# A again: B ran since A's last run: one line, naming B's fingerprint
($rc, $out) = HookTest::Worker::run_once($conf_a);
my @lines = grep { /event=routes-differ/ } split /\n/, $out;
is(scalar @lines, 1, 'A: routes-differ said once') or diag $out;
like($lines[0] // '', qr/other=\Q$fp_b\E/, "A: names B's fingerprint");

# B again, without -v (as from cron): A ran since B's last run; that warning
# is all it prints, on stderr, and the run still succeeds
my $quiet = `@{[ HookTest::Worker::bin() ]} -c $conf_b --once 2>&1 >/dev/null`;
is($? >> 8, 0, 'B without -v: exit 0');
like($quiet, qr/\A[^\n]* level=warning event=routes-differ [^\n]*other=\Q$fp_a\E [^\n]*\n\z/,
	"B without -v: the routes-differ warning naming A's fingerprint, one line on stderr, nothing else")
	or diag $quiet;
# and once A has stopped (its routes changed, as when the route is added there
# too), B is quiet again at once, not for 24 h
$quiet = `@{[ HookTest::Worker::bin() ]} -c $conf_b --once 2>&1`;
is($quiet, '', 'B without -v, nobody else ran since: nothing at all') or diag $quiet;

# reroute: usage error, dry run, then for real
($rc, $out) = HookTest::Worker::reroute($t);
isnt($rc, 0, 'reroute.sql without a filter: usage error');
($rc, $out) = HookTest::Worker::reroute($t, endpoint => 'shop');
is($rc, 0, 'reroute.sql dry run') or diag $out;
like($out, qr/\b4 unrouted events match; dry run/, 'dry run: counts 4');
is($t->sql("select count(*) from hookinbox.inbox where state = 'unrouted'"), 4, 'dry run: nothing changed');
($rc, $out) = HookTest::Worker::reroute($t, endpoint => 'shop', type => 'b.%', go => 1);
is($rc, 0, 'reroute.sql go=1') or diag $out;
like($out, qr/\b4 unrouted events are pending again/, 'go: 4 pending again');
($rc, $out) = HookTest::Worker::run_once($conf_b);
is($t->sql("select count(*) from hookinbox.action where route = 'b' and state = 'done'"), 4,
	'B routes and delivers them');
my %eff = $d->effects;
my @keys = split /\n/, $t->sql("select idem_key from hookinbox.action");
is(scalar(grep { ($eff{$_} // 0) == 1 } @keys), 7, 'every event: exactly one effect downstream');
is(scalar($d->requests), 7, 'no event of route a was sent again');
is($t->sql("select count(*) from hookinbox.inbox where state <> 'dispatched'"), 0, 'nothing left unrouted');

# A worker in --loop runs for weeks: it compares its routes again every few
# minutes (shortened here), so a host with other routes started after it is
# still reported, without a reconnect or a reload
{
	my $log = $t->dir . '/loop-a.log';
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		$ENV{HOOKINBOX_ROUTES_CHECK_MS} = 1000;
		open STDERR, '>', $log or die $!;
		open STDOUT, '>&', \*STDERR or die $!;
		exec(HookTest::Worker::bin(), '-c', $conf_a, '--loop') or POSIX::_exit(127);
	}
	my $count = sub { scalar(() = HookTest::slurp($log) =~ /event=routes-differ/g) };
	# at its start it hears of B's runs above (since A's last run), once
	for (1 .. 100) { last if $count->() >= 1; select(undef, undef, undef, 0.1) }
	sleep 3; # three more checks: B has not run since, nothing more to say
	is($count->(), 1, 'A in --loop, quiet: B named once at the start, not again while B does not run')
		or diag HookTest::slurp($log);
	($rc, $out) = HookTest::Worker::run_once($conf_b); # B runs while A loops
	for (1 .. 100) { last if $count->() >= 2; select(undef, undef, undef, 0.1) }
	my $seen = HookTest::slurp($log);
	kill 'TERM', $pid;
	waitpid $pid, 0;
	is($count->(), 2, "A in --loop: B's new run is reported by the next check, without a reload")
		or diag $seen;
	like($seen, qr/level=warning event=routes-differ [^\n]*other=\Q$fp_b\E/, "the warning names B's routes");
}

done_testing;
