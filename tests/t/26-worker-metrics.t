# SPDX-License-Identifier: ISC
# The worker's metrics file (Prometheus text format for node_exporter's
# textfile collector) after runs with known outcomes, checked against the
# database; --metrics-file over [worker] metrics_file; written atomically;
# and [log] format = json: every line one JSON object, no body, no secret.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, secret => $HookTest::Worker::SECRET,
	plan => { '/bad' => '400', '/flaky' => '500', '/slow' => 'sleep 3' });
my $refused = 'http://127.0.0.1:' . HookTest::free_port() . '/nobody';
my $t = HookTest::Worker::setup(routes => {
	ok => { endpoint => 'shop', events => 'ok.*', url => $d->url('/ok'), timeout => 2,
		secrets => [$HookTest::Worker::SECRET] },
	bad => { endpoint => 'shop', events => 'bad.*', url => $d->url('/bad'), timeout => 2 },
	flaky => { endpoint => 'shop', events => 'flaky.*', url => $d->url('/flaky'), timeout => 2 },
	slow => { endpoint => 'shop', events => 'slow.*', url => $d->url('/slow'), timeout => 1 },
	refused => { endpoint => 'shop', events => 'refused.*', url => $refused, timeout => 2 },
	idle => { endpoint => 'gh', events => '*', url => $d->url('/idle'), timeout => 2 },
}, worker => { metrics_file => "$tmpd/conf.prom", backoff_base => 60, backoff_cap => 120 },
   extra => { extra_config => "[log]\nformat = json\n" });

# (backoff of a minute: a retry is never due within a run, however slow the
# build, so each run's counts are exact)

# parse a text-format file: { families => {name => type}, samples => [[name, {labels}, value]] }
sub parse_prom {
	my ($file) = @_;
	my $text = HookTest::slurp($file);
	my (%type, %help, @s, @bad);
	for my $line (split /\n/, $text) {
		if ($line =~ /^# HELP (\S+) (.+)$/) { $help{$1} = $2; next }
		if ($line =~ /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/) { $type{$1} = $2; next }
		if ($line =~ /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.]+(?:e[+-]?\d+)?|\+Inf|NaN)$/) {
			my ($name, $lab, $v) = ($1, $2 // '', $3);
			my %l;
			while ($lab =~ /\G(\w+)="((?:[^"\\]|\\.)*)",?/gc) { $l{$1} = $2 }
			push @bad, $line if (pos($lab) // 0) != length $lab;
			push @s, [$name, \%l, $v];
			next;
		}
		push @bad, $line;
	}
	return { type => \%type, help => \%help, samples => \@s, bad => \@bad, text => $text };
}

