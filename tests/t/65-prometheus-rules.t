# SPDX-License-Identifier: ISC
# The shipped Prometheus alert rules (etc/prometheus/hookinbox.rules.yml):
# promtool accepts them, promtool test rules fires each alert on its
# schedule (a stalled worker, no metrics, a failing downstream, parked
# actions, a failing database, a burst of signature mismatches) and not
# before, and every metric the rules name is one a real worker run writes to
# its metrics file, with hookinbox_build_info among them.  The rejections
# come the real way: forged deliveries refused by the responder, counted in
# hookinbox.rejection, exported by the worker.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::Worker;

my $promtool = '/usr/bin/promtool';
plan skip_all => "no $promtool (package prometheus; tools/install-deps installs it)" unless -x $promtool;
my $top = HookTest::top();
my $dir = "$top/etc/prometheus";

my $out = `$promtool check rules $dir/hookinbox.rules.yml 2>&1`;
is($?, 0, 'promtool check rules') or diag $out;
$out = `cd $dir && $promtool test rules hookinbox.rules.test.yml 2>&1`;
is($?, 0, 'promtool test rules: every alert fires when it should, and only then') or diag $out;

my $rules = HookTest::slurp("$dir/hookinbox.rules.yml");
my %named = map { $_ => 1 } map { /\b(hookinbox_\w+)/g } $rules =~ /^\s*expr: (.*)$/mg;
ok(keys %named >= 5, 'metrics the rules use: ' . join(' ', sort keys %named));

# a real run: one event, one route, the metrics file
my $t = HookTest::Worker::setup(routes => { local => { endpoint => 'shop', handler => 'sql:app.apply', timeout => 2 } },
	endpoints => { shop => { provider => 'stripe', secrets => ['whsec_rules_0123456789'] } },
	extra => { no_lighttpd => 0, procs => 1 });
$t->sql($HookTest::Worker::APPLY_SQL);
for my $i (1 .. 3) {
	my $body = qq({"id":"evt_forged_$i","type":"invoice.paid"});
	my $r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig('whsec_not_the_secret_000', $body) });
	is($r->{status}, 401, "forged delivery $i refused");
}
$t->httpd->stop; # the responder writes its rejection counts when it stops
HookTest::Worker::accept($t, event_id => 'evt_metrics_1', type => 'invoice.paid');
my $file = $t->dir . '/hookinbox.prom';
my ($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $file);
is($rc, 0, 'a worker run') or diag $log;
my $metrics = HookTest::slurp($file);
my %seen = map { $_ => 1 } $metrics =~ /^# TYPE (\S+) /mg;
for my $m (sort keys %named) {
	ok($seen{$m}, "the worker exports $m, which the rules use");
}
like($metrics, qr/^hookinbox_rejections_total\{endpoint="shop",reason="signature mismatch"\} 3$/m,
	'the three refused deliveries, counted by endpoint and reason');
like($metrics, qr/^hookinbox_build_info\{program="hookinbox-worker",version="\d+\.\d+\.\d+"\} 1$/m, 'hookinbox_build_info');
done_testing();
