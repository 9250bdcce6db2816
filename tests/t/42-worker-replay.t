# SPDX-License-Identifier: ISC
# The operator's side of the lifecycle, with psql scripts: replay (one
# action or a filtered set, dry run first) opens a new retry window and
# keeps the earlier attempts; dismiss and resolve need a reason that
# parked.sql shows; resend sends a done or stale action again on purpose;
# event.sql shows what became of an event, collapses included; every script
# fails (non-zero) on a usage error.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/no' => '422' });
my $t = HookTest::Worker::setup(routes => {
	no => { endpoint => 'shop', events => 'no.*', url => $d->url('/no'), timeout => 2 },
	ord => { endpoint => 'shop', events => 'ord.*', url => $d->url('/ord'), timeout => 2, order => 'object' },
	biz => { endpoint => 'shop', events => 'biz.*', url => $d->url('/biz'), timeout => 2, key => 'object-type' },
});
my $sql = HookTest::top() . '/sql';

sub script {
	my ($name, %vars) = @_;
	return $t->pg->psql_file("$sql/$name.sql", vars => \%vars, role => 'hookinbox_admin');
}
sub st { my $a = HookTest::Worker::action($t, $_[0]); return "$a->{state}/$a->{attempts}" }

HookTest::Worker::accept($t, event_id => "n$_", type => 'no.x') for 1 .. 4;
HookTest::Worker::drain($t);
is($t->sql("select count(*) from hookinbox.action where route = 'no' and state = 'parked'"), 4, '422: four parked');
# n1 was made two days ago and parked a day ago: past its 20 h retry window
my $n1 = HookTest::Worker::action($t, 'n1')->{id};
$t->sql("update hookinbox.action set created_at = now() - interval '2 days', updated_at = now() - interval '25 hours' "
	. "where id = $n1");

# ---- usage errors exit non-zero
for my $case (['replay', {}], ['replay', { go => 1 }], ['dismiss', { action_id => $n1 }],
	['resolve', { action_id => $n1, reason => ' ' }], ['resend', {}], ['parked', { state => 'gone' }],
	['event', {}], ['replay', { action_id => 'x' }], ['replay', { since => 'yesterdayish' }]) {
	my ($name, $vars) = @$case;
	my ($rc, $out) = script($name, %$vars);
	isnt($rc, 0, "$name.sql " . join(' ', map { "$_=$vars->{$_}" } sort keys %$vars) . ': usage error, non-zero exit')
		or diag $out;
	like($out, qr/\Q$name\E\.sql: choose parked actions/, "$name.sql names itself in the usage error")
		if $name eq 'dismiss' || $name eq 'resolve';
}
is(st('n1'), 'parked/1', 'nothing changed by the failed runs');

# ---- replay one action past its retry window: dry run, then for real
my ($rc, $out) = script('replay', action_id => $n1);
is($rc, 0, 'replay.sql dry run') or diag $out;
like($out, qr/parked_actions_matching\s*\n-+\n\s*1\s*\n/, 'dry run: one matches') or diag $out;
like($out, qr/dry run: nothing changed/, 'and says nothing changed');
is(st('n1'), 'parked/1', 'still parked after the dry run');
$d->plan('/no', '200');
($rc, $out) = script('replay', action_id => $n1, go => 1, reason => 'downstream fixed');
is($rc, 0, 'replay.sql -v go=1') or diag $out;
like($out, qr/\b$n1\b.*parked.*pending/, 'it reports what it was and is');
HookTest::Worker::worker($t, '--once');
is(st('n1'), 'done/1', 'replayed after its retry window: called at once and done, not parked again with 0 calls');
is($t->sql("select string_agg(step || '/' || state || '/' || attempts || '/' || last_status || '/' || reason || '/' "
	. "|| (since < now() - interval '1 day')::text, ',') from hookinbox.action_history where action_id = $n1"),
	'replay/parked/1/422/downstream fixed/true', 'the earlier attempts are kept in action_history');

# ---- a filtered set: route, error text, time range
($rc, $out) = script('replay', route => 'no', error => 'STATUS 422', since => '2000-01-01', until => '2000-01-02');
like($out, qr/parked_actions_matching\s*\n-+\n\s*0\s*\n/, 'until before they were parked: none') or diag $out;
($rc, $out) = script('replay', route => 'no', error => 'status 4', since => '2000-01-01');
like($out, qr/parked_actions_matching\s*\n-+\n\s*3\s*\n/, 'route + error + since: three') or diag $out;
($rc, $out) = script('replay', endpoint => 'elsewhere');
like($out, qr/parked_actions_matching\s*\n-+\n\s*0\s*\n/, 'another endpoint: none') or diag $out;
($rc, $out) = script('replay', error => "%' or true or '", go => 1);
like($out, qr/\(0 rows\)/, 'the filters are values, not SQL (nor LIKE patterns)') or diag $out;

