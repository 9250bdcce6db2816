# SPDX-License-Identifier: ISC
# The monitoring pipeline for real: the worker writes its metrics file into
# a textfile directory, node_exporter (Debian's prometheus-node-exporter)
# exports it, a Prometheus server started here scrapes it every second and
# evaluates the shipped alert rules (with their "for:" durations set to 0 s,
# the only change) every second.  A signature-failure burst (forged
# deliveries refused by the responder) fires HookinboxSignatureFailures for
# that endpoint; a stalled worker (its last run 15 minutes ago, by the test
# clock) fires HookinboxWorkerStalled; before either, neither fires.
# Cron-style runs, each delivering 2: the counters Prometheus reads never
# reset and the dashboard's rate() shows them.  The responders' request
# duration histogram (OpenTelemetry's names and buckets), the oldest pending
# action per route, held and parked counts by age; a delivery held for two
# days fires HookinboxHeldTooLong.  Every
# query of the shipped Grafana dashboard names only metrics this Prometheus
# holds.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::Worker;
use JSON::PP;
use HTTP::Tiny;
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64);
use POSIX ();
use Time::HiRes qw(sleep time);

my ($prom_bin, $ne_bin) = ('/usr/bin/prometheus', '/usr/bin/prometheus-node-exporter');
for my $b ($prom_bin, $ne_bin) {
	plan skip_all => "no $b (tools/install-deps installs prometheus and prometheus-node-exporter)" unless -x $b;
}
my $top = HookTest::top();
{
	my $bin = HookTest::slurp("$top/obj/test/hookinbox-worker");
	plan skip_all => 'sanitizer build: the pipeline is tested in the plain run'
		if index($bin, '__asan_init') >= 0 || index($bin, '__tsan_init') >= 0;
}
# route down: its downstream refuses connections, so its action stays open
# (retrying); route parkit parks what its handler refuses for good (SQLSTATE
# class ZP); endpoint shp (Shopify) holds a body sent under a second topic
my $shp_secret = 'shopify-live-secret-24680';
my $t = HookTest::Worker::setup(routes => { local => { endpoint => 'shop', handler => 'sql:app.apply', timeout => 2 },
		down => { endpoint => 'shop', url => 'http://127.0.0.1:1/', timeout => 2 },
		parkit => { endpoint => 'shop', handler => 'sql:app.park', timeout => 2 } },
	endpoints => { shop => { provider => 'stripe', secrets => ['whsec_live_0123456789abcdef'] },
		shp => { provider => 'shopify', secrets => [$shp_secret] } },
	extra => { no_lighttpd => 0, procs => 1 });
$t->sql($HookTest::Worker::APPLY_SQL);
$t->sql(q{create function app.park(e jsonb) returns void language plpgsql as $$
	begin
		if e->>'event_id' like 'perm%' then
			raise exception 'unknown customer' using errcode = 'ZP001';
		end if;
	end $$;
	grant execute on function app.park(jsonb) to hookinbox_worker;});
my $dir = $t->dir;
mkdir "$dir/textfile";
my $prom_file = "$dir/textfile/hookinbox.prom";
my @kids;
END { kill 'TERM', @kids if @kids; waitpid $_, 0 for @kids }

sub spawn {
	my ($log, @cmd) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		open STDIN, '<', '/dev/null';
		open STDOUT, '>', $log or POSIX::_exit(127);
		open STDERR, '>&', \*STDOUT;
		exec @cmd or POSIX::_exit(127);
	}
	push @kids, $pid;
	return $pid;
}

