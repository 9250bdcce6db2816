# SPDX-License-Identifier: ISC
# Per-route limits against a real HTTP downstream.  Pause/resume from SQL
# (sql/route.sql) holds a route's actions without using attempts and is
# shown by stats.sql; a rate caps calls per second (never more than the
# burst plus rate x elapsed, between any two calls); a 429 with
# Retry-After holds the whole route, not only the action that got it; a
# route's concurrency cap is never exceeded.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $top = HookTest::top();
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/slow' => 'sleep 0.3 200' });
my $t = HookTest::Worker::setup(routes => {
	p => { endpoint => 'shop', events => 'p.*', url => $d->url('/p'), timeout => 3 },
	r => { endpoint => 'shop', events => 'r.*', url => $d->url('/r'), timeout => 3, rate => 4 },
	h => { endpoint => 'shop', events => 'h.*', url => $d->url('/h'), timeout => 3, concurrency => 1 },
	s => { endpoint => 'shop', events => 's.*', url => $d->url('/slow'), timeout => 3, concurrency => 3 },
}, worker => { lease => 20, concurrency => 8 });

sub calls { my ($path) = @_; return grep { $_->{path} eq $path } $d->requests }
sub route_sql {
	my (%v) = @_;
	return $t->pg->psql_file("$top/sql/route.sql", role => 'hookinbox_admin', vars => \%v);
}

# ---- pause / resume (a route exists once a worker has registered it)
my ($rc, $out) = route_sql(route => 'q', do => 'pause');
isnt($rc, 0, 'route.sql: an unknown route is refused');
like($out, qr/no worker has registered a route named "q"/, 'and says so');
is($t->sql("select count(*) from hookinbox.route_state"), 0, 'nothing was paused');
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'a worker registers its routes') or diag $out;
($rc, $out) = route_sql(route => 'p', do => 'pause', reason => 'downstream migration');
is($rc, 0, 'route.sql without go=1: a dry run') or diag $out;
like($out, qr/dry run: route p would be paused; nothing changed/, 'the dry run says what it would do');
is($t->sql("select count(*) from hookinbox.route_state where paused"), 0, 'dry run: nothing paused');
($rc, $out) = route_sql(route => 'p', do => 'pause', reason => 'downstream migration', go => 1);
is($rc, 0, 'route.sql pauses a route') or diag $out;
like($out, qr/\bp\s*\|\s*t\b/, 'route.sql shows it paused');
($rc, $out) = route_sql(route => 'p');
isnt($rc, 0, 'route.sql: a route without do= is a usage error');
HookTest::Worker::accept_many($t, 5, prefix => 'pp', type => 'p.x');
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'a run with the route paused') or diag $out;
is(scalar(calls('/p')), 0, 'paused: no call');
is($t->sql("select count(*) || ' ' || sum(attempts) from hookinbox.action where route = 'p' and state = 'pending'"),
	'5 0', 'paused: every action pending, no attempt used');
($rc, $out) = $t->pg->psql_file("$top/sql/stats.sql", role => 'hookinbox_admin');
like($out, qr/^\s*p\s*\|\s*t\s*\|\s*closed\s*\|.*downstream migration/m, 'stats.sql shows the paused route');
($rc, $out) = route_sql(route => 'p', do => 'resume', go => 1);
is($rc, 0, 'route.sql resumes') or diag $out;
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($t->sql("select count(*) || ' ' || sum(attempts) from hookinbox.action where route = 'p' and state = 'done'"),
	'5 5', 'resumed: every action done at its first attempt');
is(scalar(calls('/p')), 5, 'resumed: one call each');

# ---- rate: 4 calls/s, burst 4
HookTest::Worker::accept_many($t, 12, prefix => 'rr', type => 'r.x');
($rc, $out) = HookTest::Worker::worker($t, '--once');
my @t = sort { $a <=> $b } map { $_->{t} } calls('/r');
is(scalar @t, 12, 'rate: every call made');
my $worst = 0;
for my $i (0 .. $#t) {
	for my $j ($i .. $#t) {
		my $excess = ($j - $i + 1) - (4 + 4 * ($t[$j] - $t[$i]));
		$worst = $excess if $excess > $worst;
	}
}
cmp_ok($worst, '<=', 1, 'rate: between any two calls, at most burst + rate x elapsed (+1 for rounding)');
is($t->sql("select count(*) from hookinbox.action where route = 'r' and state = 'done'"), 12, 'rate: all done');

