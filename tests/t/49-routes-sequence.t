# SPDX-License-Identifier: ISC
# order = sequence: every event of an object is delivered, in version order,
# against a real downstream: out-of-order arrival, an earlier action parked
# (it holds the object, shown by stats.sql and parked.sql, until replayed or
# dismissed), two worker processes at once over many objects with retries;
# what no order can place (equal or missing versions, a version older than
# one already sent) goes to review, and order-review.sql releases or
# dismisses it.  response_ref_field reads the reference from a JSON answer.
use strict;
use warnings;
use Test::More;
use List::Util qw(shuffle);
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $tmpm = File::Temp::tempdir('dm-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $dm = HookTest::Downstream->new(dir => $tmpm, latency => 0.02, plan => { '/many' => '500,200' });
my $t = HookTest::Worker::setup(routes => {
	seq => { endpoint => 'shop', events => 'seq.*', url => $d->url('/seq'), timeout => 2,
		order => 'sequence', max_attempts => 3 },
	many => { endpoint => 'shop', events => 'many.*', url => $dm->url('/many'), timeout => 2,
		order => 'sequence', breaker_failures => 0 },
	live => { endpoint => 'shop', events => 'live.*', url => $dm->url('/live'), timeout => 2,
		order => 'sequence', breaker_failures => 0 },
	refj => { endpoint => 'shop', events => 'refj.*', url => $d->url('/refj'), timeout => 2,
		response_ref_field => 'seq' },
	refd => { endpoint => 'shop', events => 'refd.*', url => $d->url('/refd'), timeout => 2,
		response_ref_field => 'data.id' },
}, worker => { batch => 25 });   # several fan-out batches: two workers' may interleave
my $sql = HookTest::top() . '/sql';

sub script {
	my ($name, %vars) = @_;
	return $t->pg->psql_file("$sql/$name.sql", vars => \%vars, role => 'hookinbox_admin');
}
sub act { return HookTest::Worker::action($t, $_[0]) }
sub st { return act($_[0])->{state} }
sub sent {
	my ($path, $re) = @_;
	return map { $_->{event_id} } grep { $_->{path} eq $path && $_->{event_id} =~ $re } $d->requests;
}
sub key_of {
	my ($route, $ev) = @_;
	return $t->sql("select hookinbox.action_key('$route', 'event', 'stripe', 'shop', 'default', '$ev', null, null)");
}
# run --once until nothing is left to do but what a parked or review action holds
sub drain {
	my (%o) = @_;
	my $until = time() + 30;
	while (time() < $until) {
		HookTest::Worker::worker($t, '--once');
		last if $t->sql("select count(*) from hookinbox.inbox where state = 'pending'") == 0
			&& $t->sql("select count(*) from hookinbox.action a where a.state = 'pending' "
				. "and not (a.sequenced and exists (select 1 from hookinbox.action e "
				. "where e.route = a.route and e.object_id = a.object_id and e.ordered "
				. "and e.event_version < a.event_version and e.state in ('parked', 'review')))") == 0;
		sleep($o{pause} // 0.5);
	}
}
sub ev { my ($id, $obj, $v, $type) = @_; HookTest::Worker::accept($t, event_id => $id, type => $type // 'seq.updated',
	object_id => $obj, version => $v) }

# ---- v3, v1, v5, v2, v4 arrive before the worker runs: delivered v1 .. v5
ev("a$_", 'obj_A', $_) for 3, 1, 5, 2, 4;
drain();
is_deeply([map { st("a$_") } 1 .. 5], [('done') x 5], 'out of order: all five done');
is_deeply([sent('/seq', qr/^a/)], [map { "a$_" } 1 .. 5], 'out of order: the downstream saw v1 .. v5 in order');
my ($rc, $out) = script('resend', action_id => act('a2')->{id}, new_key => 1, go => 1);
is($rc, 0, 'resend a2 on purpose') or diag $out;
drain();
is(st('a2'), 'done', 'a resent action is sent outside the order, not held for review');
is_deeply([sent('/seq', qr/^a/)], [(map { "a$_" } 1 .. 5), 'a2'], 'a2 sent again');

# ---- a parked v2 holds v3 and v4 until it is replayed and done
$d->plan('key:' . key_of('seq', 'b2'), '422');
ev("b$_", 'obj_B', $_) for 1 .. 4;
drain();
is_deeply([map { st("b$_") } 1 .. 4], [qw(done parked pending pending)], 'b2 parked: b3, b4 wait');
is_deeply([act('b3')->{attempts}, act('b4')->{attempts}], [0, 0], 'the waiting ones used no attempt');
is($t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id in ('b3', 'b4') and a.due_at > now() + interval '4 minutes'"), 2,
	'the waiting ones are not looked at again for minutes (the claim does not scan them each time)');
is_deeply([sent('/seq', qr/^b/)], [qw(b1 b2)], 'the downstream saw b1 and b2 (refused) only');
drain();
is_deeply([sent('/seq', qr/^b/)], [qw(b1 b2)], 'another run: still nothing after b2');
my $b2 = act('b2')->{id};
($rc, $out) = script('stats');
is($rc, 0, 'stats.sql') or diag $out;
like($out, qr/objects held/, 'stats.sql has the held objects');
like($out, qr/^\s*seq\s*\|\s*obj_B\s*\|\s*$b2\s*\|\s*parked\s*\|\s*2\s*\|\s*2\s*\|\s*3\s*\|/m,
	'stats.sql: obj_B is held by b2 (parked, version 2), two waiting from version 3') or diag $out;
my ($row) = grep { /^\s*shop\s*\|\s*seq\s*\|/ } split /\n/, $out;
my @hdr = map { s/^\s+|\s+$//gr } split /\|/, (grep { /\bblocked\b/ && /\breview\b/ } split /\n/, $out)[0];
my @col = map { s/^\s+|\s+$//gr } split /\|/, $row;
my %c; @c{@hdr} = @col;
is($c{blocked}, 2, 'stats.sql: two blocked on route seq') or diag $out;
($rc, $out) = script('parked', route => 'seq');
like($out, qr/^\s*$b2\s*\|.*\|\s*0\s*\|\s*2\s*\|/m, 'parked.sql: b2 holds two actions (no replays yet)') or diag $out;
$d->plan('key:' . key_of('seq', 'b2'), '200');
($rc, $out) = script('replay', action_id => $b2, go => 1);
is($rc, 0, 'replay b2') or diag $out;
is($t->sql("select ordered and sequenced from hookinbox.action where id = $b2"), 't', 'a replayed action keeps its order');
drain();
is_deeply([map { st("b$_") } 1 .. 4], [('done') x 4], 'after the replay: all done');
is_deeply([sent('/seq', qr/^b/)], [qw(b1 b2 b2 b3 b4)], 'b2 again, then b3, b4 in order');

# ---- dismissing (or resolving) the parked one lets the later ones flow
$d->plan('key:' . key_of('seq', 'c1'), '422');
ev("c$_", 'obj_C', $_) for 1 .. 3;
drain();
is_deeply([map { st("c$_") } 1 .. 3], [qw(parked pending pending)], 'c1 parked holds c2, c3');
($rc, $out) = script('dismiss', action_id => act('c1')->{id}, reason => 'order cancelled', go => 1);
is($rc, 0, 'dismiss c1') or diag $out;
drain();
is_deeply([map { st("c$_") } 1 .. 3], [qw(dismissed done done)], 'after the dismissal: c2, c3 done');
is_deeply([sent('/seq', qr/^c/)], [qw(c1 c2 c3)], 'c1 (refused), then c2, c3');
$d->plan('key:' . key_of('seq', 'r1'), '422');
ev("r$_", 'obj_R', $_) for 1 .. 2;
drain();
($rc, $out) = script('resolve', action_id => act('r1')->{id}, reason => 'entered by hand', go => 1);
drain();
is_deeply([map { st("r$_") } 1 .. 2], [qw(resolved done)], 'after resolve: r2 done');

# ---- a retrying earlier one holds too; a later one is never called meanwhile
$d->plan('key:' . key_of('seq', 'f1'), '500,500,200');
ev("f$_", 'obj_F', $_) for 1 .. 2;
drain(pause => 0.3);
is_deeply([map { st("f$_") } 1 .. 2], [qw(done done)], 'f1 retried to done, then f2');
is_deeply([sent('/seq', qr/^f/)], [qw(f1 f1 f1 f2)], 'f2 only after f1 succeeded');
is(act('f2')->{attempts}, 1, 'f2 used one attempt');

# ---- equal versions (Stripe's created counts seconds): review, released by hand
ev('e1', 'obj_E', 100);
ev('e2', 'obj_E', 100);
ev('e3', 'obj_E', 101);
drain();
is_deeply([map { st("e$_") } 1 .. 3], [qw(review review pending)], 'equal versions: both held for review, e3 waits');
like(act('e1')->{error}, qr/order: version 100 equals that of action/, 'why e1 is held');
is_deeply([sent('/seq', qr/^e/)], [], 'nothing of obj_E sent');
($rc, $out) = script('stats');
my ($rrow) = grep { /^\s*shop\s*\|\s*seq\s*\|/ } split /\n/, $out;
@col = map { s/^\s+|\s+$//gr } split /\|/, $rrow;
@c{@hdr} = @col;
is($c{review}, 2, 'stats.sql: two in review') or diag $out;
is($c{blocked}, 1, 'stats.sql: e3 blocked') or diag $out;
HookTest::Worker::worker($t, '--once', '--metrics-file', $t->dir . '/m.prom');
like(HookTest::slurp($t->dir . '/m.prom'), qr/^hookinbox_actions\{route="seq",state="review"\} 2$/m,
	'metrics: hookinbox_actions{state="review"} 2');
($rc, $out) = script('order-review');
is($rc, 0, 'order-review.sql lists') or diag $out;
like($out, qr/\be1\b.*obj_E\s*\|\s*100\s*\|\s*order: version 100 equals/, 'the list: e1, its version and why') or diag $out;

for my $case ([{ do => 'bogus', action_id => 1 }], [{ do => 'release' }], [{ do => 'dismiss', action_id => 1 }],
	[{ do => 'dismiss', action_id => 1, reason => ' ' }]) {
	my ($vars) = @$case;
	($rc, $out) = script('order-review', %$vars);
	is($rc, 3, 'order-review.sql ' . join(' ', map { "$_=$vars->{$_}" } sort keys %$vars) . ': usage error, exit 3')
		or diag $out;
	like($out, qr/order-review\.sql: -v do=release/, 'and it says how');
}
my $e1 = act('e1')->{id};
($rc, $out) = script('order-review', action_id => $e1, do => 'release');
like($out, qr/review_actions_matching\s*\n-+\n\s*1\s*\n/, 'release dry run: one matches') or diag $out;
like($out, qr/dry run: nothing changed/, 'and says so');
is(st('e1'), 'review', 'still in review after the dry run');
($rc, $out) = script('order-review', action_id => $e1, do => 'release', go => 1, reason => 'either order is fine');
is($rc, 0, 'release e1') or diag $out;
like($out, qr/\b$e1\b.*review.*pending/, 'it says what it was and is');
drain();
is_deeply([map { st("e$_") } 1 .. 3], [qw(done review pending)], 'e1 delivered; e2 still holds e3');
($rc, $out) = script('order-review', route => 'seq', object => 'obj_E', do => 'dismiss', reason => 'duplicate', go => 1);
is($rc, 0, 'dismiss e2') or diag $out;
drain();
is_deeply([map { st("e$_") } 1 .. 3], [qw(done dismissed done)], 'e2 dismissed, e3 done');
is_deeply([sent('/seq', qr/^e/)], [qw(e1 e3)], 'the downstream saw e1, e3, never e2');
is($t->sql("select string_agg(step || ':' || coalesce(reason, ''), ',' order by id) from hookinbox.action_history "
	. "where action_id in (select id from hookinbox.action where state in ('done', 'dismissed') "
	. "and inbox_id in (select id from hookinbox.inbox where event_id in ('e1', 'e2')))"),
	'release:either order is fine,dismiss:duplicate', 'both steps kept in action_history');

# ---- no version: review; dismissed, never sent
ev('n1', 'obj_N', undef);
drain();
is(st('n1'), 'review', 'no version: held for review');
like(act('n1')->{error}, qr/order: the event has no version/, 'and why');
($rc, $out) = script('order-review', action_id => act('n1')->{id}, do => 'dismiss', reason => 'test', go => 1);
drain();
is(st('n1'), 'dismissed', 'dismissed');
is_deeply([sent('/seq', qr/^n/)], [], 'never sent');

# ---- a version older than one already sent: review, not sent out of order
ev('l2', 'obj_L', 2);
drain();
ev('l1', 'obj_L', 1);
drain();
is_deeply([st('l2'), st('l1')], [qw(done review)], 'l1 arrived after l2 was sent: review');
like(act('l1')->{error}, qr/order: arrived after version 2 was sent/, 'and why');

# ---- a later version sent once (its worker died, its lease ran out) waits
# behind an earlier one that arrived after it and went to review; the
# operator's dismissal of the earlier one wakes it at once, not after the
# claim's 5 minutes (the model checker's seed 4: it was left waiting)
($rc, $out) = script('route', route => 'seq', do => 'pause', reason => 'test', go => 1);
is($rc, 0, 'seq paused') or diag $out;
ev('w2', 'obj_W', 2);
HookTest::Worker::worker($t, '--once');
$t->sql("update hookinbox.action set attempts = 1, lease_token = gen_random_uuid(), "
	. "lease_until = now() - interval '1 second' where id = " . act('w2')->{id});
ev('w1', 'obj_W', 1);
HookTest::Worker::worker($t, '--once');
($rc, $out) = script('route', route => 'seq', do => 'resume', go => 1);
is($rc, 0, 'seq resumed') or diag $out;
HookTest::Worker::worker($t, '--once');
is(st('w1'), 'review', 'w1 arrived after w2 was sent: review');
is($t->sql("select state || ' ' || (due_at > now() + interval '4 minutes') from hookinbox.action "
	. "where id = " . act('w2')->{id}), 'pending true', 'w2 (sent once) waits behind w1');
($rc, $out) = script('order-review', action_id => act('w1')->{id}, do => 'dismiss', reason => 'late', go => 1);
is($rc, 0, 'w1 dismissed') or diag $out;
is($t->sql('select due_at <= now() from hookinbox.action where id = ' . act('w2')->{id}), 't',
	'the dismissal woke w2, whose lease had run out');
HookTest::Worker::worker($t, '--once');
is(st('w2'), 'done', 'w2 delivered at once');

# ---- a later version sent, parked and replayed (attempts back to 0) was
# still sent: an earlier one arriving now goes to review, never out after
# it (the model checker's seed 33: obj_2 version 2 applied after 3)
# (sent, its worker dead before recording it, then parked: never done, so
# the object's applied version never moved)
($rc, $out) = script('route', route => 'seq', do => 'pause', reason => 'test', go => 1);
ev('rz3', 'obj_RZ', 3);
HookTest::Worker::worker($t, '--once');
$t->sql("update hookinbox.action set state = 'parked', attempts = 1, last_error = 'test' where id = "
	. act('rz3')->{id});
($rc, $out) = script('replay', action_id => act('rz3')->{id}, go => 1, blind => 1);
is($rc, 0, 'r3 replayed') or diag $out;
ev('rz2', 'obj_RZ', 2);
HookTest::Worker::worker($t, '--once');
($rc, $out) = script('route', route => 'seq', do => 'resume', go => 1);
HookTest::Worker::worker($t, '--once');
is(st('rz2'), 'review', 'r2 arrived after r3 was sent (before its replay): review')
	or diag $t->sql("select a.id, a.state, a.attempts, a.lease_until, a.event_version, a.sequenced, a.ordered, "
		. "(select string_agg(h.step || h.attempts, ',') from hookinbox.action_history h where h.action_id = a.id) "
		. "from hookinbox.action a where a.object_id = 'obj_RZ'");
drain();
is_deeply([sent('/seq', qr/^rz[23]$/)], [], 'r2 never sent (r3 waits behind it in review, as documented)');

# ---- a later version sent and then dismissed is the only record that the
# downstream may hold it: the purge keeps it while an earlier version waits
# in review, so that the next earlier one still goes to review when the
# first is dismissed (the model checker's seed 305806: obj_1 version 1
# applied after 3, whose row purge.sql dedup_days=0 had deleted)
$d->plan('key:' . key_of('seq', 'pk3'), '422');
ev('pk3', 'obj_PK', 3);
HookTest::Worker::worker($t, '--once');
is(st('pk3'), 'parked', 'p3 sent and refused: parked');
($rc, $out) = script('dismiss', action_id => act('pk3')->{id}, reason => 'test', go => 1);
is($rc, 0, 'p3 dismissed after it was sent') or diag $out;
ev('pk0', 'obj_PK', 0);
ev('pk1', 'obj_PK', 1);
drain();
is_deeply([st('pk0'), st('pk1')], [qw(review pending)], 'p0 arrived after p3 was sent: review; p1 waits behind it');
($rc, $out) = $t->pg->psql_file("$sql/purge.sql", vars => { payload_days => 0, dedup_days => 0, force => 1 },
	role => 'hookinbox_admin');
is($rc, 0, 'purge.sql dedup_days=0 force=1') or diag $out;
is($t->sql("select count(*) from hookinbox.inbox where event_id = 'pk3'"), 1,
	'the purge keeps p3 while p0 and p1 wait: it is what says p3 was sent');
($rc, $out) = script('order-review', action_id => act('pk0')->{id}, do => 'dismiss', reason => 'test', go => 1);
is($rc, 0, 'p0 dismissed') or diag $out;
drain();
is(st('pk1'), 'review', 'p1 goes to review too, never out after p3');
is_deeply([sent('/seq', qr/^pk[01]$/)], [], 'neither p0 nor p1 was sent');
($rc, $out) = script('order-review', action_id => act('pk1')->{id}, do => 'dismiss', reason => 'test', go => 1);
($rc, $out) = $t->pg->psql_file("$sql/purge.sql", vars => { payload_days => 0, dedup_days => 0, force => 1 },
	role => 'hookinbox_admin');
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'pk_'"), 0,
	'once nothing earlier waits, the purge deletes them all');

# ---- two worker processes at once, 4 calls each, 40 objects x 5 versions,
# each call refused once (500) then accepted: every object's versions
# reach the downstream complete and in order
my @evs = shuffle(map { my $o = $_; map { [$o, $_] } 1 .. 5 } 1 .. 40);
$t->sql("select count(*) from (values "
	. join(',', map { "('m$_->[0]_v$_->[1]', 'o$_->[0]', $_->[1])" } @evs)
	. ") v(e, o, ver), lateral hookinbox.accept('shop', 'stripe', 'shop', 'default', v.e, 'many.updated', v.o, "
	. "v.ver, '{\"Content-Type\":\"application/json\"}', convert_to('{\"id\":\"' || v.e || '\"}', 'UTF8'), false)");
my $t0 = time;
my @p = map { [HookTest::Worker::worker_bg($t, '--loop', '--concurrency', '4', '--max-runtime', '40')] } 1 .. 2;
while (time - $t0 < 45) {
	last if $t->sql("select count(*) from hookinbox.action where route = 'many' and state = 'done'") == 200;
	sleep 0.5;
}
my $secs = time - $t0;
diag $t->sql("select a.object_id, a.event_version, a.state, a.attempts, a.due_at - now(), a.lease_until - now(), a.last_error from hookinbox.action a "
	. "where a.route = 'many' and a.object_id in (select object_id from hookinbox.action where route = 'many' and state <> 'done') order by 1, 2")
	if $t->sql("select count(*) from hookinbox.action where route = 'many' and state <> 'done'") > 0;
kill 'TERM', map { $_->[0] } @p;
waitpid $_->[0], 0 for @p;
is($t->sql("select count(*) from hookinbox.action where route = 'many' and state = 'done'"), 200,
	sprintf('two workers: all 200 done (%.1f s)', $secs));
my (%seen, %ok);
for my $r (grep { $_->{path} eq '/many' } $dm->requests) {
	my ($o, $v) = $r->{event_id} =~ /^m(\d+)_v(\d+)$/ or next;
	push @{ $seen{$o} }, [$v, $r->{status}];
}
my ($bad, $overlap) = (0, 0);
for my $o (1 .. 40) {
	my @calls = @{ $seen{$o} // [] };
	# each version: 500 then 200; never a later version before an earlier succeeded
	my @want = map { ([$_, 500], [$_, 200]) } 1 .. 5;
	$bad++, diag("object $o: " . join(' ', map { "v$_->[0]:$_->[1]" } @calls))
		unless join(',', map { "@$_" } @calls) eq join(',', map { "@$_" } @want);
}
is($bad, 0, 'two workers: for every object, the downstream saw v1 .. v5 in order, each refused once then accepted');
my @log = map { HookTest::slurp($_->[1]) } @p;
ok((grep { /claimed=[1-9]/ || /event=call/ } $log[0]) && (grep { /event=call/ } $log[1]),
	'both workers made calls');

# ---- events arriving while two workers run, one of them killed mid-run:
# each object's versions arrive in order, interleaved with other objects';
# every call of version k+1 comes after version k took effect, each effect
# exactly once and in order (a call the killed worker left unrecorded is
# sent again with its key: the downstream answers it as a replay)
$dm->plan('/live', 'sleep 0.2 200');
my @q = map { my $o = $_; [map { [$o, $_] } 1 .. 4] } 1 .. 15;
my @live = map { [HookTest::Worker::worker_bg($t, '--loop', '--concurrency', '4', '--max-runtime', '40')] } 1 .. 2;
my $killed = 0;
$t0 = time;
while (grep { @$_ } @q) {
	for my $oq (grep { @$_ } @q) {
		next if rand() < 0.5;
		my ($o, $v) = @{ shift @$oq };
		HookTest::Worker::accept($t, event_id => "L${o}_v$v", type => 'live.updated', object_id => "lo$o", version => $v);
	}
	if (!$killed && time - $t0 > 1.5) {
		kill 'KILL', $live[0][0];
		$killed = 1;
	}
	sleep 0.05;
}
waitpid $live[0][0], 0;
my @live2 = ([HookTest::Worker::worker_bg($t, '--loop', '--concurrency', '4', '--max-runtime', '40')]);
while (time - $t0 < 40) {
	last if $t->sql("select count(*) from hookinbox.action where route = 'live' and state = 'done'") == 60;
	sleep 0.5;
}
kill 'TERM', map { $_->[0] } @live[1 .. $#live], @live2;
waitpid $_->[0], 0 for @live[1 .. $#live], @live2;
is($t->sql("select count(*) from hookinbox.action where route = 'live' and state = 'done'"), 60,
	sprintf('live arrivals, a worker killed: all 60 done (%.1f s)', time - $t0))
	or diag $t->sql("select object_id, event_version, state, attempts, last_error from hookinbox.action "
		. "where route = 'live' and state <> 'done' order by 1, 2");
my %lv;
push @{ $lv{ $_->{event_id} =~ /^L(\d+)_/ ? $1 : 0 } }, $_ for grep { $_->{path} eq '/live' } $dm->requests;
$bad = 0;
for my $o (1 .. 15) {
	my ($applied, @eff) = (0);
	for my $r (@{ $lv{$o} // [] }) {
		my ($v) = $r->{event_id} =~ /_v(\d+)$/;
		$bad++, diag("lo$o: v$v called before v" . ($v - 1) . ' took effect') if $v > $applied + 1;
		if ($r->{effect}) { push @eff, $v; $applied = $v if $v > $applied }
	}
	$bad++, diag("lo$o: effects @eff") unless "@eff" eq '1 2 3 4';
}
is($bad, 0, 'live arrivals: every object\'s versions took effect once each, in order, none called early');

# ---- response_ref_field: from the JSON answer; absent or not JSON tolerated
HookTest::Worker::accept($t, event_id => 'j1', type => 'refj.x');
HookTest::Worker::accept($t, event_id => 'd1', type => 'refd.x');
$d->plan('key:' . key_of('refj', 'j2'), '200 body=created, thanks');
HookTest::Worker::accept($t, event_id => 'j2', type => 'refj.x');
drain();
is_deeply([st('j1'), st('d1'), st('j2')], [qw(done done done)], 'response_ref_field: all done');
my ($j1req) = grep { ($_->{event_id} // '') eq 'j1' } $d->requests;
is($t->sql("select response_ref from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id = 'j1'"), $j1req->{seq}, 'response_ref = the answer\'s "seq" field');
like($t->sql("select response_ref from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id = 'd1'"), qr/^x-request-id: req-\d+ \[no data\.id: no such field\]$/,
	'no such field: the request id, with a note');
like($t->sql("select response_ref from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id = 'j2'"), qr/^x-request-id: req-\d+ \[no seq: answer is not JSON\]$/,
	'not JSON: the request id, with a note');
($rc, $out) = script('event', event_id => 'j1');
like($out, qr/\|\s*refj\s*\|\s*done\s*\|.*\|\s*$j1req->{seq}\s*$/m, 'event.sql shows a done action\'s reference') or diag $out;

done_testing();
