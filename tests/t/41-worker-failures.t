# SPDX-License-Identifier: ISC
# Failures that must not look like success.  A role without grants, an
# unknown role or database, a schema older than the worker: exit 78,
# last_run_ok 0, one line saying why (a database that is down: 75).  A
# worker without a route leaves that route's actions alone and says so
# once.  An SQL handler raising SQLSTATE class ZP parks at once.  Business
# dedup records what an event collapsed into.  --max-runtime is kept while
# claimed work queues.  --loop rides out a database restart.
use strict;
use warnings;
use Test::More;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(routes => {
	yes => { endpoint => 'shop', events => 'yes.*', url => $d->url('/yes'), timeout => 3 },
	other => { endpoint => 'shop', events => 'other.*', url => $d->url('/other'), timeout => 3 },
	biz => { endpoint => 'shop', events => 'biz.*', url => $d->url('/biz'), timeout => 3, key => 'object-type' },
	apply => { endpoint => 'shop', events => 'apply.*', handler => 'sql:app.apply', timeout => 3 },
}, worker => { lease => 30 });
my $conf = HookTest::slurp($t->config);

# a copy of the configuration with a change; returns its path
sub config_with {
	my ($name, $edit) = @_;
	my $c = $conf;
	$edit->() for $c;
	my $path = $t->dir . "/$name.conf";
	open my $fh, '>', $path or die $!;
	print $fh $c;
	close $fh;
	return $path;
}

sub run_conf {
	my ($path, @args) = @_;
	my $out = `@{[ HookTest::Worker::bin() ]} -v -c $path @args 2>&1`;
	return ($? >> 8, $out);
}

