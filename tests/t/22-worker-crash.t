# SPDX-License-Identifier: ISC
# Crash points (test build only) and leases: a worker killed at any point
# loses nothing and causes no second effect; a taken-over lease cannot be
# overwritten; an unknown outcome is retried with the same key.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $LEASE = 5;
my $top = HookTest::top();
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/slow' => 'sleep 3', '/reset' => 'reset,200',
	'/garbage' => 'garbage,200', '/fail' => '500,200' });
my $t = HookTest::Worker::setup(routes => {
	r => { endpoint => 'shop', events => 'crash.*', url => $d->url('/r'), timeout => 2 },
	slow => { endpoint => 'shop', events => 'slow.*', url => $d->url('/slow'), timeout => 1 },
	reset => { endpoint => 'shop', events => 'reset.*', url => $d->url('/reset'), timeout => 2 },
	garbage => { endpoint => 'shop', events => 'garbage.*', url => $d->url('/garbage'), timeout => 2 },
	fail => { endpoint => 'shop', events => 'fail.*', url => $d->url('/fail'), timeout => 2 },
}, worker => { lease => $LEASE });

sub calls { my ($ev) = @_; return grep { ($_->{event_id} // '') eq $ev } $d->requests }

sub crash_case {
	my ($fp, $ev, %o) = @_;
	HookTest::Worker::accept($t, event_id => $ev, type => 'crash.x');
	my ($rc, $log) = HookTest::Worker::worker($t, { HOOKINBOX_FAILPOINT => $fp }, '--once');
	is($rc, 99, "$fp: the worker died there") or diag $log;
	my @c = calls($ev);
	is(scalar @c, $o{calls_before}, "$fp: downstream calls before the rerun");
	my $a = HookTest::Worker::action($t, $ev);
	is($a->{state}, 'pending', "$fp: the action is still pending");
	if ($o{leased}) {
		(undef, $log) = HookTest::Worker::worker($t, '--once');
		like($log, qr/sent=0/, "$fp: nothing is sent while the lease holds");
		sleep $LEASE + 0.5;
	}
	HookTest::Worker::drain($t);
	$a = HookTest::Worker::action($t, $ev);
	is($a->{state}, 'done', "$fp: done after the rerun");
	@c = calls($ev);
	is(scalar(keys %{ { map { $_->{key} => 1 } @c } }), 1, "$fp: every call carried the same key");
	my $eff = 0;
	$eff += $_->{effect} for @c;
	is($eff, 1, "$fp: the downstream reports one effect");
	return \@c;
}

my $c = crash_case('worker-after-call', 'evt_call', calls_before => 1, leased => 1);
is(scalar @$c, 2, 'after-call: called again after the lease expired');
is($c->[1]{replay}, 1, 'after-call: the second call was answered from the stored response');
is(HookTest::Worker::action($t, 'evt_call')->{attempts}, 2, 'after-call: both attempts counted');

$c = crash_case('worker-after-claim', 'evt_claim', calls_before => 0, leased => 1);
is(scalar @$c, 1, 'after-claim: taken over after the lease, one call');

$c = crash_case('worker-mid-record', 'evt_rec', calls_before => 1, leased => 1);
is(scalar @$c, 2, 'mid-record: the record rolled back, called again');

$c = crash_case('worker-after-fanout', 'evt_fan', calls_before => 0, leased => 0);
is(scalar @$c, 1, 'after-fanout: the committed actions are sent by the next run');

# ---- a call its worker never recorded, then the retry window ran out before
# a rerun: parked, and the database says the outcome is unknown (the
# downstream applied it), so that an operator's replay of it is a blind one
{
	HookTest::Worker::accept($t, event_id => 'evt_window', type => 'crash.x');
	my ($rc, $log) = HookTest::Worker::worker($t, { HOOKINBOX_FAILPOINT => 'worker-after-call' }, '--once');
	is($rc, 99, 'window: the worker died after its call') or diag $log;
	$t->sql("update hookinbox.action set created_at = now() - interval '3 days', due_at = now(), "
		. "lease_until = now() where idem_key in (select a.idem_key from hookinbox.action a "
		. "join hookinbox.inbox i on i.id = a.inbox_id where i.event_id = 'evt_window')");
	HookTest::Worker::worker($t, '--once');
	my $w = HookTest::Worker::action($t, 'evt_window');
	is($w->{state}, 'parked', 'window: parked at the next claim');
	like($w->{error}, qr/^retry window exhausted after an attempt without a recorded outcome \(outcome unknown\)/,
		'window: the last outcome is unknown, not a failure');
	is(scalar(calls('evt_window')), 1, 'window: not called again');
	my ($prc, $pout) = $t->pg->psql_file("$top/sql/replay.sql", role => 'hookinbox_admin',
		vars => { action_id => $w->{id}, go => 1 });
	isnt($prc, 0, 'window: replay.sql without blind=1 refuses it');
	like($pout, qr/unknown last outcome/, 'window: and says why');
}

# ---- the same after a recorded failure: the unrecorded call is the second
# attempt, and last_error still holds the first one's outcome (500).  The
# claim's lease token, which only a record or a hand-back clears, is still
# set: no outcome came back.
{
	HookTest::Worker::accept($t, event_id => 'evt_window2', type => 'fail.x');
	HookTest::Worker::worker($t, '--once');
	my $w = HookTest::Worker::action($t, 'evt_window2');
	is("$w->{state} $w->{attempts} $w->{status}", 'pending 1 500', 'window after a failure: a retry waits');
	$t->sql("update hookinbox.action set due_at = now() where id = $w->{id}");
	my ($rc, $log) = HookTest::Worker::worker($t, { HOOKINBOX_FAILPOINT => 'worker-after-call' }, '--once');
	is($rc, 99, 'window after a failure: the worker died after its second call') or diag $log;
	is(join(' ', map { $_->{status} } calls('evt_window2')), '500 200', 'window after a failure: the second call was applied');
	$t->sql("update hookinbox.action set due_at = now(), lease_until = now() where id = $w->{id}");
	is($t->sql("select unknown from hookinbox.claim_actions(10, 60, 86400, array['fail'], array[10]) "
		. "where action_id = $w->{id}"), 't', 'window after a failure: the next claim says its outcome is unknown');
	$t->sql("update hookinbox.action set created_at = now() - interval '3 days', due_at = now(), "
		. "lease_until = now() where id = $w->{id}");
	HookTest::Worker::worker($t, '--once');
	$w = HookTest::Worker::action($t, 'evt_window2');
	is($w->{state}, 'parked', 'window after a failure: parked at the next claim');
	like($w->{error}, qr/^retry window exhausted after an attempt without a recorded outcome \(outcome unknown\); last: http status 500/,
		'window after a failure: unknown, not the failure before it');
	my ($prc, $pout) = $t->pg->psql_file("$top/sql/replay.sql", role => 'hookinbox_admin',
		vars => { action_id => $w->{id}, go => 1 });
	isnt($prc, 0, 'window after a failure: replay.sql without blind=1 refuses it');
}

# ---- a lease that expired and was taken over cannot be overwritten
HookTest::Worker::accept($t, event_id => 'evt_lease', type => 'other.x');   # no route: make one by hand
my $inbox = $t->sql("select id from hookinbox.inbox where event_id = 'evt_lease'");
my $aid = $t->sql("insert into hookinbox.action (inbox_id, route, idem_key, max_attempts) "
	. "values ($inbox, 'r', 'hookinbox:r:manual', 5) returning id");
my $old = $t->sql("select lease_token from hookinbox.claim_actions(10, 1, 3600) where action_id = $aid");
ok($old, 'claimed with a 1 s lease');
sleep 1.2;
my $new = $t->sql("select lease_token from hookinbox.claim_actions(10, 60, 3600) where action_id = $aid");
ok($new && $new ne $old, 'the expired lease is claimable again, with a new token');
is($t->sql("select count(*) from hookinbox.record_actions(array[${aid}::bigint], array['$new'::uuid], "
	. "'{done}', '{200}', '{NULL}', '{NULL}', '{0}')"), 1, 'the new holder records done');
is($t->sql("select count(*) from hookinbox.record_actions(array[${aid}::bigint], array['$old'::uuid], "
	. "'{pending}', '{500}', '{late}', '{NULL}', '{5}')"), 0, 'the old holder cannot overwrite it');
is($t->sql("select state || ' ' || last_status from hookinbox.action where id = $aid"), 'done 200',
	'the newer outcome stands');

# ---- timeout after the request was sent: outcome unknown, retried with the same key
HookTest::Worker::accept($t, event_id => 'evt_slow', type => 'slow.x');
my (undef, $log) = HookTest::Worker::worker($t, '--once');
my $a = HookTest::Worker::action($t, 'evt_slow');
is($a->{state}, 'pending', 'timeout: pending');
is($a->{error}, 'timeout (outcome unknown)', 'timeout: recorded as outcome unknown');
like($log, qr/outcome=retry retry_in_s=[\d.]+ error="timeout \(outcome unknown\)"/, 'timeout: logged');
sleep 3;
HookTest::Worker::drain($t);
is(HookTest::Worker::action($t, 'evt_slow')->{state}, 'done', 'timeout: done later');
my @s = calls('evt_slow');
is(scalar(keys %{ { map { $_->{key} => 1 } @s } }), 1, 'timeout: same key');
my $eff = 0;
$eff += $_->{effect} for @s;
is($eff, 1, 'timeout: one effect downstream');

# ---- connection reset and a garbage answer are retried
HookTest::Worker::accept($t, event_id => 'evt_reset', type => 'reset.x');
HookTest::Worker::accept($t, event_id => 'evt_garbage', type => 'garbage.x');
(undef, $log) = HookTest::Worker::worker($t, '--once');
like(HookTest::Worker::action($t, 'evt_reset')->{error}, qr/outcome unknown|nothing|recv|reply/i,
	'reset: retried with an error') or diag $log;
like(HookTest::Worker::action($t, 'evt_garbage')->{state}, qr/pending/, 'garbage: retried');
HookTest::Worker::drain($t);
is(HookTest::Worker::action($t, 'evt_reset')->{state}, 'done', 'reset: then done');
is(HookTest::Worker::action($t, 'evt_garbage')->{state}, 'done', 'garbage: then done');

# ---- a claim is on disk before its call: the worker's session commits
# without waiting for the WAL flush, the claim must not.  The WAL writer is
# slowed to 10 s so that an unflushed commit is lost for sure by an
# immediate stop; the worker dies right after its claim; the database then
# stops at once (a crash, or the machine of a failover).  The attempt and
# the lease must still be there, or a second worker would call the key
# while the first call may be in flight, and the attempt limit would not hold.
$t->sql("alter system set wal_writer_delay = '10s'");
$t->sql('select pg_reload_conf()');
sleep 0.5;
HookTest::Worker::accept($t, event_id => 'evt_durable', type => 'crash.x'); # the intake flushes
my $before_claim = $t->sql('select now()');
my ($rc_d, $log_d) = HookTest::Worker::worker($t, { HOOKINBOX_FAILPOINT => 'worker-after-claim' }, '--once');
is($rc_d, 99, 'durable claim: the worker died after its claim') or diag $log_d;
$t->pg->restart('immediate');
my $ad = HookTest::Worker::action($t, 'evt_durable');
is($ad->{attempts}, 1, 'durable claim: after an immediate stop the attempt is still counted');
# the lease the claim wrote (not whether it has run out since: a slow
# restart under a sanitizer may take longer than the lease)
die "odd timestamp $before_claim" unless $before_claim =~ /^[\d\-: .+]+$/;
ok($t->sql("select lease_until > '$before_claim'::timestamptz from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id = 'evt_durable'") eq 't', 'durable claim: and its lease still holds');
$t->sql('alter system reset wal_writer_delay');
$t->sql('select pg_reload_conf()');

done_testing();
