# The shipped Prometheus alert rules (etc/prometheus/hookinbox.rules.yml):
# promtool accepts them, promtool test rules fires each alert on its
# schedule (a stalled worker, no metrics, a failing downstream, parked
# actions, a failing database) and not before, and every metric the rules
# name is one a real worker run writes to its metrics file, with
# hookinbox_build_info among them.
use strict;
use warnings;
use Test::More;
use HookTest;
use WorkerHelp;

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
my $t = WorkerHelp::setup(routes => { local => { endpoint => 'shop', handler => 'sql:app.apply', timeout => 2 } });
$t->sql($WorkerHelp::APPLY_SQL);
WorkerHelp::accept($t, event_id => 'evt_metrics_1', type => 'invoice.paid');
my $file = $t->dir . '/hookinbox.prom';
my ($rc, $log) = WorkerHelp::worker($t, '--once', '--metrics-file', $file);
is($rc, 0, 'a worker run') or diag $log;
my $metrics = HookTest::slurp($file);
my %seen = map { $_ => 1 } $metrics =~ /^# TYPE (\S+) /mg;
for my $m (sort keys %named) {
	ok($seen{$m}, "the worker exports $m, which the rules use");
}
like($metrics, qr/^hookinbox_build_info\{program="hookinbox-worker",version="\d+\.\d+\.\d+"\} 1$/m, 'hookinbox_build_info');
done_testing();
