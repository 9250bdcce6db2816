# SPDX-License-Identifier: ISC
# order = newest, once an action was sent: its call may have been applied
# even when no outcome was recorded (the worker died after the call).
#   - an older version arriving later is stale, also while the newer one is
#     parked (found by tests/model, seed 151922 at 200 operations: obj_4
#     version 8 applied after version 9, which had been parked and replayed)
#   - an action sent once is not held for review by an equal version that
#     arrived after its call, neither on its retry nor on its replay (seed 44:
#     an action in review that the downstream had applied)
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(routes => {
	ord => { endpoint => 'shop', events => 'ord.*', url => $d->url('/ord'), timeout => 2, order => 'newest' },
});
my $sql = HookTest::top() . '/sql';

sub st { return HookTest::Worker::action($t, $_[0])->{state} }
sub applied { return map { $_->{event_id} } grep { $_->{effect} } $d->requests }
sub accept_v {
	my ($ev, $obj, $v) = @_;
	HookTest::Worker::accept($t, event_id => $ev, type => 'ord.updated', object_id => $obj, version => $v);
}

# the one pending action is sent, the worker dies before recording the
# outcome, and its lease runs out; with $park its last attempt is used up
# (the next claim parks it, as a retry window running out would)
sub sent_unrecorded {
	my ($ev, %o) = @_;
	my ($rc, $log) = HookTest::Worker::worker($t, { HOOKINBOX_FAILPOINT => 'worker-after-call' }, '--once');
	is($rc, 99, "$ev: sent, and its worker died before recording it") or diag $log;
	my $id = HookTest::Worker::action($t, $ev)->{id};
	$t->sql("update hookinbox.action set lease_until = now() - interval '1 second', due_at = now()"
		. ($o{park} ? ', max_attempts = attempts' : '') . " where id = $id");
	return $id;
}

# ---- 1. version 9 sent, parked without an outcome; version 8 arrives
accept_v('a9', 'obj_A', 9);
sent_unrecorded('a9', park => 1);
HookTest::Worker::drain($t);
is(st('a9'), 'parked', 'version 9: parked (attempts used up, outcome unknown)');
accept_v('a8', 'obj_A', 8);
HookTest::Worker::drain($t);
is(st('a8'), 'stale', 'version 8 after a parked version 9: stale');
is_deeply([grep { /^a/ } applied()], ['a9'], 'the downstream applied version 9 only');

# ---- 2. version 5 sent; an equal version arrives before its retry
accept_v('b5', 'obj_B', 5);
sent_unrecorded('b5');
accept_v('b5bis', 'obj_B', 5);
HookTest::Worker::drain($t);
is(st('b5'), 'done', 'the retry of the version sent goes on: done');
is(st('b5bis'), 'review', 'the equal version that came after it: review');
is_deeply([grep { /^b/ } applied()], ['b5'], 'applied once');

# ---- 3. version 6 sent, parked; an equal version arrives; the operator replays the first
accept_v('c6', 'obj_C', 6);
my $c6 = sent_unrecorded('c6', park => 1);
HookTest::Worker::drain($t);
accept_v('c6bis', 'obj_C', 6);
HookTest::Worker::drain($t);
is_deeply([st('c6'), st('c6bis')], ['parked', 'review'], 'parked, and the equal version in review');
my ($rc, $out) = $t->pg->psql_file("$sql/replay.sql", vars => { action_id => $c6, go => 1 }, role => 'hookinbox_admin');
is($rc, 0, 'replay.sql of the parked one') or diag $out;
HookTest::Worker::drain($t);
is(st('c6'), 'done', 'the replay of the version sent goes on: done');
my @c = grep { ($_->{event_id} // '') =~ /^c/ } $d->requests;
is_deeply([map { $_->{event_id} } @c], ['c6', 'c6'], 'called twice, with one key');
is(scalar(grep { $_->{effect} } @c), 1, 'applied once');

# ---- 4. version 7 sent, parked, and resolved by the operator; an equal
# version arrives after: the downstream holds version 7, so review
accept_v('d7', 'obj_D', 7);
my $d7 = sent_unrecorded('d7', park => 1);
HookTest::Worker::drain($t);
is(st('d7'), 'parked', 'version 7: parked (attempts used up, outcome unknown)');
($rc, $out) = $t->pg->psql_file("$sql/resolve.sql", vars => { action_id => $d7, reason => 'handled by hand', go => 1 },
	role => 'hookinbox_admin');
is($rc, 0, 'resolve.sql of the parked one') or diag $out;
accept_v('d7bis', 'obj_D', 7);
HookTest::Worker::drain($t);
is_deeply([st('d7'), st('d7bis')], ['resolved', 'review'], 'resolved, and the equal version after it in review');
is_deeply([grep { /^d/ } applied()], ['d7'], 'the downstream applied version 7 once');

done_testing();
