# SPDX-License-Identifier: ISC
# Routes do not hurt each other.  A dead route (its downstream answers
# after the route's timeout) beside a healthy one: the healthy route's
# latency, measured in the same run with and without the dead neighbour,
# stays within a small factor; the dead route is capped at its share of
# the call slots, its breaker opens once every call failed for the
# breaker's window (at least breaker_failures of them), and the actions it
# holds keep their attempts.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/dead' => 'sleep 3', '/ok' => '200' });
my $t = HookTest::Worker::setup(routes => {
	dead => { endpoint => 'shop', events => 'dead.*', url => $d->url('/dead'), timeout => 2,
		breaker_failures => 4, breaker_cooldown => 60 },
	ok => { endpoint => 'shop', events => 'ok.*', url => $d->url('/ok'), timeout => 2 },
}, worker => { lease => 10, concurrency => 4 });

# the healthy route's latency: from the worker's start until its last action is done
sub healthy_run {
	my ($prefix, $n) = @_;
	HookTest::Worker::accept_many($t, $n, prefix => $prefix, type => 'ok.x');
	my $t0 = $t->sql('select extract(epoch from clock_timestamp())');
	my ($pid, $log) = HookTest::Worker::worker_bg($t, '--once');
	my $latency;
	my $until = time() + 60;
	while (time() < $until) {
		my $left = $t->sql("select count(*) from hookinbox.inbox i left join hookinbox.action a "
			. "on a.inbox_id = i.id and a.state = 'done' where i.event_id like '${prefix}_%' and a.id is null");
		if ($left == 0) {
			$latency = $t->sql("select extract(epoch from max(a.done_at)) - $t0 from hookinbox.action a "
				. "join hookinbox.inbox i on i.id = a.inbox_id where i.event_id like '${prefix}_%'");
			last;
		}
		sleep 0.05;
	}
	waitpid $pid, 0;
	return ($latency, HookTest::slurp($log));
}

my ($alone, $log_alone) = healthy_run('alone', 16);
ok(defined $alone, "healthy route alone: every action done in ${\ ($alone // 'n/a')} s") or diag $log_alone;

# 32 actions of the dead route, older than the healthy ones: claimed first by due_at
HookTest::Worker::accept_many($t, 32, prefix => 'dead', type => 'dead.x');
$t->sql("update hookinbox.inbox set received_at = received_at - interval '1 minute' where event_id like 'dead_%'");
my ($with, $log_with) = healthy_run('beside', 16);
ok(defined $with, "healthy route beside a dead one: every action done in ${\ ($with // 'n/a')} s")
	or diag $log_with;
my $base = $alone > 0.5 ? $alone : 0.5;
my $ratio = ($with // 99) / $base;
cmp_ok($ratio, '<', 4, sprintf('latency with a dead neighbour / alone = %.2f (%.2f s / %.2f s)',
	$ratio, $with // -1, $alone));

# each healthy event had its one effect downstream
my %eff = $d->effects;
my @ok_keys = split /\n/, $t->sql("select idem_key from hookinbox.action where route = 'ok'");
is(scalar(grep { ($eff{$_} // 0) == 1 } @ok_keys), 32, 'every healthy action: exactly one effect');

# the dead route never had more than its share of the slots (half of 4)
my @dead_req = grep { $_->{path} eq '/dead' } $d->requests;
my $calls = scalar @dead_req;
# the breaker opens once every call failed for 10 s (GATE_BREAKER_WINDOW_MS),
# at least 4 of them: calls of 2 s, 2 at a time, 2 more in flight
cmp_ok($calls, '<=', 12 + 2, "dead route: $calls calls before its breaker opened (10 s of failures, 2 at a time)");
cmp_ok($calls, '>=', 8, 'dead route: the breaker opened only after failing for the window');
like($log_with, qr/route=dead state=open/, 'the breaker opening is logged');
is($t->sql("select breaker || ' ' || (hold_until > now() + interval '30 seconds')::text "
	. "from hookinbox.route_state where route = 'dead'"), 'open true',
	'route_state: the dead route is open and held for its cool-down');
is($t->sql("select count(*) from hookinbox.action where route = 'dead' and state = 'pending'"), 32,
	'every dead action still pending (none parked)');
is($t->sql("select sum(attempts) from hookinbox.action where route = 'dead'"), $calls,
	'the held actions kept their attempts: attempts used = calls made');

# another run while the breaker is open: nothing of the dead route is claimed
my ($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'a run while the breaker is open') or diag $out;
is(scalar(grep { $_->{path} eq '/dead' } $d->requests), $calls, 'no call to the held route');

# the cool-down passes: the probe is a retry (the call most likely to be
# answered), not a fresh action; this downstream did the timed-out call and
# replays its answer to the retry: the breaker closes at once, then opens
# again once fresh calls time out for the window
$t->sql("update hookinbox.route_state set hold_until = now() where route = 'dead'");
($rc, $out) = HookTest::Worker::worker($t, '--once');
my @after = (grep { $_->{path} eq '/dead' } $d->requests)[$calls .. $#{[grep { $_->{path} eq '/dead' } $d->requests]}];
ok(@after && $after[0]{attempt} >= 2 && $after[0]{status} == 200,
	"after the cool-down: the probe is a retry, answered (attempt $after[0]{attempt}, status $after[0]{status})")
	or diag $out;
like($out, qr/route=dead state=closed .*probe answered/, 'the answered probe closes the breaker');
my $calls2 = scalar(grep { $_->{path} eq '/dead' } $d->requests);
is($t->sql("select sum(attempts) from hookinbox.action where route = 'dead'"), $calls2,
	'attempts used = calls made (handed-back actions used none)');
is($t->sql("select breaker from hookinbox.route_state where route = 'dead'"), 'open',
	'fresh calls timing out for the window: open again');

# the downstream recovers: the probe closes the breaker and the rest follows
$d->plan('/dead', '200');
$t->sql("update hookinbox.route_state set hold_until = now() where route = 'dead'");
HookTest::Worker::drain($t, timeout => 60);
is($t->sql("select count(*) from hookinbox.action where route = 'dead' and state = 'done'"), 32,
	'after recovery: every dead-route action done');
is($t->sql("select breaker || coalesce(hold_until::text, '') from hookinbox.route_state where route = 'dead'"),
	'closed', 'breaker closed, no hold');

done_testing;
