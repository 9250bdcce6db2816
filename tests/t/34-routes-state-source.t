# SPDX-License-Identifier: ISC
# Which event produced a state.  On an order = newest route the object's
# state keeps the action that applied its version (object_state.action_id);
# a stale action keeps the action whose newer version made it stale
# (action.superseded_by); an event collapsed by key = object-type names the
# action it collapsed into.  sql/event.sql shows both.  The downstream saw
# exactly the versions the rows say were applied.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $top = HookTest::top();
my $d = HookTest::Downstream->new(dir => File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my $t = HookTest::Worker::setup(routes => {
	ord => { endpoint => 'shop', events => 'ord.*', url => $d->url('/ord'), timeout => 2, order => 'newest' },
	ot => { endpoint => 'shop', events => 'invoice.*', url => $d->url('/ot'), timeout => 2,
		key => 'object-type' },
});

sub id_of { my ($ev, $route) = @_; return HookTest::Worker::action($t, $ev, $route)->{id} }
sub sent { my ($path) = @_; return map { $_->{event_id} } grep { $_->{path} eq $path && $_->{effect} } $d->requests }
sub event_sql {
	my ($ev) = @_;
	my ($rc, $out) = $t->pg->psql_file("$top/sql/event.sql", role => 'hookinbox_admin',
		vars => { event_id => $ev });
	is($rc, 0, "event.sql $ev") or diag $out;
	return $out;
}
sub col {
	my ($ev, $col, $route) = @_;
	return $t->sql("select coalesce(a.${col}::text, '') from hookinbox.action a join hookinbox.inbox i"
		. " on i.id = a.inbox_id where i.event_id = " . HookTest::Worker::sqlq($ev)
		. ($route ? ' and a.route = ' . HookTest::Worker::sqlq($route) : ''));
}

# 3, 1, 2 arrive before the worker runs: 3 applied, 1 and 2 stale because of it
HookTest::Worker::accept($t, event_id => "a$_", type => 'ord.updated', object_id => 'obj_A', version => $_)
	for 3, 1, 2;
HookTest::Worker::drain($t);
is_deeply([sent('/ord')], ['a3'], 'the downstream applied version 3 only');
my $a3 = id_of('a3');
is($t->sql("select action_id from hookinbox.object_state where route = 'ord' and object_id = 'obj_A'"),
	$a3, "object_state: the applying action is a3's");
is(col('a1', 'superseded_by'), $a3, 'stale a1: superseded by a3');
is(col('a2', 'superseded_by'), $a3, 'stale a2: superseded by a3');
is(col('a3', 'superseded_by'), '', 'the applied one is superseded by nothing');

# a late version 2 after 3 was applied: stale, by the applied action
HookTest::Worker::accept($t, event_id => 'a2late', type => 'ord.updated', object_id => 'obj_A', version => 2);
HookTest::Worker::drain($t);
is(col('a2late', 'state'), 'stale', 'late version 2: stale');
is(col('a2late', 'superseded_by'), $a3, 'late version 2: superseded by a3');

# version 5 applied: the state now comes from a5
HookTest::Worker::accept($t, event_id => 'a5', type => 'ord.updated', object_id => 'obj_A', version => 5);
HookTest::Worker::drain($t);
my $a5 = id_of('a5');
is_deeply([sent('/ord')], ['a3', 'a5'], 'the downstream applied 3, then 5');
is($t->sql("select applied_version || ':' || action_id from hookinbox.object_state"
	. " where route = 'ord' and object_id = 'obj_A'"), "5:$a5", 'object_state: version 5, by a5');

my $out = event_sql('a1');
like($out, qr/stale\b.*\baction $a3 \(event a3, version 3, done\)/, 'event.sql: a1 stale, superseded by a3')
	or diag $out;
like($out, qr/version 5 by action $a5 \(event a5\)/, "event.sql: the object's state came from a5") or diag $out;
$out = event_sql('a5');
like($out, qr/\bdone\b.*version 5 by action $a5 \(event a5\)/, 'event.sql: a5 done, and it made the state')
	or diag $out;

# key = object-type: the second event of one (object, type) collapses
HookTest::Worker::accept($t, event_id => "i$_", type => 'invoice.paid', object_id => 'in_1') for 1, 2;
HookTest::Worker::drain($t);
my $i1 = id_of('i1', 'ot');
is_deeply([sent('/ot')], ['i1'], 'object-type: one call for the two events');
$out = event_sql('i2');
like($out, qr/collapsed into action $i1 .*\baction $i1 \(event i1\)/, 'event.sql: i2 collapsed into i1, named')
	or diag $out;

# a stale action resent on purpose no longer claims to be superseded
my ($rc, $o) = $t->pg->psql_file("$top/sql/resend.sql", role => 'hookinbox_admin',
	vars => { action_id => id_of('a1'), go => 1, reason => 'test' });
is(col('a1', 'state'), 'pending', 'resend: a1 pending again') or diag $o;
is(col('a1', 'superseded_by'), '', 'resend: superseded_by cleared');

done_testing;
