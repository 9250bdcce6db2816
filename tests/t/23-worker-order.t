# SPDX-License-Identifier: ISC
# order = object (newest): never apply an older version after a newer one;
# what it cannot place (no version, equal versions) is held for review;
# order = sequence: never two calls for one object in flight, across
# workers; key = object-type: one action per (object, type).
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/serial' => 'sleep 1' });
my $t = HookTest::Worker::setup(routes => {
	ord => { endpoint => 'shop', events => 'ord.*', url => $d->url('/ord'), timeout => 2, order => 'object' },
	serial => { endpoint => 'shop', events => 'serial.*', url => $d->url('/serial'), timeout => 3,
		order => 'sequence' },
	ot => { endpoint => 'shop', events => 'invoice.*', url => $d->url('/ot'), timeout => 2,
		key => 'object-type' },
});

sub st { my ($ev) = @_; return HookTest::Worker::action($t, $ev)->{state} }
sub sent { my ($path) = @_; return map { $_->{event_id} } grep { $_->{path} eq $path } $d->requests }

# ---- 3, 1, 2 all delivered before the worker runs
HookTest::Worker::accept($t, event_id => "a$_", type => 'ord.updated', object_id => 'obj_A', version => $_)
	for 3, 1, 2;
HookTest::Worker::drain($t);
is_deeply([st('a3'), st('a1'), st('a2')], ['done', 'stale', 'stale'], '3,1,2: only 3 applied, 1 and 2 stale');
is_deeply([sent('/ord')], ['a3'], '3,1,2: the downstream saw version 3 only');
is($t->sql("select applied_version from hookinbox.object_state where route = 'ord' and object_id = 'obj_A'"),
	3, 'applied version 3');

# ---- 1 applied, then 3, then 2
HookTest::Worker::accept($t, event_id => 'b1', type => 'ord.updated', object_id => 'obj_B', version => 1);
HookTest::Worker::drain($t);
HookTest::Worker::accept($t, event_id => 'b3', type => 'ord.updated', object_id => 'obj_B', version => 3);
HookTest::Worker::drain($t);
HookTest::Worker::accept($t, event_id => 'b2', type => 'ord.updated', object_id => 'obj_B', version => 2);
my $log = HookTest::Worker::drain($t);
is_deeply([st('b1'), st('b3'), st('b2')], ['done', 'done', 'stale'], '1, 3, then 2: 2 is stale');
like($log, qr/stale=1/, 'the summary counts the stale action');
is_deeply([grep { /^b/ } sent('/ord')], ['b1', 'b3'], '1, 3, then 2: 2 never sent');

# ---- an event without a version cannot be ordered: review; without an object it is not ordered
HookTest::Worker::accept($t, event_id => 'c_nov', type => 'ord.updated', object_id => 'obj_B');
HookTest::Worker::accept($t, event_id => 'c_noobj', type => 'ord.updated', version => 1);
HookTest::Worker::drain($t);
is_deeply([st('c_nov'), st('c_noobj')], ['review', 'done'], 'no version: review; no object: delivered');

# ---- equal versions cannot be ordered either: both held, neither sent
HookTest::Worker::accept($t, event_id => "q$_", type => 'ord.updated', object_id => 'obj_Q', version => 5) for 1, 2;
HookTest::Worker::drain($t);
is_deeply([st('q1'), st('q2')], ['review', 'review'], 'equal versions: both held for review');
is_deeply([grep { /^q/ } sent('/ord')], [], 'equal versions: neither sent');

# ---- one object never in flight twice, even across workers
HookTest::Worker::accept($t, event_id => "s$_", type => "serial.t$_", object_id => 'obj_S', version => 6 + $_)
	for 1 .. 3;
my @p = map { [HookTest::Worker::worker_bg($t, '--loop', '--max-runtime', '6')] } 1 .. 3;
waitpid $_->[0], 0 for @p;
HookTest::Worker::drain($t);
my @s = sort { $a->{t} <=> $b->{t} } grep { $_->{path} eq '/serial' } $d->requests;
is(scalar @s, 3, 'order = sequence: three versions of one object all sent');
my $overlap = 0;
for my $i (1 .. $#s) {
	$overlap++ if $s[$i]{t} - $s[ $i - 1 ]{t} < 0.95;   # each call takes 1 s
}
is($overlap, 0, 'never two calls for one object in flight at once');
is_deeply([map { $_->{event_id} } @s], [qw(s1 s2 s3)], 'and in version order');

# ---- key = object-type: two provider events for one business event, one action
HookTest::Worker::accept($t, event_id => 'evt_o1', type => 'invoice.paid', object_id => 'in_9');
HookTest::Worker::accept($t, event_id => 'evt_o2', type => 'invoice.paid', object_id => 'in_9');
HookTest::Worker::accept($t, event_id => 'evt_o3', type => 'invoice.finalized', object_id => 'in_9');
HookTest::Worker::accept($t, event_id => 'evt_o4', type => 'invoice.paid');   # no object: the event key
HookTest::Worker::accept($t, event_id => 'evt_o5', type => 'invoice.paid');
HookTest::Worker::drain($t);
is($t->sql("select count(*) from hookinbox.action where route = 'ot'"), 4,
	'object-type: two events for (in_9, invoice.paid) make one action');
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'evt_o%' and state = 'dispatched'"), 5,
	'object-type: every event still dispatched');
my @ot = grep { $_->{path} eq '/ot' } $d->requests;
is(scalar @ot, 4, 'object-type: four calls, one per business action');
is(scalar(grep { ($_->{type} // '') eq 'invoice.paid' && $_->{event_id} =~ /^evt_o[12]$/ } @ot), 1,
	'object-type: in_9 paid sent once');

done_testing();
