# SPDX-License-Identifier: ISC
# Errors name what is really wrong, and an operator step that cannot apply
# says so and fails:
#   - replay.sql, resend.sql, dismiss.sql on an action in another state say
#     which state it is in and what works on it, exit non-zero, change nothing;
#   - review.sql and route.sql are dry runs without -v go=1, like the others;
#     review.sql refuses a delivery that is not held, naming its state;
#   - a SQL handler's unique violation (after resend.sql: the row exists) is
#     parked at once with that said, not retried as transient;
#   - a worker whose [worker] conninfo is refused is told to check
#     [worker] conninfo, not [database] conninfo.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $top = HookTest::top();
my $d = HookTest::Downstream->new(dir => File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my $t = HookTest::Worker::setup(routes => {
	h => { endpoint => 'shop', events => 'h.*', handler => 'sql:app.apply', timeout => 2 },
	u => { endpoint => 'shop', events => 'u.*', url => $d->url('/u'), timeout => 2 },
});
$t->sql($HookTest::Worker::APPLY_SQL);

sub script {
	my ($name, %v) = @_;
	return $t->pg->psql_file("$top/sql/$name.sql", role => 'hookinbox_admin', vars => \%v);
}
sub action_row { my ($id) = @_; return $t->sql("select state || ' ' || attempts from hookinbox.action where id = $id") }

# ---- one done action (through the handler), one parked (a 400)
HookTest::Worker::accept($t, event_id => 'h1', type => 'h.x');
$d->plan('/u', '400');
HookTest::Worker::accept($t, event_id => 'u1', type => 'u.x');
HookTest::Worker::drain($t);
my $done = HookTest::Worker::action($t, 'h1')->{id};
my $parked = HookTest::Worker::action($t, 'u1')->{id};
is(action_row($done), 'done 1', 'h1 done');
is(action_row($parked), 'parked 1', 'u1 parked');

# ---- a step on an action in another state
my ($rc, $out) = script('replay', action_id => $done, go => 1);
isnt($rc, 0, 'replay.sql on a done action: fails');
like($out, qr/replay\.sql: action $done is done, not parked: .*resend\.sql/, 'and says its state and what works')
	or diag $out;
($rc, $out) = script('dismiss', action_id => $done, reason => 'x', go => 1);
isnt($rc, 0, 'dismiss.sql on a done action: fails');
like($out, qr/dismiss\.sql: action $done is done, not parked/, 'and says its state') or diag $out;
($rc, $out) = script('resend', action_id => $parked, go => 1);
isnt($rc, 0, 'resend.sql on a parked action: fails');
like($out, qr/resend\.sql: action $parked is parked, not done or stale: replay\.sql sends it again/,
	'and says replay.sql is what works') or diag $out;
($rc, $out) = script('replay', action_id => 999999);
isnt($rc, 0, 'replay.sql on no action: fails');
like($out, qr/no action 999999/, 'and says there is none') or diag $out;
is(action_row($done) . ', ' . action_row($parked), 'done 1, parked 1', 'nothing changed');

# ---- the handler's unique violation after resend.sql: parked at once
($rc, $out) = script('resend', action_id => $done, reason => 'test', go => 1);
is($rc, 0, 'resend.sql the handler action') or diag $out;
($rc, $out) = HookTest::Worker::worker($t, '--once');
my $a = HookTest::Worker::action($t, 'h1');
is("$a->{state} $a->{attempts}", 'parked 1', 'unique violation: parked at the first attempt, not retried');
like($a->{error}, qr/23505.*unique violation: the row exists already.*resend\.sql/, 'the error says what happened')
	or diag $a->{error};
is($t->sql('select count(*) from app.applied'), 1, 'the effect exists once');

# ---- review.sql: a dry run without go=1; a row not held is refused
my $held = $t->sql("update hookinbox.inbox set state = 'review' where event_id = 'u1' returning id");
($rc, $out) = script('review', release => $held);
is($rc, 0, 'review.sql release without go: exit 0') or diag $out;
like($out, qr/dry run: nothing changed; add -v go=1 to release it/, 'a dry run');
is($t->sql("select state from hookinbox.inbox where id = $held"), 'review', 'dry run: still held');
($rc, $out) = script('review', dismiss => $held, go => 1);
is($rc, 0, 'review.sql dismiss go=1') or diag $out;
is($t->sql("select state from hookinbox.inbox where id = $held"), 'dismissed', 'dismissed');
($rc, $out) = script('review', release => $held, go => 1);
isnt($rc, 0, 'review.sql release of a dismissed delivery: fails');
like($out, qr/delivery $held is dismissed, not held for review/, 'and says its state') or diag $out;

# ---- route.sql: a dry run without go=1
($rc, $out) = script('route', route => 'u', do => 'pause', reason => 'x');
like($out, qr/dry run: route u would be paused/, 'route.sql without go: a dry run') or diag $out;
is($t->sql('select count(*) from hookinbox.route_state where paused'), 0, 'nothing paused');

# ---- a refused [worker] conninfo is named as such
sub conf_with_role {
	my ($role) = @_;
	my $c = HookTest::slurp($t->config);
	$c =~ s/(\[worker\][^\[]*?conninfo = [^\n]*user=)hookinbox_worker/$1$role/s or die 'no [worker] conninfo';
	my $p = $t->dir . "/$role.conf";
	open my $fh, '>', $p or die $!;
	print $fh $c;
	close $fh;
	return $p;
}
for my $role (qw(no_such_role lowly)) {
	$t->sql('create role lowly login') if $role eq 'lowly';
	my $conf = conf_with_role($role);
	my $log = `@{[ HookTest::Worker::bin() ]} -c $conf --once 2>&1`;
	is($? >> 8, 78, "worker as $role: a configuration error (78)") or diag $log;
	like($log, qr/check (the role in )?\[worker\] conninfo/, "worker as $role: told to check [worker] conninfo")
		or diag $log;
	unlike($log, qr/\[database\] conninfo/, "worker as $role: not told about [database] conninfo");
	$log = `@{[ HookTest::Worker::bin() ]} -c $conf --check --connect 2>&1`;
	is($? >> 8, 78, "--check --connect as $role: 78") or diag $log;
	like($log, qr/with \[worker\] conninfo/, "--check --connect as $role: names [worker] conninfo") or diag $log;
}

done_testing;
