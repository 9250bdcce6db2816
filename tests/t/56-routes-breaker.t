# SPDX-License-Identifier: ISC
# The circuit breaker does not starve a route whose downstream answers some
# calls.  Two routes side by side in one --loop worker, the same downstream
# behaviour, the breaker on (defaults) and off (breaker_failures = 0):
#   fail-first: every key's first call gets 500, its retry 200;
#   flaky: each call of a key fails with probability 1/2 (a plan per key);
# every event is delivered, once, on both, and the breaker-on route takes
# at most 1.25x the time of the other (goal: >= 0.8x the throughput).  A
# dead downstream (503 to everything): the breaker opens and, while open,
# calls come only as probes, one per cool-down.  The figures are printed.
# A probe answered 429 with Retry-After: the breaker closes and the route
# stays held for the Retry-After in hookinbox.route_state, where every other
# worker sees it: another worker makes no call meanwhile.
# A probe that times out after sending (the downstream applied it): its
# attempt is recorded as outcome unknown, never handed back as if unsent.
# The retries of fewer actions than breaker_failures (a flaky downstream's
# unlucky last few) never open it, however long they fail.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $n = 100;
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/dead' => '503' });
my $t = HookTest::Worker::setup(routes => {
	on => { endpoint => 'shop', events => 'on.*', url => $d->url('/on'), timeout => 2 },
	off => { endpoint => 'shop', events => 'off.*', url => $d->url('/off'), timeout => 2,
		breaker_failures => 0 },
	dead => { endpoint => 'shop', events => 'dead.*', url => $d->url('/dead'), timeout => 2,
		breaker_cooldown => 5 },
	pr => { endpoint => 'shop', events => 'pr.*', url => $d->url('/pr'), timeout => 2,
		breaker_cooldown => 5 },
	pu => { endpoint => 'shop', events => 'pu.*', url => $d->url('/pu'), timeout => 2,
		breaker_cooldown => 5, breaker_failures => 1 },
	few => { endpoint => 'shop', events => 'few.*', url => $d->url('/few'), timeout => 2 },
}, worker => { lease => 20, concurrency => 8, backoff_base => 1, backoff_cap => 4 });

sub key_of {
	my ($route, $ev, $type) = @_;
	return $t->sql("select hookinbox.action_key('$route', 'event', 'stripe', 'shop', 'default', '$ev', null, '$type')");
}

