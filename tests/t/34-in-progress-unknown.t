# SPDX-License-Identifier: ISC
# A 409 answers a call whose key another request is still being processed
# under: what that request does is not known, so an action parked on it
# (attempts used up) says "outcome unknown", never a plain refusal the
# operator would dismiss.  Found by tests/model, seed 33 at 200 operations:
# a call timed out and was still being applied downstream, the operator
# replayed the parked action, its one attempt got 409, and it was parked
# as "http status 409; attempts exhausted" although the downstream applied
# it.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $top = HookTest::top();
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/slow' => 'sleep 8 200', '/busy' => '409' });
my $t = HookTest::Worker::setup(routes => {
	slow => { endpoint => 'shop', events => 'slow.*', url => $d->url('/slow'), timeout => 1, max_attempts => 1 },
	busy => { endpoint => 'shop', events => 'busy.*', url => $d->url('/busy'), timeout => 2, max_attempts => 1 },
});
sub act { return HookTest::Worker::action($t, $_[0]) }

# ---- the model's schedule: a timeout, a replay, the key still in progress
HookTest::Worker::accept($t, event_id => 's1', type => 'slow.x');
my $t0 = time;
HookTest::Worker::worker($t, '--once');
like(act('s1')->{error}, qr/outcome unknown/, 'the call timed out: parked, outcome unknown');
my $id = $t->sql("select a.id from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id = 's1'");
my ($rc, $out) = $t->pg->psql_file("$top/sql/replay.sql", role => 'hookinbox_admin',
	vars => { action_id => $id, go => 1 });
is($rc, 0, 'replayed') or diag $out;
HookTest::Worker::worker($t, '--once');
my @calls = $d->requests;
SKIP: {
	skip 'the replay came after the first call ended (a slow machine)', 2
		unless @calls == 2 && $calls[1]{inprogress} && time - $t0 < 8;
	is(act('s1')->{state}, 'parked', 'the replay got 409 (in progress) and its one attempt is used: parked');
	like(act('s1')->{error}, qr/outcome unknown/, 'parked as outcome unknown, not as a refusal');
}
ok((grep { $_->{effect} } @calls) == 1, 'the downstream applied it once');

# ---- a plain 409 on the last attempt
HookTest::Worker::accept($t, event_id => 'b1', type => 'busy.x');
HookTest::Worker::worker($t, '--once');
is(act('b1')->{state}, 'parked', '409 on the last attempt: parked');
like(act('b1')->{error}, qr/^http status 409 .*outcome unknown.*; attempts exhausted$/,
	'says the status, that the outcome is unknown, and why it parked');

done_testing();
