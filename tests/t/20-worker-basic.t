# SPDX-License-Identifier: ISC
# The worker's core path: each event once, headers and signature, the same
# key on every retry, 500 then 200, 429 with Retry-After, 400 parks,
# always-500 parks after max_attempts, replay, unrouted events, CLI.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, secret => $HookTest::Worker::SECRET, plan => {
	'/flaky' => '500,200', '/slow' => '429 Retry-After: 3,200', '/bad' => '400', '/down' => '500',
});
my $t = HookTest::Worker::setup(routes => {
	ok => { endpoint => 'shop', events => 'invoice.*', url => $d->url('/ok'), timeout => 2,
		secrets => [$HookTest::Worker::SECRET] },
	flaky => { endpoint => 'shop', events => 'flaky.*', url => $d->url('/flaky'), timeout => 2 },
	slow => { endpoint => 'shop', events => 'slow.*', url => $d->url('/slow'), timeout => 2 },
	bad => { endpoint => 'shop', events => 'bad.*', url => $d->url('/bad'), timeout => 2 },
	down => { endpoint => 'shop', events => 'down.*', url => $d->url('/down'), timeout => 2,
		max_attempts => 3 },
}, worker => { metrics_file => "$tmpd/worker.prom" });
my $bin = HookTest::Worker::bin();

# ---- the CLI trio
{
	my $out = `$bin --help 2>&1`;
	is($?, 0, '--help succeeds');
	like($out, qr/--max-runtime.*78 configuration error/s, '--help lists options and exit codes');
	like(`$bin --version 2>&1`, qr/^hookinbox-worker \d/, '--version');
	`$bin --bogus 2>&1`;
	is($? >> 8, 64, 'bad option: 64');
	`$bin --once --loop 2>&1`;
	is($? >> 8, 64, '--once with --loop: 64');
	`$bin -c /nonexistent/x.conf --once 2>&1`;
	is($? >> 8, 78, 'missing configuration: 78');
	open my $fh, '>', $t->dir . '/nodb.conf' or die;
	print $fh "[database]\nconninfo = host=/nonexistent port=1 connect_timeout=2\n";
	close $fh;
	`$bin -c @{[ $t->dir ]}/nodb.conf --once 2>&1`;
	is($? >> 8, 75, 'database unavailable: 75');
}

# ---- one event, once, with every header
my $body = '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1"}}}  ';
HookTest::Worker::accept($t, event_id => 'evt_1', type => 'invoice.paid', body => $body);
HookTest::Worker::accept($t, event_id => 'evt_none', type => 'customer.created');
my ($rc, $log) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'worker --once exits 0') or diag $log;
like($log, qr/event=summary fanned_out=2 unrouted=1 sent=1 done=1/, 'summary line') or diag $log;
like($log, qr/event=call route=ok action=\d+ attempt=1 status=200 duration_ms=\d+ outcome=done/,
	'one line per call');
unlike($log, qr/evt_1|whsec|data/, 'the log names no body, event content or secret');
like(HookTest::slurp("$tmpd/worker.prom"), qr/^hookinbox_worker_last_run_done 1$/m, 'metrics file written');
my @r = grep { $_->{path} eq '/ok' } $d->requests;
is(scalar @r, 1, 'downstream called once');
is($r[0]{sha}, Digest::SHA::sha256_hex($body), 'the exact stored body is sent');
is($r[0]{event_id}, 'evt_1', 'X-Hookinbox-Event-Id');
is($r[0]{type}, 'invoice.paid', 'X-Hookinbox-Event-Type');
is($r[0]{attempt}, 1, 'X-Hookinbox-Attempt');
is($r[0]{ctype}, 'application/json', 'Content-Type');
like($r[0]{key}, qr/^hookinbox:ok:[0-9a-f]{64}$/, 'Idempotency-Key');
is($r[0]{wid}, $r[0]{key}, 'webhook-id is the idempotency key');
is($r[0]{sig_ok}, 1, 'Standard Webhooks signature verifies');
is(HookTest::Worker::action($t, 'evt_1')->{state}, 'done', 'action done');
is($t->sql("select state from hookinbox.inbox where event_id = 'evt_none'"), 'unrouted',
	'an event no route takes is visibly unrouted');
