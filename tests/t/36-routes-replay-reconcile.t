# SPDX-License-Identifier: ISC
# reconcile_url x replay.sql: an action parked with an unknown last outcome
# (sent, then no answer; its attempts used up) is replayed by an operator.
# On a route with reconcile_url the first attempt after the replay asks the
# downstream before sending, as every later attempt would: the downstream
# that has the effect is never sent the event again.  On a route without
# it, the replay sends again with the same key.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $top = HookTest::top();
my $d = HookTest::Downstream->new(dir => File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my $t = HookTest::Worker::setup(routes => {
	rc => { endpoint => 'shop', events => 'rc.*', url => $d->url('/rc'), timeout => 1, max_attempts => 1,
		reconcile_url => $d->url('/_reconcile/{key}') },
	plain => { endpoint => 'shop', events => 'plain.*', url => $d->url('/plain'), timeout => 1,
		max_attempts => 1 },
}, worker => { lease => 10 });

sub key_of {
	my ($route, $event, $type) = @_;
	return $t->sql("select hookinbox.action_key('$route', 'event', 'stripe', 'shop', 'default', '$event', null, '$type')");
}
sub reqs { my ($key, $m) = @_; return grep { ($_->{key} // '') eq $key && $_->{method} eq $m } $d->requests }

my %k = (rc => key_of('rc', 'e_rc', 'rc.x'), plain => key_of('plain', 'e_plain', 'plain.x'));
# the effect happens, the answer comes after the call's timeout
$d->plan("key:$k{rc}", 'sleep 2 201');
$d->plan("key:$k{plain}", 'sleep 2 201');
HookTest::Worker::accept($t, event_id => 'e_rc', type => 'rc.x');
HookTest::Worker::accept($t, event_id => 'e_plain', type => 'plain.x');
my ($rc, $out) = HookTest::Worker::worker($t, '--once');
for my $e (qw(e_rc e_plain)) {
	my $a = HookTest::Worker::action($t, $e);
	like("$a->{state} $a->{error}", qr/^parked .*outcome unknown/, "$e: parked, outcome unknown") or diag $out;
}
sleep 2.2; # the slow answers are over

for my $e (qw(e_rc e_plain)) {
	($rc, $out) = $t->pg->psql_file("$top/sql/replay.sql", role => 'hookinbox_admin',
		vars => { action_id => HookTest::Worker::action($t, $e)->{id}, go => 1 });
	is($rc, 0, "replay.sql $e") or diag $out;
}
($rc, $out) = HookTest::Worker::worker($t, '--once');
my $a = HookTest::Worker::action($t, 'e_rc');
is($a->{state}, 'done', 'reconcile route: done after the replay') or diag $out;
is(scalar(reqs($k{rc}, 'GET')), 1, 'reconcile route: the downstream was asked first');
is(scalar(reqs($k{rc}, 'POST')), 1, 'reconcile route: the event was sent once in all, never again blind');
is(scalar(reqs($k{plain}, 'POST')), 2, 'plain route: the replay sent it again, with the same key');
my %eff = $d->effects;
is(($eff{ $k{rc} } // 0) . ' ' . ($eff{ $k{plain} } // 0), '1 1', 'one effect each at the downstream');

done_testing;
