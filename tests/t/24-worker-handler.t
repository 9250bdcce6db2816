# SPDX-License-Identifier: ISC
# handler = sql:schema.function: the local effect and "done" commit together,
# so a worker killed inside the handler transaction leaves no half effect and
# the rerun applies it exactly once.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use HookTest;
use HookTest::Worker;

my $LEASE = 5;
my $t = HookTest::Worker::setup(routes => {
	local => { endpoint => 'shop', events => 'local.*', handler => 'sql:app.apply_event', timeout => 2,
		max_attempts => 3 },
}, worker => { lease => $LEASE });

$t->sql(<<'SQL');
create schema app;
create table app.effect (event_id text not null, type text, body_amount int, at timestamptz default now());
create table app.fail (event_id text primary key);
create function app.apply_event(e jsonb) returns void language plpgsql as $$
begin
	insert into effect (event_id, type, body_amount)   -- unqualified: the handler's schema is searched
	values (e->>'event_id', e->>'event_type', (e->'body'->>'amount')::int);
	if exists (select 1 from app.fail f where f.event_id = e->>'event_id') then
		raise exception 'downstream rule says no';
	end if;
end $$;
grant usage on schema app to hookinbox_worker;
grant select, insert on app.effect to hookinbox_worker;
grant select on app.fail to hookinbox_worker;
grant execute on function app.apply_event(jsonb) to hookinbox_worker;
SQL

sub effects { my ($ev) = @_; return $t->sql("select count(*) from app.effect where event_id = '$ev'") }

HookTest::Worker::accept($t, event_id => 'l1', type => 'local.paid', body => '{"id":"l1","amount":42}');
my ($rc, $log) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'handler run exits 0') or diag $log;
is(HookTest::Worker::action($t, 'l1')->{state}, 'done', 'handler: done');
is($t->sql("select type || ' ' || body_amount from app.effect where event_id = 'l1'"), 'local.paid 42',
	'the function got the envelope and the body');
like($log, qr/event=call route=local action=\d+ attempt=1 status=0 duration_ms=\d+ outcome=done/, 'logged');

# ---- killed inside the handler transaction
HookTest::Worker::accept($t, event_id => 'l2', type => 'local.paid', body => '{"amount":1}');
($rc, $log) = HookTest::Worker::worker($t, { HOOKINBOX_FAILPOINT => 'worker-in-handler' }, '--once');
is($rc, 99, 'killed inside the handler');
is(effects('l2'), 0, 'no half effect');
is(HookTest::Worker::action($t, 'l2')->{state}, 'pending', 'still pending');
sleep $LEASE + 0.5;
HookTest::Worker::drain($t);
is(HookTest::Worker::action($t, 'l2')->{state}, 'done', 'the rerun applies it');
is(effects('l2'), 1, 'exactly once');
HookTest::Worker::drain($t);
is(effects('l2'), 1, 'and a further run changes nothing');

# ---- the function fails: rolled back, retried, parked after max_attempts
$t->sql("insert into app.fail values ('l3'), ('l4')");
HookTest::Worker::accept($t, event_id => 'l3', type => 'local.paid', body => '{"amount":3}');
HookTest::Worker::accept($t, event_id => 'l4', type => 'local.paid', body => '{"amount":4}');
HookTest::Worker::worker($t, '--once');
my $a = HookTest::Worker::action($t, 'l3');
is($a->{state}, 'pending', 'handler error: retried');
like($a->{error}, qr/^handler: SQLSTATE P0001: downstream rule says no/, 'handler error recorded with SQLSTATE');
is(effects('l3'), 0, 'handler error: nothing applied');
$t->sql("delete from app.fail where event_id = 'l3'");
HookTest::Worker::drain($t);
is(HookTest::Worker::action($t, 'l3')->{state}, 'done', 'then succeeds');
is(effects('l3'), 1, 'once');
$a = HookTest::Worker::action($t, 'l4');
is_deeply([$a->{state}, $a->{attempts}], ['parked', 3], 'always failing: parked after max_attempts');
is(effects('l4'), 0, 'nothing applied');

done_testing();