# ---- refused: exit 78, last_run_ok 0, one line
$t->sql('create role nogrant login');
HookTest::Worker::accept($t, event_id => 'r1', type => 'yes.x');
my $prom = $t->dir . '/refused.prom';
for my $case (['a role without grants', sub { s/user=\S+/user=nogrant/g }, qr/permission denied/],
	['an unknown role', sub { s/user=\S+/user=nosuchrole/g }, qr/nosuchrole/],
	['an unknown database', sub { s/dbname=\S+/dbname=nosuchdb/g }, qr/nosuchdb/]) {
	my ($what, $edit, $why) = @$case;
	unlink $prom;
	my $t0 = time();
	my ($rc, $out) = run_conf(config_with('refused', $edit), '--once', '--metrics-file', $prom);
	is($rc, 78, "$what: exit 78") or diag $out;
	my @errors = grep { /level=error|error/ && !/event=summary/ } split /\n/, $out;
	is(scalar @errors, 1, "$what: one line") or diag $out;
	like($errors[0] // '', $why, "$what: it says why");
	like(HookTest::slurp($prom), qr/^hookinbox_worker_last_run_ok 0$/m, "$what: last_run_ok 0");
	cmp_ok(time() - $t0, '<', 5, "$what: at once, not after retrying");
}
is(HookTest::Worker::action($t, 'r1')->{state}, undef, 'nothing was fanned out meanwhile');

# ---- schema older than the worker (which needs the newest migration)
my ($newest) = sort { $b <=> $a } map { m{/0*(\d+)_[^/]*\.sql\z} ? $1 : () }
	glob(HookTest::top() . '/sql/migrations/*.sql');
my $newest_name = $t->sql("select name from hookinbox.schema_migrations where version = $newest");
$t->sql("delete from hookinbox.schema_migrations where version = $newest");
my ($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 78, "schema without migration $newest: exit 78") or diag $out;
like($out, qr/lacks migration $newest: run sql\/install\.sql/, 'and says to run install.sql');
$t->sql("insert into hookinbox.schema_migrations (version, name) values ($newest, '$newest_name')");

# ---- a database that is down is not a configuration error
$t->pg->stop('fast');
($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 75, 'database down: 75') or diag $out;
$t->pg->start;

# ---- a route this worker does not have: left alone, said once, also
# without -v (as cron runs it: a warning the operator must see)
HookTest::Worker::accept($t, event_id => 'x1', type => 'other.x');
HookTest::Worker::accept($t, event_id => 'x2', type => 'other.x');
my $ids = $t->sql("select string_agg(id::text, ',') from hookinbox.inbox where event_id in ('x1', 'x2')");
$t->sql("select hookinbox.fan_out('{$ids}', '{$ids}', '{other,other}', '{event,event}', '{f,f}', '{5,5}')");
my $without = config_with('without', sub { s/\[route other\].*?(?=\[|\z)//s });
($rc, $out) = run_conf($without, '--once');
is($rc, 0, 'a worker without route "other" runs') or diag $out;
my @said = $out =~ /event=route-not-configured route=other due=(\d+)/g;
is_deeply(\@said, [2], 'it says once that route "other" has 2 due actions it leaves alone') or diag $out;
my $quiet = `@{[ HookTest::Worker::bin() ]} -c $without --once 2>&1`;
is($? >> 8, 0, 'without -v: exit 0');
like($quiet, qr/\A[^\n]* prog=hookinbox-worker level=warning event=route-not-configured route=other due=2 [^\n]*\n\z/,
	'without -v: that warning, one line, and nothing else') or diag $quiet;
is($t->sql("select string_agg(state || '/' || attempts, ',') from hookinbox.action where route = 'other'"),
	'pending/0,pending/0', 'their attempts are untouched');
unlike($out, qr/is not configured/, 'no attempt burnt on them');
HookTest::Worker::drain($t);
is($t->sql("select count(*) from hookinbox.action where route = 'other' and state = 'done'"), 2,
	'a worker with the route delivers them');
# the full worker that drained them has other routes: that is all it says now
$quiet = `@{[ HookTest::Worker::bin() ]} -c $without --once 2>&1`;
like($quiet, qr/\A[^\n]* level=warning event=routes-differ [^\n]*\n\z/,
	'nothing left to leave alone: without -v, only the routes-differ warning (one line)') or diag $quiet;

# ---- SQL handlers: SQLSTATE class ZP parks at once, other errors retry
$t->sql(q{create schema app;
	create function app.apply(e jsonb) returns void language plpgsql as $$
	begin
		if e->>'event_id' like 'perm%' then
			raise exception 'unknown customer' using errcode = 'ZP001';
		end if;
		raise exception 'try later';
	end $$;
	grant usage on schema app to hookinbox_worker;
	grant execute on function app.apply(jsonb) to hookinbox_worker;});
HookTest::Worker::accept($t, event_id => 'perm1', type => 'apply.x');
HookTest::Worker::accept($t, event_id => 'temp1', type => 'apply.x');
HookTest::Worker::worker($t, '--once');
my $a = HookTest::Worker::action($t, 'perm1');
is("$a->{state}/$a->{attempts}", 'parked/1', 'handler raising ZP001: parked at the first attempt');
like($a->{error}, qr/SQLSTATE ZP001: unknown customer/, 'with its SQLSTATE and message');
$a = HookTest::Worker::action($t, 'temp1');
is("$a->{state}/$a->{attempts}", 'pending/1', 'handler raising another error: retried');

# ---- business dedup leaves a trace
HookTest::Worker::accept($t, event_id => 'b1', type => 'biz.paid', object_id => 'inv_1');
HookTest::Worker::accept($t, event_id => 'b2', type => 'biz.paid', object_id => 'inv_1');
HookTest::Worker::worker($t, '--once');
HookTest::Worker::accept($t, event_id => 'b3', type => 'biz.paid', object_id => 'inv_1');
HookTest::Worker::worker($t, '--once');
my $b1 = HookTest::Worker::action($t, 'b1', 'biz');
is($t->sql("select count(*) from hookinbox.action where route = 'biz'"), 1, 'object-type: one action');
is($t->sql("select string_agg(i.event_id || '->' || c.action_id, ',' order by i.event_id) "
	. "from hookinbox.action_collapse c join hookinbox.inbox i on i.id = c.inbox_id"),
	"b2->$b1->{id},b3->$b1->{id}", 'the two later events record the action they collapsed into (same batch and later)');

# ---- --max-runtime while claimed calls queue (lease 30 s: two rounds ahead)
$d->plan('/yes', 'sleep 2.5');
HookTest::Worker::accept($t, event_id => "m$_", type => 'yes.x') for 1 .. 20;
my $t0 = time();
($rc, $out) = HookTest::Worker::worker($t, '--once', '--max-runtime', '6', '--concurrency', '2');
is($rc, 0, '--max-runtime 6: exit 0') or diag $out;
my ($ms) = $out =~ /event=summary .*duration_ms=(\d+)/;
cmp_ok($ms, '<=', 7000, "--max-runtime 6: the run ended in time ($ms ms)") or diag $out;
like($out, qr/claim_ahead=2 .*released=[1-9]/, 'it handed back what could not end in time');
is($t->sql("select count(*) from hookinbox.action where lease_token is not null"), 0, 'no claim left dangling');
is($t->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
	. "where i.event_id like 'm%' and a.state = 'pending' and a.attempts > 0"), 0,
	'what was handed back kept its attempts');
$d->plan('/yes', '200');

# ---- --loop: a database restart is ridden out
my ($pid, $lf) = HookTest::Worker::worker_bg($t, '--loop');
HookTest::Worker::accept($t, event_id => 'l1', type => 'yes.x');
sleep 2;
$t->pg->restart('fast');
HookTest::Worker::accept($t, event_id => 'l2', type => 'yes.x');
my $until = time() + 30;
sleep 0.5 while time() < $until && (HookTest::Worker::action($t, 'l2')->{state} // '') ne 'done'
	&& waitpid($pid, WNOHANG) == 0;
is(HookTest::Worker::action($t, 'l2')->{state}, 'done', '--loop: an event after the restart is delivered');
is(waitpid($pid, WNOHANG), 0, '--loop: the worker is still running');
kill 'TERM', $pid;
waitpid $pid, 0;
is($? >> 8, 0, '--loop: SIGTERM after the restart: exit 0');
like(HookTest::slurp($lf), qr/event=reconnected.*event=summary .*reconnects=1/s, 'it reconnected once')
	or diag HookTest::slurp($lf);

done_testing();
