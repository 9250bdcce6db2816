# SPDX-License-Identifier: ISC
# Reconcile instead of resending blind.  A route with reconcile_url asks the
# downstream (GET, the idempotency key in the URL) before re-sending an
# action whose last outcome is unknown: 2xx = it has the effect, done with
# its reference; 404 = send; anything else = later, still unknown.  A worker
# killed mid-call leaves an unknown outcome too.  A route without it keeps
# re-sending with the same key.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $top = HookTest::top();
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(routes => {
	rc => { endpoint => 'shop', events => 'rc.*', url => $d->url('/rc'), timeout => 1,
		reconcile_url => $d->url('/_reconcile/{key}') },
	plain => { endpoint => 'shop', events => 'plain.*', url => $d->url('/plain'), timeout => 1 },
	refd => { endpoint => 'shop', events => 'refd.*', url => $d->url('/refd'), timeout => 2,
		response_ref_header => 'X-Order-Id' },
}, worker => { lease => 10, backoff_base => 1, backoff_cap => 1 });

sub key_of {
	my ($route, $event, $type) = @_;
	return $t->sql("select hookinbox.action_key('$route', 'event', 'stripe', 'shop', 'default', '$event', null, '$type')");
}
sub reqs { my ($key) = @_; return grep { ($_->{key} // '') eq $key } $d->requests }
sub posts { my ($key) = @_; return grep { $_->{method} eq 'POST' } reqs($key) }
sub gets { my ($key) = @_; return grep { $_->{method} eq 'GET' } reqs($key) }
sub due_now { $t->sql("update hookinbox.action set due_at = now() where state = 'pending'") }

my %k = (
	done => key_of('rc', 'e_done', 'rc.x'),	   # the effect happened, the answer came too late
	lost => key_of('rc', 'e_lost', 'rc.x'),	   # the effect did not happen, the answer came too late
	later => key_of('rc', 'e_later', 'rc.x'),  # the reconcile endpoint fails
	plain => key_of('plain', 'e_plain', 'plain.x'),
);
$d->plan("key:$k{done}", 'sleep 2 201');
$d->plan("key:$k{lost}", 'sleep 2 503,200');
$d->plan("key:$k{later}", 'sleep 2 503,200');
$d->plan("reconcile:$k{later}", '503');
$d->plan("key:$k{plain}", 'sleep 2 201');
HookTest::Worker::accept($t, event_id => $_->[0], type => $_->[1])
	for ['e_done', 'rc.x'], ['e_lost', 'rc.x'], ['e_later', 'rc.x'], ['e_plain', 'plain.x'];

# first run: every call times out after sending: outcome unknown
my ($rc, $out) = HookTest::Worker::worker($t, '--once');
for my $e (qw(e_done e_lost e_later e_plain)) {
	my $act = HookTest::Worker::action($t, $e);
	like("$act->{state} $act->{error}", qr/^pending .*outcome unknown/, "$e: pending, outcome unknown");
}
sleep 2.2;	# the downstream's slow answers are over
due_now();
($rc, $out) = HookTest::Worker::worker($t, '--once');

# effect happened: asked, not re-sent, done with the downstream's reference
my $act = HookTest::Worker::action($t, 'e_done');
is($act->{state}, 'done', 'effect happened: done');
is(scalar(posts($k{done})), 1, 'effect happened: not sent again');
is(scalar(gets($k{done})), 1, 'effect happened: asked once');
like($out, qr/event=reconcile route=rc action=$act->{id} status=200 means=done/, 'logged: reconcile 200 = done');
my $ref = $t->sql("select response_ref from hookinbox.action where id = $act->{id}");
my ($first) = posts($k{done});
is($ref, "x-request-id: req-$first->{seq}", "the response reference is the first call's ($ref)");

# effect did not happen: asked (404), then sent, done
$act = HookTest::Worker::action($t, 'e_lost');
is($act->{state}, 'done', 'no effect: sent again and done');
my @r = sort { $a->{seq} <=> $b->{seq} } reqs($k{lost});
is(join(' ', map { "$_->{method}:$_->{status}" } @r), 'POST:503 GET:404 POST:200', 'no effect: POST, GET 404, POST');
is($act->{attempts}, 2, 'no effect: the question used no attempt of its own');
my %eff = $d->effects;
is($eff{$k{lost}}, 1, 'no effect: exactly one effect now');

# the reconcile endpoint fails: later, still unknown, nothing re-sent
$act = HookTest::Worker::action($t, 'e_later');
like("$act->{state} $act->{error}", qr/^pending reconcile answered http status 503 \(outcome unknown\)/,
	'reconcile failing: pending, still unknown');
is(scalar(posts($k{later})), 1, 'reconcile failing: not re-sent blind');
$d->plan("reconcile:$k{later}", '404');
due_now();
($rc, $out) = HookTest::Worker::worker($t, '--once');
is(HookTest::Worker::action($t, 'e_later')->{state}, 'done', 'reconcile answers 404 later: sent, done');
is(scalar(gets($k{later})), 2, 'asked again, not sent blind');

# a route without reconcile_url: re-sent with the same key (the downstream replays its answer)
$act = HookTest::Worker::action($t, 'e_plain');
is($act->{state}, 'done', 'without reconcile_url: done');
is(join(' ', map { $_->{method} } reqs($k{plain})), 'POST POST', 'without reconcile_url: re-sent, never asked');
%eff = $d->effects;
is($eff{$k{plain}}, 1, 'without reconcile_url: still one effect (same key)');

# a worker killed mid-call: claimed, never recorded
HookTest::Worker::accept($t, event_id => 'e_killed', type => 'rc.x');
my $kk = key_of('rc', 'e_killed', 'rc.x');
my ($pid, $log) = HookTest::Worker::worker_bg($t, '--loop');
sleep 0.1 until $t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id = 'e_killed' and a.state = 'done'") > 0 or reqs($kk);
kill 'KILL', $pid;
waitpid $pid, 0;
# as if the kill came while the call was out: the claim without its record
$t->sql("update hookinbox.action a set state = 'pending', attempts = 1, last_status = null, last_error = null, "
	. "lease_token = null, lease_until = null, due_at = now(), done_at = null from hookinbox.inbox i "
	. "where i.id = a.inbox_id and i.event_id = 'e_killed'");
($rc, $out) = HookTest::Worker::worker($t, '--once');
is(HookTest::Worker::action($t, 'e_killed')->{state}, 'done', 'killed mid-call: done');
is(join(' ', map { "$_->{method}:$_->{status}" } sort { $a->{seq} <=> $b->{seq} } reqs($kk)), 'POST:200 GET:200',
	'killed mid-call: asked before sending again, and not sent again');

# the reference a route names: the created object's id from a response header
my $kr = key_of('refd', 'e_refd', 'refd.x');
$d->plan("key:$kr", '201 X-Order-Id: ord_42');
HookTest::Worker::accept($t, event_id => 'e_refd', type => 'refd.x');
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($t->sql("select state || ' ' || response_ref from hookinbox.action where idem_key = '$kr'"),
	'done X-Order-Id: ord_42', 'response_ref_header: the named header is the reference');
($rc, $out) = $t->pg->psql_file("$top/sql/event.sql", role => 'hookinbox_admin', vars => { event_id => 'e_refd' });
like($out, qr/\Q$kr\E\s*\|\s*X-Order-Id: ord_42/, 'event.sql shows the idempotency key and the reference');

done_testing;