# plans per key, then accept both routes' events, run until done; seconds each route took
sub run_case {
	my ($name, $plan_of) = @_;
	for my $route (qw(on off)) {
		for my $i (1 .. $n) {
			$d->plan('key:' . key_of($route, "${name}${route}_$i", "$route.x"), $plan_of->());
		}
	}
	my $t0 = $t->sql('select extract(epoch from clock_timestamp())');
	HookTest::Worker::accept_many($t, $n, prefix => "${name}on", type => 'on.x');
	HookTest::Worker::accept_many($t, $n, prefix => "${name}off", type => 'off.x');
	my ($pid, $log) = HookTest::Worker::worker_bg($t, '--loop');
	my $until = time() + 120;
	my $q = "select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where i.event_id like '${name}%' and a.state <> 'done'";
	sleep 0.2 while time() < $until && ($t->sql("select count(*) from hookinbox.inbox where event_id like '${name}%' "
		. "and state = 'pending'") > 0 || $t->sql($q) > 0);
	kill 'TERM', $pid;
	waitpid $pid, 0;
	my %took;
	for my $route (qw(on off)) {
		$took{$route} = $t->sql("select coalesce(extract(epoch from max(a.done_at)) - $t0, 999) from hookinbox.action a "
			. "join hookinbox.inbox i on i.id = a.inbox_id where i.event_id like '${name}${route}_%' "
			. "and a.route = '$route' and a.state = 'done'");
		is($t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
			. "where i.event_id like '${name}${route}_%' and a.state = 'done'"), $n,
			"$name, breaker $route: every event delivered") or diag HookTest::slurp($log);
	}
	my %eff = $d->effects;
	my @keys = split /\n/, $t->sql("select a.idem_key from hookinbox.action a join hookinbox.inbox i "
		. "on i.id = a.inbox_id where i.event_id like '${name}%'");
	is(scalar(grep { ($eff{$_} // 0) == 1 } @keys), 2 * $n, "$name: every key had exactly one effect");
	my $ratio = $took{off} / ($took{on} > 0.1 ? $took{on} : 0.1);
	diag(sprintf('%s: breaker on %.1f s, off %.1f s: throughput on/off = %.2fx', $name, $took{on}, $took{off}, $ratio));
	cmp_ok($ratio, '>=', 0.8, "$name: breaker on delivers at >= 0.8x the rate of breaker off");
	return $ratio;
}

run_case('ff', sub { '500,200' });
srand(25);
run_case('fl', sub {
	my @p;
	push @p, '500' while rand() < 0.5 && @p < 8;
	return join(',', @p, '200');
});

# ---- dead: 503 to everything
HookTest::Worker::accept_many($t, 40, prefix => 'dd', type => 'dead.x');
my $t0 = time();
my ($pid, $log) = HookTest::Worker::worker_bg($t, '--loop');
my $opened;
while (time() < $t0 + 60) {
	last if ($opened = $t->sql("select count(*) from hookinbox.route_state where route = 'dead' and breaker <> 'closed'"));
	sleep 0.2;
}
ok($opened, sprintf('dead: the breaker opened (after %.1f s)', time() - $t0));
my $before = scalar(grep { $_->{path} eq '/dead' } $d->requests);
sleep 20;
my $during = scalar(grep { $_->{path} eq '/dead' } $d->requests) - $before;
kill 'TERM', $pid;
waitpid $pid, 0;
diag(sprintf('dead: %d calls before the breaker opened, %.1f calls per minute while open (cool-down 5 s)',
	$before, $during * 3));
cmp_ok($during, '<=', 6, "dead: while open only probes ($during calls in 20 s, one per 5 s cool-down)");
is($t->sql("select count(*) from hookinbox.action where route = 'dead' and state = 'parked'"), 0,
	'dead: no action parked while held');

# n events on route r, whose downstream answers 503, and a --loop worker
# until r's breaker opens: the worker's pid and log, the start, r's state
sub open_breaker {
	my ($r, $n) = @_;
	$d->plan("/$r", '503');
	HookTest::Worker::accept_many($t, $n, prefix => $r, type => "$r.x");
	my ($p, $l) = HookTest::Worker::worker_bg($t, '--loop');
	my $start = time();
	my $st = sub { $t->sql("select breaker from hookinbox.route_state where route = '$r'") };
	sleep 0.2 while time() < $start + 120 && $st->() !~ /open|probing/;
	like($st->(), qr/open|probing/, "$r: the breaker opened against 503s");
	return ($p, $l, $start, $st);
}

# ---- a probe answered 429 with Retry-After: closed, and held for every worker
my $state;
($pid, $log, $t0, $state) = open_breaker('pr', 10);
$d->plan('/pr', '429 Retry-After: 120');
sleep 0.2 while time() < $t0 + 90 && $state->() ne 'closed';
kill 'TERM', $pid;
waitpid $pid, 0;
is($state->(), 'closed', 'pr: the probe was answered 429: the breaker is closed') or diag HookTest::slurp($log);
cmp_ok($t->sql("select coalesce(extract(epoch from hold_until - now()), 0) from hookinbox.route_state "
	. "where route = 'pr'"), '>', 90, 'pr: and the route is held for the Retry-After, for every worker');
my $calls = scalar(grep { $_->{path} eq '/pr' } $d->requests);
my ($rc) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'pr: another worker runs');
is(scalar(grep { $_->{path} eq '/pr' } $d->requests), $calls, 'pr: and makes no call while the route is held');
is($t->sql("select count(*) from hookinbox.action where route = 'pr' and state = 'pending'"), 10,
	'pr: every action still pending');

# ---- a probe that times out after sending: recorded, outcome unknown
($pid, $log, $t0) = open_breaker('pu', 1);
my $pu_calls = sub { scalar(grep { $_->{path} eq '/pu' } $d->requests) };
my $pu_before = $pu_calls->();
$d->plan('/pu', 'sleep 5');
sleep 0.2 while time() < $t0 + 180 && $pu_calls->() == $pu_before;
ok($pu_calls->() > $pu_before, 'pu: the probe was sent');
# the probe's 2 s timeout, then its record
sleep 0.2 while time() < $t0 + 200
	&& $t->sql("select coalesce(last_error, '') from hookinbox.action where route = 'pu'") !~ /outcome unknown/;
kill 'TERM', $pid;
waitpid $pid, 0;
my %pu_eff = $d->effects;
my ($pu_key) = $t->sql("select idem_key from hookinbox.action where route = 'pu'");
is($pu_eff{$pu_key}, 1, 'pu: the downstream applied the probe');
like($t->sql("select last_error from hookinbox.action where route = 'pu'"), qr/outcome unknown/,
	'pu: the action says its last outcome is unknown, as the downstream has it')
	or diag HookTest::slurp($log);

# ---- the retries of fewer actions than breaker_failures (5) never open it:
# a flaky downstream's unlucky last few, failing while nothing else is called
$d->plan('/few', '503');
HookTest::Worker::accept_many($t, 3, prefix => 'few', type => 'few.x');
($pid, $log) = HookTest::Worker::worker_bg($t, '--loop');
my $few_start = time();
my $few_calls = sub { scalar(grep { $_->{path} eq '/few' } $d->requests) };
sleep 0.5 while time() < $few_start + 30 && ($few_calls->() < 8 || time() < $few_start + 12);
kill 'TERM', $pid;
waitpid $pid, 0;
cmp_ok($few_calls->(), '>=', 8, 'few: 3 actions failed again and again for over 10 s');
is($t->sql("select coalesce((select breaker from hookinbox.route_state where route = 'few'), 'closed')"),
	'closed', 'few: and the breaker stayed closed') or diag HookTest::slurp($log);

done_testing;