my $http = HTTP::Tiny->new(timeout => 5);
sub wait_for {
	my ($what, $cond, $secs) = @_;
	my $until = time + ($secs // 60);
	while (time < $until) {
		my $v = $cond->();
		return $v if $v;
		sleep 0.25;
	}
	diag "gave up waiting for $what";
	return;
}

sub forged {
	my ($n, $tag) = @_;
	for my $i (1 .. $n) {
		my $body = qq({"id":"evt_forged_${tag}_$i","type":"invoice.paid"});
		$t->post('shop', $body, { 'Stripe-Signature' => stripe_sig('whsec_not_the_secret_000', $body) });
	}
	$t->httpd->restart; # the responder writes its rejection counts when it stops
}

# a good run, one refused delivery and one duplicate already counted: the series exist before the burst
HookTest::Worker::accept($t, event_id => 'evt_live_1', type => 'invoice.paid');
{
	my $body = '{"id":"evt_live_signed","type":"invoice.paid"}';
	for my $i (1 .. 2) {
		my $r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig('whsec_live_0123456789abcdef', $body) });
		is($r->{status}, 200, "signed delivery $i answered 200") or diag $r->{content};
	}
}
HookTest::Worker::accept($t, event_id => 'perm_1', type => 'invoice.paid');
for my $topic ('orders/paid', 'orders/updated') {
	my $body = '{"id":4242,"total":"10.00"}';
	my $r = $t->post('shp', $body, { 'X-Shopify-Hmac-Sha256' => encode_base64(hmac_sha256($body, $shp_secret), ''),
		'X-Shopify-Topic' => $topic, 'X-Shopify-Event-Id' => "shp-$topic", 'Content-Type' => 'application/json' });
	is($r->{status}, 200, "shopify $topic answered 200");
}
is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'shp' and state = 'review'}), 1,
	'the second topic of one body is held for review');
forged(1, 'a');
my ($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom_file);
is($rc, 0, 'a worker run writes the metrics file') or diag $log;

# node_exporter on the textfile directory, Prometheus on node_exporter
my $ne_port = HookTest::free_port();
spawn("$dir/node_exporter.log", $ne_bin, "--web.listen-address=127.0.0.1:$ne_port", '--collector.disable-defaults',
	'--collector.textfile', "--collector.textfile.directory=$dir/textfile");
my $rules = HookTest::slurp("$top/etc/prometheus/hookinbox.rules.yml");
my $fors = ($rules =~ s/^(\s+for:) \S+$/$1 0s/mg);
ok($fors >= 9, "the shipped rules, $fors \"for:\" durations set to 0 s");
open my $fh, '>', "$dir/rules.yml" or die $!;
print $fh $rules;
close $fh;
my $pport = HookTest::free_port();
open $fh, '>', "$dir/prometheus.yml" or die $!;
print $fh <<"YML";
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $dir/rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$ne_port']
YML
close $fh;
mkdir "$dir/tsdb";
spawn("$dir/prometheus.log", $prom_bin, "--config.file=$dir/prometheus.yml", "--storage.tsdb.path=$dir/tsdb",
	"--web.listen-address=127.0.0.1:$pport", '--web.enable-lifecycle');