# ---- dismiss and resolve, with their reasons
my $n2 = HookTest::Worker::action($t, 'n2')->{id};
my $n3 = HookTest::Worker::action($t, 'n3')->{id};
($rc, $out) = script('dismiss', action_id => $n2, reason => 'order cancelled', go => 1);
is($rc, 0, 'dismiss.sql') or diag $out;
($rc, $out) = script('resolve', action_id => $n3, reason => 'applied by hand, ticket 7', go => 1);
is($rc, 0, 'resolve.sql') or diag $out;
is(join(',', st('n2'), st('n3'), st('n4')), 'dismissed/1,resolved/1,parked/1', 'states');
($rc, $out) = script('parked', state => 'dismissed');
like($out, qr/\bn2\b.*order cancelled.*hookinbox_admin/, 'parked.sql -v state=dismissed: the reason and who') or diag $out;
($rc, $out) = script('parked', state => 'all');
like($out, qr/\(3 rows\)/, 'parked.sql -v state=all: parked, dismissed and resolved') or diag $out;
like($out, qr/applied by hand, ticket 7/, 'with the resolution');
($rc, $out) = script('parked');
like($out, qr/\bn4\b/, 'parked.sql: the one still parked');
like($out, qr/\(1 row\)/, 'and only it');
($rc, $out) = script('replay', action_id => $n2, go => 1);
isnt($rc, 0, 'a dismissed action is not replayed: refused');
like($out, qr/action $n2 is dismissed, not parked: an operator closed it/, 'saying its state');
is(st('n2'), 'dismissed/1', 'and stays dismissed');

# ---- resend a done action: same key (the downstream answers from its store), or a fresh one
my $key = HookTest::Worker::action($t, 'n1')->{key};
($rc, $out) = script('resend', action_id => $n1, go => 1, reason => 'check');
is($rc, 0, 'resend.sql') or diag $out;
HookTest::Worker::worker($t, '--once');
my @r = grep { ($_->{key} // '') eq $key && $_->{status} == 200 } $d->requests;
is(scalar @r, 2, 'resent with the same key');
is($r[-1]{replay}, 1, 'which the downstream answered from its store, without a second effect');
($rc, $out) = script('resend', action_id => $n1, go => 1, new_key => 1);
HookTest::Worker::worker($t, '--once');
my $a = HookTest::Worker::action($t, 'n1');
like($a->{key}, qr/^\Q$key\E:resend-\d+$/, 'new_key: a fresh key');
is($a->{state}, 'done', 'done again');
is(scalar(grep { ($_->{key} // '') eq $a->{key} && $_->{effect} } $d->requests), 1, 'and a new effect');

# ---- resend a stale action on purpose: sent, outside its object's order
HookTest::Worker::accept($t, event_id => 'o2', type => 'ord.u', object_id => 'obj', version => 2);
HookTest::Worker::drain($t);
HookTest::Worker::accept($t, event_id => 'o1', type => 'ord.u', object_id => 'obj', version => 1);
HookTest::Worker::drain($t);
is(st('o1'), 'stale/0', 'an older version is stale');
($rc, $out) = script('resend', action_id => HookTest::Worker::action($t, 'o1')->{id}, go => 1);
HookTest::Worker::drain($t);
is(st('o1'), 'done/1', 'resent on purpose: done');
is(scalar(grep { $_->{event_id} eq 'o1' } $d->requests), 1, 'it reached the downstream');
is($t->sql("select applied_version from hookinbox.object_state where route = 'ord' and object_id = 'obj'"), 2,
	'the object\'s applied version is still 2');

# ---- event.sql: an event collapsed by business dedup shows into what
HookTest::Worker::accept($t, event_id => 'b1', type => 'biz.paid', object_id => 'inv');
HookTest::Worker::accept($t, event_id => 'b2', type => 'biz.paid', object_id => 'inv');
HookTest::Worker::drain($t);
($rc, $out) = script('event', event_id => 'b2');
is($rc, 0, 'event.sql') or diag $out;
like($out, qr/b2.*dispatched.*biz.*collapsed into action \d+ \(event b1, done\)/, 'b2: collapsed into b1\'s action')
	or diag $out;
($rc, $out) = script('event', event_id => 'b1');
like($out, qr/b1.*dispatched.*biz.*\bdone\b/, 'b1: its own action, done') or diag $out;

# ---- the worker's role cannot run the operators' steps
my $err = eval { $t->pg->psql_raw($t->pg->{dbname}, 'hookinbox_worker',
	"select * from hookinbox.operate_actions('{$n1}', 'resend', null)"); 1 } ? '' : $@;
like($err, qr/permission denied/, 'hookinbox_worker cannot replay, dismiss or resend');

done_testing();