sub value {
	my ($p, $name, %l) = @_;
	for my $s (@{ $p->{samples} }) {
		next unless $s->[0] eq $name;
		next if grep { ($s->[1]{$_} // '') ne $l{$_} } keys %l;
		return $s->[2];
	}
	return undef;
}

sub family {
	my ($name) = @_;
	return $name =~ s/_(bucket|sum|count)$//r;
}

my $marker = 'body-marker-7f3a9c';
for my $i (1 .. 3) {
	HookTest::Worker::accept($t, event_id => "evt_ok$i", type => 'ok.x', body => qq({"id":"evt_ok$i","note":"$marker"}));
}
HookTest::Worker::accept($t, event_id => 'evt_bad', type => 'bad.x', body => qq({"id":"evt_bad","note":"$marker"}));
HookTest::Worker::accept($t, event_id => 'evt_flaky', type => 'flaky.x');
HookTest::Worker::accept($t, event_id => 'evt_slow', type => 'slow.x');
HookTest::Worker::accept($t, event_id => 'evt_refused', type => 'refused.x');
HookTest::Worker::accept($t, event_id => 'evt_none', type => 'nothing.x');   # unrouted

my $prom = "$tmpd/run1.prom";
my $t0 = time();
my $umask = umask 077; # an administrator's strict umask (node_exporter is another user)
my ($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
umask $umask;
is($rc, 0, 'worker --once exits 0') or diag $log;
ok(-s $prom, '--metrics-file written');
is(sprintf('%04o', (stat $prom)[2] & 07777), '0644', 'mode 0644 under umask 077: node_exporter can read it');
ok(!-e "$tmpd/conf.prom", '--metrics-file overrides [worker] metrics_file');
ok(!-e "$prom.tmp", 'no temporary file left behind (written to .tmp, renamed)');

my $p = parse_prom($prom);
is_deeply($p->{bad}, [], 'every line is a comment or a well-formed sample') or diag $p->{text};
my @untyped = grep { !$p->{type}{ family($_->[0]) } } @{ $p->{samples} };
is(scalar @untyped, 0, 'every sample has a # TYPE') or diag explain \@untyped;
my @nohelp = grep { !$p->{help}{$_} } keys %{ $p->{type} };
is_deeply(\@nohelp, [], 'every family has a # HELP');
is(scalar(grep { $_->[0] !~ /^hookinbox_/ } @{ $p->{samples} }), 0, 'all names are hookinbox_*');
my %seen;
my @dup = grep { $seen{ $_->[0] . JSON::PP->new->canonical->encode($_->[1]) }++ } @{ $p->{samples} };
is(scalar @dup, 0, 'no duplicate series');

# calls by route and status class
my %want = (ok => '2xx', bad => '4xx', flaky => '5xx', slow => 'timeout', refused => 'error');
for my $route (sort keys %want) {
	my $n = $route eq 'ok' ? 3 : 1;
	is(value($p, 'hookinbox_worker_calls_total', route => $route, class => $want{$route}), $n,
		"calls_total{route=$route,class=$want{$route}} = $n");
}
is(value($p, 'hookinbox_worker_calls_total', route => 'ok', class => '5xx'), 0, 'other classes are present at 0');
is(value($p, 'hookinbox_worker_calls_total', route => 'idle', class => '2xx'), 0,
	'a configured route without calls has its series at 0');
is($p->{type}{hookinbox_worker_calls_total}, 'counter', 'calls_total is a counter');

# the latency histogram
is($p->{type}{hookinbox_worker_call_duration_seconds}, 'histogram', 'call duration is a histogram');
for my $route (sort keys %want) {
	my @b = map { [$_->[1]{le}, $_->[2]] }
		grep { $_->[0] eq 'hookinbox_worker_call_duration_seconds_bucket' && $_->[1]{route} eq $route }
		@{ $p->{samples} };
	my @v = map { $_->[1] } @b;
	is_deeply([grep { $v[$_] < $v[$_ - 1] } 1 .. $#v], [], "$route: buckets are cumulative");
	is($b[-1][0], '+Inf', "$route: the last bucket is +Inf");
	is($b[-1][1], value($p, 'hookinbox_worker_call_duration_seconds_count', route => $route),
		"$route: +Inf bucket = _count");
}
is(value($p, 'hookinbox_worker_call_duration_seconds_count', route => 'ok'), 3, 'ok: 3 calls timed');
is(value($p, 'hookinbox_worker_call_duration_seconds_bucket', route => 'slow', le => '0.5'), 0,
	'slow: the timed-out call is not under 0.5 s');
cmp_ok(value($p, 'hookinbox_worker_call_duration_seconds_sum', route => 'slow'), '>=', 0.9,
	'slow: _sum holds the 1 s timeout');

# actions this run recorded, against the database
sub db_count {
	my ($route, $where) = @_;
	return $t->sql("select count(*) from hookinbox.action where route = '$route' and $where");
}
is(value($p, 'hookinbox_worker_actions_total', route => 'ok', outcome => 'done'), 3, 'actions_total ok done = 3');
is(db_count('ok', "state = 'done'"), 3, 'database: 3 done');
is(value($p, 'hookinbox_worker_actions_total', route => 'bad', outcome => 'parked'), 1, 'actions_total bad parked = 1');
is(db_count('bad', "state = 'parked'"), 1, 'database: 1 parked');
is(value($p, 'hookinbox_worker_actions_total', route => 'flaky', outcome => 'retry'), 1, 'actions_total flaky retry = 1');

# database-wide gauges
for my $route (qw(flaky slow refused)) {
	is(value($p, 'hookinbox_actions', route => $route, state => 'retrying'),
		db_count($route, "state = 'pending' and attempts > 0"), "actions{route=$route,state=retrying} = database");
	is(value($p, 'hookinbox_actions', route => $route, state => 'pending'), 1, "actions{route=$route,state=pending} = 1");
}
is(value($p, 'hookinbox_actions', route => 'bad', state => 'parked'), db_count('bad', "state = 'parked'"),
	'actions{route=bad,state=parked} = database');
is(value($p, 'hookinbox_inbox_accepted_last_hour', endpoint => 'shop'),
	$t->sql("select count(*) from hookinbox.inbox where endpoint = 'shop'"), 'accepted_last_hour{endpoint=shop} = inbox rows');
is(value($p, 'hookinbox_inbox_pending_events', endpoint => 'shop'), 0, 'nothing pending in the inbox');
is(value($p, 'hookinbox_oldest_pending_event_age_seconds'), '0.000', 'oldest pending event age 0 when none');
is(value($p, 'hookinbox_worker_last_run_done'), 3, 'last_run_done');
is(value($p, 'hookinbox_worker_last_run_ok'), 1, 'last_run_ok');
my $dur = value($p, 'hookinbox_worker_last_run_duration_seconds');
cmp_ok($dur, '>=', 0.9, 'run duration covers the 1 s timeout');
cmp_ok($dur, '<=', time() - $t0 + 1, 'and is no longer than the run');
cmp_ok(abs(value($p, 'hookinbox_worker_last_run_timestamp_seconds') - time()), '<=', 30, 'last run timestamp is now');

# ages: make the open actions old, out of reach of the next run, and look again
$t->sql("update hookinbox.action set created_at = now() - interval '1000 seconds', due_at = now() + interval '1 hour' "
	. "where state = 'pending'");
$t->sql("update hookinbox.action set updated_at = now() - interval '5000 seconds' where state = 'parked'");
HookTest::Worker::accept($t, event_id => 'evt_gh', endpoint => 'gh', provider => 'github', account => 'gh', type => 'push');
$t->sql("update hookinbox.inbox set received_at = now() - interval '300 seconds' where event_id = 'evt_gh'");
($rc, $log) = HookTest::Worker::worker($t, '--once', '--batch', '1', '--metrics-file', $prom);
is($rc, 0, 'second run exits 0') or diag $log;
$p = parse_prom($prom);
my $age = value($p, 'hookinbox_oldest_pending_action_age_seconds');
cmp_ok($age, '>=', 1000, "oldest pending action age ($age) >= 1000");
cmp_ok($age, '<', 1030, 'and about 1000');
$age = value($p, 'hookinbox_oldest_parked_action_age_seconds');
cmp_ok($age, '>=', 5000, "oldest parked action age ($age) >= 5000");
cmp_ok($age, '<', 5030, 'and about 5000');
is(value($p, 'hookinbox_worker_calls_total', route => 'ok', class => '2xx'), 3,
	'counters count across runs: the first run\'s three calls are kept (t/66 tests this in full)');
is(value($p, 'hookinbox_worker_calls_total', route => 'idle', class => '2xx'), 1, 'the gh event was delivered');
is(value($p, 'hookinbox_inbox_accepted_last_hour', endpoint => 'gh'), 1, 'accepted_last_hour{endpoint=gh} = 1');

# a pending inbox row, held by another transaction so that the fan-out
# (FOR UPDATE SKIP LOCKED) passes it by: its count and age come from the
# partial index inbox_pending
HookTest::Worker::accept($t, event_id => 'evt_wait', type => 'nothing.x');
$t->sql("update hookinbox.inbox set received_at = now() - interval '700 seconds' where event_id = 'evt_wait'");
my $holder = fork // die "fork: $!";
if ($holder == 0) {
	eval { $t->sql("begin; select 1 from hookinbox.inbox where event_id = 'evt_wait' for update; "
		. "select pg_sleep(4); commit") };
	POSIX::_exit(0);
}
sleep 1;
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
is($rc, 0, 'third run exits 0') or diag $log;
$p = parse_prom($prom);
is(value($p, 'hookinbox_inbox_pending_events', endpoint => 'shop'), 1, 'inbox_pending_events{endpoint=shop} = 1');
$age = value($p, 'hookinbox_oldest_pending_event_age_seconds');
cmp_ok($age, '>=', 700, "oldest pending event age ($age) >= 700");
cmp_ok($age, '<', 730, 'and about 700');
waitpid $holder, 0;

# what blocks a route: an operator's pause, a hold (Retry-After, a breaker's
# cool-down), an open breaker; a route never blocked has no series (no row
# in route_state), one blocked once keeps its series at 0 after
is(value($p, 'hookinbox_route_paused', route => 'ok'), undef, 'no route blocked yet: no route_paused series');
$t->sql("select hookinbox.route_pause('bad', true, 'test: paused')");
$t->sql("select hookinbox.route_pause('ok', true, 'test: paused'), hookinbox.route_pause('ok', false, 'test: resumed')");
$t->sql("insert into hookinbox.route_state (route, hold_until, breaker, reason) "
	. "values ('flaky', now() + interval '600 seconds', 'open', 'test: open')");
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
is($rc, 0, 'a run with a route paused and one held') or diag $log;
$p = parse_prom($prom);
is(value($p, 'hookinbox_route_paused', route => 'bad'), 1, 'route_paused{route=bad} = 1');
is(value($p, 'hookinbox_route_paused', route => 'flaky'), 0, 'route_paused{route=flaky} = 0');
my $hold = value($p, 'hookinbox_route_hold_remaining_seconds', route => 'flaky');
cmp_ok($hold, '>', 570, "hold_remaining{route=flaky} ($hold) about 600");
cmp_ok($hold, '<=', 600, 'and not more');
is(value($p, 'hookinbox_route_breaker_open', route => 'flaky'), 1, 'breaker_open{route=flaky} = 1');
is(value($p, 'hookinbox_route_paused', route => 'ok'), 0, 'route_paused{route=ok} = 0 (paused, then resumed)');
is(value($p, 'hookinbox_route_hold_remaining_seconds', route => 'ok'), '0.000', 'hold_remaining{route=ok} = 0');
is(value($p, 'hookinbox_route_breaker_open', route => 'ok'), 0, 'breaker_open{route=ok} = 0');
$t->sql("delete from hookinbox.route_state");

# [log] format = json: one object per line, call and summary lines, no body, no secret
my $all = join("\n", map { HookTest::slurp($_) } glob($t->dir . '/worker.*.log'));
my @lines = grep { length } split /\n/, $all;
my @bad = grep { !eval { ref decode_json($_) eq 'HASH' } } @lines;
is_deeply(\@bad, [], 'every log line of every run is a JSON object') or diag join("\n", @bad);
my @objs = map { decode_json($_) } @lines;
my @calls = grep { ($_->{event} // '') eq 'call' } @objs;
ok(scalar(@calls) >= 1, 'call lines');
ok((grep { ($_->{route} // '') eq 'idle' && $_->{status} eq '200' && $_->{outcome} eq 'done' } @calls),
	'a call line has route, status and outcome');
ok((grep { ($_->{event} // '') eq 'summary' && defined $_->{done} } @objs), 'a summary line');
unlike($all, qr/\Q$marker\E/, 'no body in the logs');
unlike($all, qr/\Q$HookTest::Worker::SECRET\E|whsec_/, 'no secret in the logs');
like($all, qr/"event":"call".*"route":"slow".*"error":"timeout/, 'the timeout is logged as such');
# numbers are JSON numbers (200, not "200"); a run's first line (-v) names version and configuration
my @raw_calls = grep { /"event":"call"/ } @lines;
is_deeply([grep { !/"action":\d+,"attempt":\d+,"status":-?\d+,"duration_ms":\d+,/ } @raw_calls], [],
	'call lines: action, attempt, status and duration_ms are numbers') or diag join("\n", @raw_calls);
ok((grep { /"outcome":"retry"/ && /"retry_in_s":\d+(?:\.\d+)?[,}]/ } @raw_calls), 'retry_in_s is a number');
my @raw_sum = grep { /"event":"summary"/ } @lines;
is_deeply([grep { !/"done":\d+,/ || !/"duration_ms":\d+,/ || !/"exit":\d+\}/ || (s/^\{"ts":"[^"]*"//r) =~ /":"\d/ } @raw_sum], [],
	'summary lines: every count and duration is a number') or diag join("\n", @raw_sum);
my $conf = $t->config;
for my $f (glob($t->dir . '/worker.*.log')) {
	my ($first) = split /\n/, HookTest::slurp($f);
	my $o = eval { decode_json($first // '') } // {};
	ok(($o->{event} // '') eq 'start' && ($o->{version} // '') =~ /^\d+\.\d+\.\d+$/ && ($o->{config} // '') eq $conf,
		"-v: the run's first line names version and configuration") or diag $first;
}

done_testing();