# ---- 429 with Retry-After holds the whole route
HookTest::Worker::accept_many($t, 4, prefix => 'hh', type => 'h.x');
my $key = $t->sql("select hookinbox.action_key('h', 'event', 'stripe', 'shop', 'default', 'hh_1', null, 'h.x')");
$d->plan("key:$key", '429 Retry-After: 2,200');
$t->sql("update hookinbox.inbox set received_at = received_at - interval '1 minute' where event_id = 'hh_1'");
($rc, $out) = HookTest::Worker::worker($t, '--once');
my @h = calls('/h');
is(scalar @h, 1, '429: one call; the rest of the route waits (this run ends)');
is($h[0]{key} . ' ' . $h[0]{status}, "$key 429", '429: answered to the first call');
like($out, qr/route=h state=hold/, 'the hold is logged');
is($t->sql("select (hold_until > now())::text || ' ' || breaker from hookinbox.route_state where route = 'h'"),
	'true closed', 'route_state: the route is held for every worker (breaker closed)');
HookTest::Worker::drain($t, timeout => 30);
@h = sort { $a->{t} <=> $b->{t} } calls('/h');
cmp_ok($h[1]{t} - $h[0]{t}, '>=', 1.9, sprintf('no call to the route during its Retry-After (next after %.2f s)',
	$h[1]{t} - $h[0]{t}));
is($t->sql("select string_agg(attempts::text, ',' order by attempts) from hookinbox.action where route = 'h'"),
	'1,1,1,2', 'held actions used no attempt; the one that got 429 used two');
is($t->sql("select count(*) from hookinbox.action where route = 'h' and state = 'done'"), 4, '429: all done');

# ---- a Retry-After of years: the route is held an hour at most, the action
# not parked; do=clear ends the hold at once
HookTest::Worker::accept_many($t, 3, prefix => 'hy', type => 'h.x');
$key = $t->sql("select hookinbox.action_key('h', 'event', 'stripe', 'shop', 'default', 'hy_1', null, 'h.x')");
$d->plan("key:$key", '503 Retry-After: 999999999,200');
$t->sql("update hookinbox.inbox set received_at = received_at - interval '1 minute' where event_id = 'hy_1'");
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($t->sql("select (hold_until between now() + interval '59 minutes' and now() + interval '61 minutes')::text "
	. "from hookinbox.route_state where route = 'h'"), 'true', 'Retry-After 999999999: the route is held one hour');
my $a1 = HookTest::Worker::action($t, 'hy_1');
is($a1->{state}, 'pending', 'the action that got it is not parked');
is($t->sql("select (due_at <= now() + interval '6 hours 1 minute')::text from hookinbox.action where id = $a1->{id}"),
	'true', 'and is due again within 6 hours');
($rc, $out) = route_sql(route => 'h', do => 'clear', go => 1);
is($rc, 0, 'route.sql do=clear') or diag $out;
is($t->sql("select coalesce(hold_until::text, 'none') || ' ' || breaker from hookinbox.route_state where route = 'h'"),
	'none closed', 'cleared: no hold, breaker closed');
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id in ('hy_2', 'hy_3') and a.state = 'done'"), 2, 'after the clear, the route delivers again');

# ---- concurrency cap: never more than 3 in flight on /slow
HookTest::Worker::accept_many($t, 12, prefix => 'ss', type => 's.x');
($rc, $out) = HookTest::Worker::worker($t, '--once');
my @s = calls('/slow');
is(scalar @s, 12, 'cap: every call made');
my $max = 0;
for my $c (@s) {
	# calls that had started and not yet been answered when this one arrived
	my $n = grep { $_->{t} <= $c->{t} && $_->{t} + 0.3 > $c->{t} } @s;
	$max = $n if $n > $max;
}
cmp_ok($max, '<=', 3, "cap: at most 3 calls in flight at once (saw $max)");
is($t->sql("select count(*) from hookinbox.action where route = 's' and state = 'done'"), 12, 'cap: all done');

done_testing;
