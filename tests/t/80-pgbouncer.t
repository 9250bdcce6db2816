# SPDX-License-Identifier: ISC
# The responder and the worker through PgBouncer 1.18 in transaction mode, with fewer
# server connections than clients, so each transaction may run on a server
# connection another client used before (a named prepared statement made
# on one would be missing on the next).  Signed load with redeliveries
# against the responder in single-row and group-commit mode while several
# workers (--once) claim with SKIP LOCKED, deliver to a downstream and run
# an SQL handler.  Afterwards: one row per delivery key, every answer 2xx
# (the pooler is no outage), one downstream effect per idempotency key, the
# SQL handler applied each event once.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::HA;
use HookTest::Load;
use HookTest::PgBouncer;
use HookTest::Downstream;

plan skip_all => 'pgbouncer is not installed (tools/install-deps)' unless HookTest::PgBouncer::available();
plan skip_all => 'heavy, and built with a sanitizer: the responder paths it reaches run under the sanitizers in 84' if HookTest::HA::sanitized();

my $POOL = 3;   # server connections per role: fewer than the clients
my $secret = 'whsec_pooler_test_51c0ffee77';
my ($t, $d) = HookTest::HA::setup(secret => $secret);
my $b = HookTest::PgBouncer->new(dir => $t->dir, pg => $t->pg, pool_size => $POOL)->start;
HookTest::HA::configure($t, intake => $b->conninfo('hookinbox_intake'), worker => $b->conninfo('hookinbox_worker'));
my $sql = sub { $t->sql(@_) };

sub phase {
	my ($tag, $procs, $threads) = @_;
	$t->{o}{intake}{threads} = $threads if $threads;
	HookTest::HA::configure($t, intake => $b->conninfo('hookinbox_intake'),
		worker => $b->conninfo('hookinbox_worker'));
	my $h = HookTest::Lighttpd->new(dir => $t->dir, fcgi => HookTest::top() . '/obj/test/hookinbox.fcgi',
		config => $t->config, procs => $procs)->start;
	my $what = $threads ? "group commit ($procs procs x $threads threads)" : "single-row ($procs procs)";
	my $load = HookTest::Load->new(dir => $t->dir, urls => [$h->url . '/st'], secret => $secret, tag => $tag)
		->start(senders => 6);
	# workers claim while deliveries arrive
	my $until = time() + 3;
	my ($fail, $logs) = (0, '');
	while (time() < $until) {
		my ($f, $l) = HookTest::HA::wait_workers(HookTest::HA::workers_bg($t, 3));
		$fail += $f;
		$logs .= $l;
	}
	$load->stop;
	my $r = $load->reconcile(sql => $sql, what => "$what through PgBouncer");
	is($r->{status}{503} // 0, 0, "$what: no 503 through the pooler") or diag($t->responder_log =~ /(.*error.*)/ ? $1 : '');
	my ($f2, $l2) = HookTest::HA::drain($t, 3, sql => $sql);
	is($fail + $f2, 0, "$what: every worker run exited 0") or diag(($logs . $l2) =~ /(.*error.*)/g);
	my @sent = ($logs . $l2) =~ /event=summary .*? sent=(\d+)/g;
	cmp_ok(scalar(grep { $_ > 0 } @sent), '>=', 2, "$what: several workers did the work");
	HookTest::Load::check_worker(sql => $sql, downstream => $d, tag => $tag, routes => ['down'],
		sql_table => 'app.applied', what => "$what: workers through PgBouncer");
	$h->stop;
}

phase('p', 6);
phase('g', 2, 8);

# it all went through the pooler, on at most POOL server connections a role
my $stats = $b->show('stats');
my ($xact) = $stats =~ /^hookinbox\|(\d+)\|/m;
cmp_ok($xact // 0, '>', 1000, "PgBouncer carried the transactions ($xact)");
my $servers = $t->sql("select count(*) from pg_stat_activity where usename = 'hookinbox_intake'");
cmp_ok($servers, '<=', $POOL, "the responders shared $servers server connection(s)");
like($t->responder_log, qr/prepared statements do not last between transactions/,
	'the responders noticed that named statements do not last, and stopped naming them');
unlike($t->responder_log, qr/could not (?:store|prepare|connect)/, 'no delivery failed to be stored');
unlike($b->log, qr/ERROR|WARNING/, 'PgBouncer logged no error') or diag(join "\n", $b->log =~ /(.*(?:ERROR|WARNING).*)/g);

done_testing();
