# SPDX-License-Identifier: ISC
# A blind replay is never silent: replay.sql's dry run shows each chosen
# action's last outcome, and replaying an action whose last outcome is
# unknown (sent, then no answer) from over 24 hours ago, when the
# downstream may have forgotten the key, needs -v blind=1 as well as
# -v go=1; without it nothing changes.  And held deliveries (inbox state
# review) are not silent: --health-check counts them and is unhealthy when
# the oldest is older than the parked-age limit.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Worker;

my $top = HookTest::top();
my $t = HookTest::Worker::setup(routes => {
	r => { endpoint => 'shop', events => 'r.*', url => 'http://127.0.0.1:9/x', timeout => 1, max_attempts => 1 },
});
HookTest::Worker::accept_many($t, 2, prefix => 'bl', type => 'r.x');
HookTest::Worker::worker($t, '--once');
$t->sql("update hookinbox.action set state = 'parked', last_error = 'timeout (outcome unknown); attempts exhausted', "
	. "created_at = now() - interval '3 days' where route = 'r'");
my $id = $t->sql("select min(id) from hookinbox.action where route = 'r'");
sub replay { my (%v) = @_; return $t->pg->psql_file("$top/sql/replay.sql", role => 'hookinbox_admin', vars => \%v) }

my ($rc, $out) = replay(action_id => $id);
is($rc, 0, 'dry run') or diag $out;
like($out, qr/outcome unknown/, 'the dry run says the last outcome');
($rc, $out) = replay(action_id => $id, go => 1);
isnt($rc, 0, 'go=1 alone on a blind resend past 24 h: refused');
like($out, qr/unknown last outcome .* add -v blind=1/, 'and says why and what would work');
is($t->sql("select state from hookinbox.action where id = $id"), 'parked', 'nothing changed');
($rc, $out) = replay(action_id => $id, go => 1, blind => 1);
is($rc, 0, 'go=1 blind=1: replayed') or diag $out;
is($t->sql("select state from hookinbox.action where id = $id"), 'pending', 'the action is pending again');
# a recent unknown outcome (the key still remembered) replays with go=1
$t->sql("update hookinbox.action set created_at = now() - interval '1 hour' where route = 'r' and id <> $id");
my $id2 = $t->sql("select max(id) from hookinbox.action where route = 'r'");
($rc, $out) = replay(action_id => $id2, go => 1);
is($rc, 0, 'a recent unknown outcome: go=1 replays (the downstream still has the key)') or diag $out;

# ---- held deliveries in --health-check
my @h = ('--health-check', '--max-pending-age', '9999999', '--max-parked-age', '3600');
($rc, $out) = HookTest::Worker::worker($t, @h);
is($rc, 0, 'no held delivery: healthy') or diag $out;
like($out, qr/0 held deliveries/, 'and says so');
$t->sql("update hookinbox.inbox set state = 'review', received_at = now() - interval '3 days' "
	. "where id = (select min(id) from hookinbox.inbox)");
($rc, $out) = HookTest::Worker::worker($t, @h);
is($rc, 1, 'a delivery held for 3 days: unhealthy') or diag $out;
like($out, qr/oldest of 1 held deliveries is \d+ s old \(sql\/review\.sql\), over 3600 s/, 'and says which limit');
done_testing;
