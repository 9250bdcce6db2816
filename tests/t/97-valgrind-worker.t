# SPDX-License-Identifier: ISC
# The worker under valgrind (memcheck, full leak check): a small scenario
# with a signed call, a retry (500 then 200), a park (400), a SQL handler
# route, the metrics file, --health-check, and a --loop run reloaded with
# SIGHUP (a good file, then a bad one) and stopped with SIGTERM.  Every run
# must report zero errors and zero definite or indirect leaks.
use strict;
use warnings;
use Test::More;
use POSIX ();
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my ($vg) = grep { -x } map { "$_/valgrind" } split /:/, $ENV{PATH} // '/usr/bin';
plan skip_all => 'valgrind is not installed' unless $vg;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, secret => $HookTest::Worker::SECRET,
	plan => { '/flaky' => '500,200', '/bad' => '400' });
my $t = HookTest::Worker::setup(routes => {
	ok => { endpoint => 'shop', events => 'ok.*', url => $d->url('/ok'), timeout => 3,
		secrets => [$HookTest::Worker::SECRET] },
	flaky => { endpoint => 'shop', events => 'flaky.*', url => $d->url('/flaky'), timeout => 3 },
	bad => { endpoint => 'shop', events => 'bad.*', url => $d->url('/bad'), timeout => 3 },
	local => { endpoint => 'shop', events => 'local.*', handler => 'sql:app.apply_event', timeout => 3 },
}, worker => { lease => 10, metrics_file => "$tmpd/worker.prom" },
   extra => { extra_config => "[log]\nformat = json\n" });
$t->sql(<<'SQL');
create schema app;
create table app.effect (event_id text not null);
create function app.apply_event(e jsonb) returns void language sql
	as $$ insert into app.effect (event_id) values (e->>'event_id') $$;
grant usage on schema app to hookinbox_worker;
grant insert on app.effect to hookinbox_worker;
grant execute on function app.apply_event(jsonb) to hookinbox_worker;
SQL

my $n = 0;
sub vg_wrap {
	my $logf = $t->dir . '/vg.' . ++$n . '.log';
	@HookTest::Worker::WRAP = ($vg, '--quiet', '--leak-check=full', '--show-leak-kinds=definite,indirect',
		'--errors-for-leak-kinds=definite,indirect', '--error-exitcode=42', '--num-callers=30',
		"--log-file=$logf", '--xml=yes', "--xml-file=$logf.xml");
	return $logf;
}

sub check_vg {
	my ($logf, $what) = @_;
	my $text = HookTest::slurp($logf);
	my $xml = HookTest::slurp("$logf.xml");
	like($xml, qr{<state>FINISHED</state>}, "$what: ran under valgrind to the end (leak check done)");
	unlike($xml, qr{<error>}, "$what: no valgrind error record");
	is($text, '', "$what: valgrind reports nothing (no errors, no definite or indirect leaks)")
		or diag $text;
}

my $t0 = time();
HookTest::Worker::accept($t, event_id => "v_ok$_", type => 'ok.x') for 1 .. 2;
HookTest::Worker::accept($t, event_id => 'v_flaky', type => 'flaky.x');
HookTest::Worker::accept($t, event_id => 'v_bad', type => 'bad.x');
HookTest::Worker::accept($t, event_id => 'v_local', type => 'local.x');
HookTest::Worker::accept($t, event_id => 'v_none', type => 'none.x');

my $logf = vg_wrap();
my ($rc, $log) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'run 1 exits 0 (42 would be a valgrind error)') or diag $log;
check_vg($logf, 'run 1');
is(HookTest::Worker::action($t, 'v_ok1')->{state}, 'done', 'signed call done');
is(HookTest::Worker::action($t, 'v_bad')->{state}, 'parked', '400 parked');
is(HookTest::Worker::action($t, 'v_local')->{state}, 'done', 'SQL handler done');
is(HookTest::Worker::action($t, 'v_flaky')->{state}, 'pending', '500: to be retried');

$t->sql("update hookinbox.action set due_at = now() where state = 'pending'");
$logf = vg_wrap();
($rc, $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', "$tmpd/run2.prom");
is($rc, 0, 'run 2 exits 0') or diag $log;
check_vg($logf, 'run 2 (the retry)');
is(HookTest::Worker::action($t, 'v_flaky')->{state}, 'done', 'retry done');
like(HookTest::slurp("$tmpd/run2.prom"), qr/^hookinbox_worker_calls_total\{route="flaky",class="2xx"\} 1$/m,
	'metrics written');

$logf = vg_wrap();
($rc, $log) = HookTest::Worker::worker($t, '--health-check', '--max-parked-age', '100');
is($rc, 0, '--health-check: healthy exits 0') or diag $log;
check_vg($logf, '--health-check (healthy)');
$logf = vg_wrap();
$t->sql("update hookinbox.action set updated_at = now() - interval '10 seconds' where state = 'parked'");
($rc, $log) = HookTest::Worker::worker($t, '--health-check', '--max-parked-age', '1');
is($rc, 1, '--health-check: unhealthy (parked) exits 1') or diag $log;
check_vg($logf, '--health-check (unhealthy)');

$logf = vg_wrap();
my ($pid, $bglog) = HookTest::Worker::worker_bg($t, '--loop');
sleep 3;
kill 'HUP', $pid;                       # the same, good file
sleep 2;
open my $fh, '>>', $t->config or die;
print $fh "[route broken]\nno_such_key = 1\n";
close $fh;
kill 'HUP', $pid;                       # a bad file: kept the running one
HookTest::Worker::accept($t, event_id => 'v_loop', type => 'ok.x');
my $until = time() + 20;
sleep 0.3 while time() < $until && (HookTest::Worker::action($t, 'v_loop')->{state} // '') ne 'done';
is(HookTest::Worker::action($t, 'v_loop')->{state}, 'done', '--loop delivers after the reloads');
kill 'TERM', $pid;
waitpid $pid, 0;
is($? >> 8, 0, '--loop exits 0 on SIGTERM') or diag HookTest::slurp($bglog);
like(HookTest::slurp($bglog), qr/"event":"reload".*reload failed/s, 'both reloads logged');
check_vg($logf, '--loop with SIGHUP and SIGTERM');
@HookTest::Worker::WRAP = ();

diag sprintf('valgrind runs took %.0f s', time() - $t0);
done_testing();
