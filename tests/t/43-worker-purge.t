# SPDX-License-Identifier: ISC
# Retention: one run purges everything due, 25,000 aged events, in bounded
# batches each committed on its own, and prints this run's counts (nothing
# with -v quiet=1); it never deletes nor strips parked, pending (waiting or
# retrying) work, nor inbox rows in a state it does not know (an intake's
# review), and a later replay of a parked action still finds its payload.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $N = 25000;
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/no' => '422', '/later' => '503' });
my $t = HookTest::Worker::setup(routes => {
	yes => { endpoint => 'shop', events => 'yes.*', url => $d->url('/yes'), timeout => 2 },
	no => { endpoint => 'shop', events => 'no.*', url => $d->url('/no'), timeout => 2 },
	later => { endpoint => 'shop', events => 'later.*', url => $d->url('/later'), timeout => 2 },
}, worker => { backoff_base => 3600, backoff_cap => 3600 });
my $sql = HookTest::top() . '/sql';

sub purge {
	my (%vars) = @_;
	return $t->pg->psql_file("$sql/purge.sql", vars => { payload_days => 7, dedup_days => 30, %vars },
		role => 'hookinbox_admin');
}

# the protected: parked, retrying, waiting (not fanned out), in review
HookTest::Worker::accept($t, event_id => 'parked1', type => 'no.x');
HookTest::Worker::accept($t, event_id => 'retry1', type => 'later.x');
HookTest::Worker::accept($t, event_id => 'done1', type => 'yes.x');
HookTest::Worker::drain($t, timeout => 5);
is(HookTest::Worker::action($t, 'parked1')->{state}, 'parked', 'a parked action');
is(HookTest::Worker::action($t, 'retry1')->{state} . '/' . HookTest::Worker::action($t, 'retry1')->{attempts}, 'pending/1',
	'a retrying action');
HookTest::Worker::accept($t, event_id => 'waiting1', type => 'yes.x');
# an inbox state this version does not know (the intake's review, migration 004)
$t->sql(q{alter domain hookinbox.inbox_state drop constraint inbox_state_check});
HookTest::Worker::accept($t, event_id => 'review1', type => 'yes.x');
$t->sql(q{update hookinbox.inbox set state = 'review' where event_id = 'review1'});

# the finished: $N unrouted events, aged past both horizons
HookTest::Worker::accept_many($t, $N, prefix => 'old', type => 'nobody.x');
$t->sql(q{update hookinbox.inbox set state = 'unrouted', dispatched_at = now() where event_id like 'old\_%'});
$t->sql(q{update hookinbox.inbox set received_at = now() - interval '40 days'});
$t->sql(q{insert into hookinbox.rejection (hour, endpoint, reason, count)
	values (date_trunc('hour', now() - interval '40 days'), 'shop', 'signature', 3)});

my ($rc, $out) = purge(batch => 1000);
is($rc, 0, 'purge.sql runs') or diag $out;
my $done_id = HookTest::Worker::action($t, 'done1')->{id};
like($out, qr/purged this run: bodies 0 , events @{[ $N + 1 ]} , actions 1 , rejection counts 1 in (\d+) batches/,
	"one run: all $N aged events and the finished one, with its action") or diag $out;
is($t->sql(q{select string_agg(hour::text || ':' || count, ',') from hookinbox.rejection
	where endpoint = 'shop' and reason = 'signature'}), '-infinity:3',
	'the aged rejection hour folded into its total, not dropped');
my ($batches) = $out =~ /in (\d+) batches/;
cmp_ok($batches // 0, '>=', 26, "in bounded batches ($batches of at most 1000 rows)");
is($t->sql(q{select count(*) from hookinbox.inbox where event_id like 'old\_%'}), 0, 'none left');
is($t->sql(q{select string_agg(event_id || ':' || state || ':' || (body is not null)::text, ',' order by event_id)
	from hookinbox.inbox}), 'parked1:dispatched:true,retry1:dispatched:true,review1:review:true,waiting1:pending:true',
	'parked, retrying, waiting and in-review events kept, with their bodies');
is($t->sql(q{select string_agg(a.state, ',' order by a.state) from hookinbox.action a}), 'parked,pending',
	'their actions kept');

# a second run finds nothing; -v quiet=1 prints nothing
($rc, $out) = purge();
like($out, qr/bodies 0 , events 0 , actions 0 ,/, 'a second run: nothing due') or diag $out;
($rc, $out) = purge(quiet => 1);
is($rc, 0, 'quiet run: exit 0');
is($out, '', 'quiet run: no output (cron mails nothing)');

# payload horizon only: bodies of finished events go, rows stay
HookTest::Worker::accept($t, event_id => 'done2', type => 'yes.x');
HookTest::Worker::worker($t, '--once');
$t->sql(q{update hookinbox.inbox set received_at = now() - interval '10 days'});
($rc, $out) = purge();
like($out, qr/bodies 2 , events 0 ,/, 'payload horizon: two bodies stripped') or diag $out;
is($t->sql(q{select string_agg(event_id, ',' order by event_id) from hookinbox.inbox where body is null}),
	'done2,waiting1', 'those of the events finished meanwhile');
is($t->sql(q{select count(*) from hookinbox.inbox}), 5, 'no row deleted');

# the parked action can still be replayed, with its payload
$d->plan('/no', '200');
($rc, $out) = $t->pg->psql_file("$sql/replay.sql", vars => { route => 'no', go => 1 }, role => 'hookinbox_admin');
HookTest::Worker::worker($t, '--once');
is(HookTest::Worker::action($t, 'parked1')->{state}, 'done', 'a parked action kept past both horizons is replayed and done');

($rc, $out) = purge(payload_days => 5, dedup_days => 1);
isnt($rc, 0, 'payload_days > dedup_days: non-zero exit');
like($out, qr/need 0 <= payload_days <= dedup_days/, 'and says why');

# the folded rejection total, as the metrics export it after the purges
{
	my $prom = $t->dir . '/purge.prom';
	HookTest::Worker::worker($t, '--once', '--metrics-file', $prom);
	like(HookTest::slurp($prom), qr/^hookinbox_rejections_total\{endpoint="shop",reason="signature"\} 3$/m,
		'the exported counter does not go down after a purge (no false reset for rate())');
}
done_testing();
