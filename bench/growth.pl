#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# bench/growth.pl - what grows with volume on one primary, for
# docs/scaling.md: WAL per delivery (single-row commits and batches of 16)
# and per action (the worker's fan-out, claim and record), the inbox's and
# the action table's heap, TOAST and indexes per delivery, and the dead
# rows the worker leaves in the action table with what one VACUUM of them
# costs.
#
#   make build-bench && HOOKINBOX_TOP=$PWD perl -I tests/lib bench/growth.pl
#
# GROWTH_N (default 20000) deliveries of 2 KB, two HTTP routes (so 2 x N
# actions) against bench/downstream with no latency.  Default durability;
# every measurement starts right after a CHECKPOINT, so full-page images
# are counted as a busy primary pays them once per page and checkpoint.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../tests/lib";
use HookTest;
use File::Temp qw(tempdir);
use POSIX ();
use Time::HiRes qw(time sleep);

$| = 1;
my $top = HookTest::top();
my $N = $ENV{GROWTH_N} // 20000;
my $dir = tempdir('hookinbox-growth-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{HOOKINBOX_KEEP});
chmod 0755, $dir;
for my $bin ("$top/worker/hookinbox-worker", "$top/obj/bench/downstream") {
	die "growth: $bin is not built (make && make build-bench)\n" unless -x $bin;
}
my $pg = HookTest::Pg->new(dir => $dir)->init(extra => "max_wal_size = 4GB\ncheckpoint_timeout = 30min\n")->start;
$pg->create_db;
sub sql { return $pg->sql(@_) }
sub lsn { return sql('select pg_current_wal_lsn()') }
sub wal_since { my ($l) = @_; return sql("select pg_current_wal_lsn() - '$l'::pg_lsn") }
sub mb { return sprintf('%.1f MB', $_[0] / 1048576) }

# pg_stat_wal since the last wal_reset: "records, full-page images"
sub wal_reset { sql("select pg_stat_reset_shared('wal')") }
sub wal_stats {
	sleep 1.2;   # backends flush their WAL statistics about once a second
	my ($rec, $fpi) = split /\|/, sql('select wal_records, wal_fpi from pg_stat_wal');
	return sprintf('%d records, %d full-page images', $rec, $fpi);
}

my $body = '{"id":"evt","object":"event","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1",'
	. '"pad":"' . ('x' x 1900) . '"}}}';
my $hex = unpack('H*', $body);

# pgbench: N deliveries as batches of b, 8 clients
sub load {
	my ($b, $tag) = @_;
	my $script = "$dir/accept-$b.sql";
	my $arr = sub { my ($e) = @_; "(select array_agg($e) from generate_series(1, $b) g)" };
	open my $fh, '>', $script or die $!;
	print $fh "\\set n random(1, 999999999999)\n",
		"select count(*) from hookinbox.accept_batch(", join(', ', $arr->("'bench'::text"), $arr->("'stripe'::text"),
			$arr->("'acct'::text"), $arr->("'live'::text"),
			$arr->("'evt_${tag}_' || :client_id || '_' || :n || '_' || g"), $arr->("'invoice.paid'::text"),
			$arr->("'in_' || :n || '_' || g"), $arr->('1700000000::bigint'),
			$arr->(q{'{"Content-Type":"application/json"}'::jsonb}), $arr->("'\\x$hex'::bytea"), $arr->('false')),
		");\n";
	close $fh;
	my $tx = int($N / $b / 8);
	sql('checkpoint');
	wal_reset();
	my $l0 = lsn();
	my $t0 = time;
	HookTest::run("$pg->{bin}/pgbench", '-n', '-M', 'prepared', '-f', $script, '-c', 8, '-j', 2, '-t', $tx,
		'-h', $pg->{sock}, '-p', $pg->{port}, '-U', 'hookinbox_intake', 'hookinbox');
	my $wall = time - $t0;
	my $n = $tx * 8 * $b;
	my $wal = wal_since($l0);
	printf "intake, batches of %2d: %d deliveries in %.1f s, WAL %s (%s), %.0f bytes per delivery (body 2 KB)\n",
		$b, $n, $wall, mb($wal), wal_stats(), $wal / $n;
	return $n;
}

print "# bench/growth.pl: $N deliveries of 2 KB; " . sql('select version()') . "\n";
load(1, 's');
my $n = load(16, 'b');
sql('vacuum analyze hookinbox.inbox');
my $rows = sql('select count(*) from hookinbox.inbox');
my ($heap, $toast, $idx) = split /\|/, sql("select pg_relation_size('hookinbox.inbox'), "
	. "coalesce(pg_total_relation_size(reltoastrelid), 0), pg_indexes_size('hookinbox.inbox') "
	. "from pg_class where oid = 'hookinbox.inbox'::regclass");
printf "inbox: %d rows; heap %s (%.0f B/row), TOAST %s, indexes %s (%.0f B/row)\n", $rows, mb($heap), $heap / $rows,
	mb($toast), mb($idx), $idx / $rows;
print "  $_\n" for split /\n/, sql("select indexrelid::regclass || ' ' || pg_size_pretty(pg_relation_size(indexrelid)) "
	. "|| ' (' || round(pg_relation_size(indexrelid)::numeric / $rows) || ' B/row)' from pg_index "
	. "where indrelid = 'hookinbox.inbox'::regclass order by 1");

# the worker over the second load's deliveries only: N deliveries, 2 routes
sql("delete from hookinbox.inbox where event_id like 'evt\\_s\\_%'");
sql('vacuum hookinbox.inbox');
my $dpid = open(my $dfh, '-|', "$top/obj/bench/downstream", '--latency', '0') or die "downstream: $!";
my ($port) = (<$dfh> // '') =~ /port=(\d+)/ or die "downstream gave no port\n";
my $conf = "$dir/worker.conf";
open my $fh, '>', $conf or die $!;
print $fh "[database]\nconninfo = " . $pg->conninfo('hookinbox_worker') . "\n[worker]\nconcurrency = 64\n",
	map { "[route r$_]\nendpoint = bench\nurl = http://127.0.0.1:$port/r$_\n" } 1 .. 2;
print $fh "[endpoint bench]\nprovider = stripe\nsecret_file = $dir/secret\n";
close $fh;
open $fh, '>', "$dir/secret" or die $!;
print $fh "whsec_growth_0123456789abcdef\n";
close $fh;
chmod 0600, "$dir/secret";
# Twice: right after a checkpoint (every inbox page the fan-out marks
# dispatched pays a full-page image), and in the checkpoint cycle in which
# the deliveries arrived (a worker that keeps up)
my ($actions, $wall);
for my $when ('after a checkpoint', 'same checkpoint cycle as the intake') {
	sql("update hookinbox.inbox set state = 'pending', dispatched_at = null");
	sql('truncate hookinbox.action, hookinbox.object_state');
	sql('vacuum hookinbox.inbox');
	if ($when =~ /^after/) {
		sql('checkpoint');
	} else {
		# the deliveries again, fresh, without a checkpoint in between
		sql('truncate hookinbox.inbox');
		sql('checkpoint');
		load(16, 'c');
	}
	wal_reset();
	my $l0 = lsn();
	my $t0 = time;
	my $out = `$top/worker/hookinbox-worker -c $conf --once 2>&1`;
	die "worker failed: $out" if $? != 0;
	$wall = time - $t0;
	$actions = sql("select count(*) from hookinbox.action where state = 'done'");
	my $wal = wal_since($l0);
	printf "worker (%s): %d actions done in %.1f s (fan-out, claim, call, record), WAL %s (%s), %.0f bytes per action\n",
		$when, $actions, $wall, mb($wal), wal_stats(), $wal / ($actions || 1);
}
kill 'TERM', $dpid;
close $dfh;
sleep 1.5;   # the statistics are flushed about once a second
my ($live, $dead) = split /\|/, sql("select n_live_tup, n_dead_tup from pg_stat_user_tables "
	. "where relid = 'hookinbox.action'::regclass");
my ($aheap, $aidx) = split /\|/, sql("select pg_relation_size('hookinbox.action'), pg_indexes_size('hookinbox.action')");
printf "action: %d live, %d dead rows after the run (%.1f dead per action); heap %s (%.0f B/action), indexes %s (%.0f B/action)\n",
	$live, $dead, $dead / ($actions || 1), mb($aheap), $aheap / ($actions || 1), mb($aidx), $aidx / ($actions || 1);
print "  $_\n" for split /\n/, sql("select indexrelid::regclass || ' ' || pg_size_pretty(pg_relation_size(indexrelid)) "
	. "from pg_index where indrelid = 'hookinbox.action'::regclass order by 1");
my $l0 = lsn();
my $t0 = time;
sql('vacuum hookinbox.action');
printf "VACUUM hookinbox.action: %.2f s, WAL %s\n", time - $t0, mb(wal_since($l0));
print 'autovacuum settings: ' . sql("select array_to_string(reloptions, ', ') from pg_class where oid = 'hookinbox.action'::regclass") . "\n";
$pg->stop;