sub api {
	my ($path) = @_;
	my $r = $http->get("http://127.0.0.1:$pport/api/v1/$path");
	return $r->{success} ? eval { decode_json($r->{content}) } : undef;
}
sub query {
	my ($q) = @_;
	my $j = api('query?query=' . join('', map { sprintf '%%%02X', ord } split //, $q)) or return;
	return $j->{data}{result};
}
sub value {
	my ($q) = @_;
	my $r = query($q);
	return $r && @$r == 1 ? $r->[0]{value}[1] + 0 : undef;
}
sub firing {
	my ($name) = @_;
	my $j = api('alerts') or return ();
	return grep { $_->{labels}{alertname} eq $name && $_->{state} eq 'firing' } @{ $j->{data}{alerts} };
}

ok(wait_for('the worker metrics in Prometheus', sub { my $r = query('hookinbox_worker_last_run_ok'); $r && @$r }),
	'Prometheus scrapes the worker\'s metrics through node_exporter');
ok(wait_for('the rules loaded', sub { my $j = api('rules'); $j && @{ $j->{data}{groups} // [] } }), 'the rules are loaded');
ok(wait_for('a few evaluations', sub { my $r = query('count_over_time(hookinbox_rejections_total[1m])'); $r && @$r && $r->[0]{value}[1] >= 3 }),
	'a few scrapes of the rejection counter');
is(scalar(firing('HookinboxSignatureFailures')), 0, 'no burst yet: HookinboxSignatureFailures does not fire');
is(scalar(firing('HookinboxWorkerStalled')), 0, 'the worker ran just now: HookinboxWorkerStalled does not fire');

# ---- a signature-failure burst on endpoint shop
forged(12, 'b');
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom_file);
like(HookTest::slurp($prom_file), qr/^hookinbox_rejections_total\{endpoint="shop",reason="signature mismatch"\} 13$/m,
	'the worker exports the 13 refusals');
my ($alert) = wait_for('HookinboxSignatureFailures', sub { (firing('HookinboxSignatureFailures'))[0] });
ok($alert, 'HookinboxSignatureFailures fires');
is($alert && $alert->{labels}{endpoint}, 'shop', 'for endpoint shop');

# ---- cron-style runs, each delivering 2 signed events (and a duplicate of
# one): Prometheus sees one counter that only grows, and the dashboard's
# rate() shows the deliveries
my $calls = 'hookinbox_worker_calls_total{route="local",class="ok"}';
my $before = value($calls);
ok(defined $before, "Prometheus has $calls: $before") or $before = 0;
for my $run (1 .. 4) {
	for my $k (1 .. 2, 1) {
		my $body = qq({"id":"evt_cron_${run}_$k","type":"invoice.paid"});
		my $r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig('whsec_live_0123456789abcdef', $body) });
		is($r->{status}, 200, "run $run: delivery evt_cron_${run}_$k answered 200") or diag $r->{content};
	}
	($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom_file);
	is($rc, 0, "cron-style run $run") or diag $log;
	my $want = $before + 2 * $run;
	ok(wait_for("calls_total $want", sub { (value($calls) // -1) == $want }, 30),
		"after run $run Prometheus reads $calls = $want");
	sleep 2; # a few scrapes between runs, as minutes apart would give
}
is(value("resets(${calls}[5m])"), 0, 'no counter reset across the runs');
my $rate = query('sum by (route, class) (rate(hookinbox_worker_calls_total[5m]))');
my ($local) = grep { $_->{metric}{route} eq 'local' && $_->{metric}{class} eq 'ok' } @{ $rate // [] };
cmp_ok($local ? $local->{value}[1] : 0, '>', 0, 'the dashboard\'s rate(hookinbox_worker_calls_total[5m]) for local is above 0');
my $inc = value("increase(${calls}[5m])") // 0;
ok($inc >= 8 && $inc < 9.5, "increase() over the runs is the 8 deliveries ($inc, Prometheus' extrapolation)");
$inc = value('increase(hookinbox_worker_actions_total{route="local",outcome="done"}[5m])') // 0;
ok($inc >= 8 && $inc < 9.5, "actions_total{done}: $inc");

# the responders' histogram, OpenTelemetry's http.server.request.duration
$t->httpd->restart; # its counts are written when it stops (and every 10 s)
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom_file);
my $h = 'hookinbox_http_server_request_duration_seconds';
my %want = (accepted => 9, duplicate => 5);
for my $o (sort keys %want) {
	my $q = qq{sum(${h}_count{endpoint="shop",provider="stripe",outcome="$o",http_response_status_code="200"})};
	ok(wait_for("$o requests", sub { (value($q) // -1) == $want{$o} }, 30), "$q = $want{$o}") or diag value($q);
}
is(value(qq{sum(${h}_count{endpoint="shop",outcome="rejected",http_response_status_code="401"})}), 13,
	'13 forged requests: outcome rejected, status 401');
is(value(qq{sum(${h}_count{endpoint="shp",provider="shopify",outcome="review"})}), 1, 'the held one: outcome review');
my $les = query(qq{count by (le) (${h}_bucket{endpoint="shop",outcome="accepted"})}) // [];
is(join(' ', sort { $a <=> $b } map { $_->{metric}{le} eq '+Inf' ? 1e9 : $_->{metric}{le} } @$les),
	'0.005 0.01 0.025 0.05 0.075 0.1 0.25 0.5 0.75 1 2.5 5 7.5 10 1000000000', 'the advised buckets, and +Inf');
my $p99 = value(qq{histogram_quantile(0.99, sum by (le) (${h}_bucket{endpoint="shop",outcome="accepted"}))});
ok(defined $p99 && $p99 > 0 && $p99 <= 10, "p99 of accepted requests: $p99 s");
ok(value(qq{${h}_sum{endpoint="shop",outcome="accepted"}}) > 0, 'the sum of their durations');

# oldest pending per route, held and parked by age
cmp_ok(value('hookinbox_route_oldest_pending_action_age_seconds{route="down"}') // 0, '>', 0,
	'route down: its oldest pending action has an age');
is(value('hookinbox_route_oldest_pending_action_age_seconds{route="local"}') // 0, 0, 'route local: nothing pending (0, or no series)');
is(value('hookinbox_parked_actions{route="parkit",older_than="0s"}'), 1, 'route parkit: 1 parked');
is(value('hookinbox_parked_actions{route="parkit",older_than="1h"}'), 0, 'none parked for an hour');
is(value('hookinbox_inbox_held_events{endpoint="shp",older_than="0s"}'), 1, 'endpoint shp: 1 held');
is(value('hookinbox_inbox_held_events{endpoint="shp",older_than="1d"}'), 0, 'none held for a day');
is(scalar(firing('HookinboxHeldTooLong')), 0, 'HookinboxHeldTooLong does not fire');
# two days on: the held delivery's receipt moved back, as the clock cannot be
$t->sql(q{update hookinbox.inbox set received_at = received_at - interval '2 days' where state = 'review'});
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $prom_file);
($alert) = wait_for('HookinboxHeldTooLong', sub { (firing('HookinboxHeldTooLong'))[0] });
ok($alert, 'a delivery held for two days: HookinboxHeldTooLong fires');
is($alert && $alert->{labels}{endpoint}, 'shp', 'for endpoint shp');
is(value('hookinbox_inbox_held_events{endpoint="shp",older_than="1d"}'), 1, 'held for more than a day: 1');

# ---- a stalled worker: its last run, by the test clock, 15 minutes ago
($rc, $log) = HookTest::Worker::worker($t, { HOOKINBOX_TEST_NOW => time() - 900 }, '--once', '--metrics-file', $prom_file);
($alert) = wait_for('HookinboxWorkerStalled', sub { (firing('HookinboxWorkerStalled'))[0] });
ok($alert, 'HookinboxWorkerStalled fires');
like($alert ? $alert->{annotations}{summary} : '', qr/has not finished a run for 15m/, 'and says for how long');

# ---- the Grafana dashboard queries only what is there
my %have = map { $_ => 1 } @{ (api('label/__name__/values') // {})->{data} // [] };
my $dash = decode_json(HookTest::slurp("$top/etc/grafana/hookinbox-dashboard.json"));
my @exprs = map { $_->{expr} } map { @{ $_->{targets} // [] } } @{ $dash->{panels} };
ok(@exprs >= 8, scalar(@exprs) . ' dashboard queries');
for my $e (@exprs) {
	my @names = $e =~ /\b(hookinbox_\w+)/g;
	my @missing = grep { !$have{$_} } @names;
	is("@missing", '', "dashboard query \"$e\": every metric exported");
	my $r = query($e);
	ok($r && @$r, "and it returns data");
}
done_testing();
