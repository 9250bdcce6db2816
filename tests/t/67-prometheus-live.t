# SPDX-License-Identifier: ISC
# The monitoring pipeline for real: the worker writes its metrics file into
# a textfile directory, node_exporter (Debian's prometheus-node-exporter)
# exports it, a Prometheus server started here scrapes it every second and
# evaluates the shipped alert rules (with their "for:" durations set to 0 s,
# the only change) every second.  A signature-failure burst (forged
# deliveries refused by the responder) fires HookinboxSignatureFailures for
# that endpoint; a stalled worker (its last run 15 minutes ago, by the test
# clock) fires HookinboxWorkerStalled; before either, neither fires.  Every
# query of the shipped Grafana dashboard names only metrics this Prometheus
# holds.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use WorkerHelp;
use JSON::PP;
use HTTP::Tiny;
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
# route down: its downstream refuses connections, so its action stays open (retrying)
my $t = WorkerHelp::setup(routes => { local => { endpoint => 'shop', handler => 'sql:app.apply', timeout => 2 },
		down => { endpoint => 'shop', url => 'http://127.0.0.1:1/', timeout => 2 } },
	endpoints => { shop => { provider => 'stripe', secrets => ['whsec_live_0123456789abcdef'] } },
	extra => { no_lighttpd => 0, procs => 1 });
$t->sql($WorkerHelp::APPLY_SQL);
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
WorkerHelp::accept($t, event_id => 'evt_live_1', type => 'invoice.paid');
{
	my $body = '{"id":"evt_live_signed","type":"invoice.paid"}';
	for my $i (1 .. 2) {
		my $r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig('whsec_live_0123456789abcdef', $body) });
		is($r->{status}, 200, "signed delivery $i answered 200") or diag $r->{content};
	}
}
forged(1, 'a');
my ($rc, $log) = WorkerHelp::worker($t, '--once', '--metrics-file', $prom_file);
is($rc, 0, 'a worker run writes the metrics file') or diag $log;

# node_exporter on the textfile directory, Prometheus on node_exporter
my $ne_port = HookTest::free_port();
spawn("$dir/node_exporter.log", $ne_bin, "--web.listen-address=127.0.0.1:$ne_port", '--collector.disable-defaults',
	'--collector.textfile', "--collector.textfile.directory=$dir/textfile");
my $rules = HookTest::slurp("$top/etc/prometheus/hookinbox.rules.yml");
my $fors = ($rules =~ s/^(\s+for:) \S+$/$1 0s/mg);
ok($fors >= 7, "the shipped rules, $fors \"for:\" durations set to 0 s");
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
($rc, $log) = WorkerHelp::worker($t, '--once', '--metrics-file', $prom_file);
like(HookTest::slurp($prom_file), qr/^hookinbox_rejections_total\{endpoint="shop",reason="signature mismatch"\} 13$/m,
	'the worker exports the 13 refusals');
my ($alert) = wait_for('HookinboxSignatureFailures', sub { (firing('HookinboxSignatureFailures'))[0] });
ok($alert, 'HookinboxSignatureFailures fires');
is($alert && $alert->{labels}{endpoint}, 'shop', 'for endpoint shop');

# ---- a stalled worker: its last run, by the test clock, 15 minutes ago
($rc, $log) = WorkerHelp::worker($t, { HOOKINBOX_TEST_NOW => time() - 900 }, '--once', '--metrics-file', $prom_file);
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