($rc, $log) = HookTest::Worker::worker($t, '--once');
like($log, qr/sent=0/, 'a second run sends nothing');
is(scalar(grep { $_->{path} eq '/ok' } $d->requests), 1, 'still called once');

# ---- retries
HookTest::Worker::accept($t, event_id => 'evt_f', type => 'flaky.x');
HookTest::Worker::accept($t, event_id => 'evt_s', type => 'slow.x');
HookTest::Worker::accept($t, event_id => 'evt_b', type => 'bad.x');
HookTest::Worker::accept($t, event_id => 'evt_d', type => 'down.x');
($rc, $log) = HookTest::Worker::worker($t, '--once');
my $f = HookTest::Worker::action($t, 'evt_f');
is_deeply([$f->{state}, $f->{attempts}, $f->{status}], ['pending', 1, 500], '500: pending again');
my $due = $t->sql("select extract(epoch from due_at - updated_at) from hookinbox.action where id = $f->{id}");
cmp_ok($due, '>=', 0.79, 'backoff: base 1 s minus at most 20% jitter');
cmp_ok($due, '<=', 1.21, 'backoff: plus at most 20% jitter');
my $s = HookTest::Worker::action($t, 'evt_s');
my $sdue = $t->sql("select extract(epoch from due_at - updated_at) from hookinbox.action where id = $s->{id}");
cmp_ok($sdue, '>=', 2.9, '429 Retry-After: 3 is honoured as a lower bound');
my $b = HookTest::Worker::action($t, 'evt_b');
is_deeply([$b->{state}, $b->{attempts}, $b->{status}], ['parked', 1, 400], '400 parks at once');
like($b->{error}, qr/400/, 'parked action keeps the last error');

my $t0 = time();
HookTest::Worker::drain($t, timeout => 40);
$f = HookTest::Worker::action($t, 'evt_f');
is_deeply([$f->{state}, $f->{attempts}, $f->{status}], ['done', 2, 200], '500 then 200: done after 2 attempts');
my @fr = grep { $_->{path} eq '/flaky' } $d->requests;
is(scalar @fr, 2, 'two calls');
is($fr[0]{key}, $fr[1]{key}, 'the same Idempotency-Key on the retry');
is_deeply([map { $_->{attempt} } @fr], [1, 2], 'attempt numbers');
my @sr = grep { $_->{path} eq '/slow' } $d->requests;
is(scalar @sr, 2, '429 retried');
cmp_ok($sr[1]{t} - $sr[0]{t}, '>=', 2.9, 'the retry waited at least Retry-After');
is(HookTest::Worker::action($t, 'evt_s')->{state}, 'done', '429 then 200: done');
my $dn = HookTest::Worker::action($t, 'evt_d');
is_deeply([$dn->{state}, $dn->{attempts}, $dn->{status}], ['parked', 3, 500], 'always 500: parked after max_attempts');
like($dn->{error}, qr/attempts exhausted/, 'says why');
is(scalar(grep { $_->{path} eq '/down' } $d->requests), 3, 'three calls, no more');

# ---- replay of a parked action: same key, succeeds
$d->plan('/down', '200');
my ($prc, $pout) = $t->pg->psql_file(HookTest::top() . '/sql/replay.sql', vars => { action_id => $dn->{id}, go => 1 });
is($prc, 0, 'replay.sql runs') or diag $pout;
is(HookTest::Worker::action($t, 'evt_d')->{state}, 'pending', 'replayed action is pending');
HookTest::Worker::drain($t);
my $dn2 = HookTest::Worker::action($t, 'evt_d');
is($dn2->{state}, 'done', 'replayed action done');
my @dr = grep { $_->{path} eq '/down' } $d->requests;
is($dr[-1]{key}, $dr[0]{key}, 'replay uses the same Idempotency-Key');
is($dr[-1]{status}, 200, 'and succeeded');

done_testing();
