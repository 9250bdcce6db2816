#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# bench/accept-cost.pl - PostgreSQL CPU per delivery of accept_batch() or accept_one(), alone.
#
#   HOOKINBOX_TOP=$PWD perl -I tests/lib bench/accept-cost.pl [options] [NAME=FILE.sql ...]
#
# One private cluster (HookTest::Pg, fsync on as in bench/run.pl), the
# schema of this tree, then pgbench -M prepared as hookinbox_intake calling
# the responder's statement (select id, duplicate, held from
# hookinbox.accept_batch(...)) with the bench's 2 KB Stripe body
# (obj/bench/loadgen --print-body), unique event ids, in batches of 1 (one
# call, one commit per delivery) and of 16 (group commit's shape).  The
# figure is the whole cluster's CPU (utime+stime of the postmaster, its
# children and its reaped children, from /proc) over the run, in µs per
# delivery; the inbox is truncated and checkpointed before each run.
#
# Each NAME=FILE.sql is a variant: FILE is run with psql as postgres before
# that variant's runs (e.g. an older functions.sql, or an "alter table");
# the variants are measured in turn, -r rounds of each, so that the noise
# of a shared machine falls on all of them alike.  Without one, the tree's
# schema is measured as "tree".  A variant's FILE should undo what another
# did, when both change the same thing.  To compare a branch with main:
#
#   git show main:sql/functions.sql > /tmp/old.sql
#   ... accept-cost.pl -T 3 -r 4 -b "1 4 16" old=/tmp/old.sql new=sql/functions.sql
#
# Options: -n N deliveries per run (default 4000), -c C pgbench clients
# (default 1), -r R rounds (default 3), -b "1 16" batch sizes ("one": a
# call of accept_one(), single-row mode's statement), -s SIZE body
# bytes (default 2048), -p DIR: perf record -g each run's first backend
# into DIR/NAME-BATCH.data (for perf report; the figures are then disturbed),
# -T SECONDS: each run lasts 2 + SECONDS, and only what the last SECONDS
# stored and cost is counted, as in bench/run.pl (new backends parse the
# function and plan its statements first: with -c 16 and -n, that is
# in the figures), -q: a quieter cluster for comparing variants (fsync and
# autovacuum off: no flush or vacuum in the figures, which then read lower
# than make bench's).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../tests/lib";
use HookTest;
use File::Temp qw(tempdir);
use Getopt::Std;
use POSIX qw(sysconf _SC_CLK_TCK);
use Time::HiRes qw(time sleep);

$| = 1;
my %o;
getopts('n:c:r:b:s:p:qT:', \%o) or die "usage: accept-cost.pl [-n N] [-c C] [-r R] [-b SIZES] [-s BYTES] [NAME=FILE ...]\n";
my $N = $o{n} // 4000;
my $C = $o{c} // 1;
my $R = $o{r} // 3;
my @BATCH = split ' ', ($o{b} // '1 16');
@BATCH or die "accept-cost.pl: -b: no batch size given\n";
/^(?:one|[1-9][0-9]*)\z/ or die "accept-cost.pl: -b: '$_' is neither a batch size (1 or more) nor \"one\"\n" for @BATCH;
my $SIZE = $o{s} // 2048;
my $TICK = sysconf(_SC_CLK_TCK) || 100;
my $top = HookTest::top();
my @variants = map { /^([^=]+)=(.+)$/ or die "$_: NAME=FILE expected\n"; [$1, $2] } @ARGV;
@variants = (['tree', undef]) unless @variants;
-x "$top/obj/bench/loadgen" or die "obj/bench/loadgen missing: make build-bench\n";

my $dir = tempdir('hookinbox-accost-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $dir;
my $pg = HookTest::Pg->new(dir => $dir)->init(fsync => ($o{q} ? 'off' : 'on'),
	extra => "max_wal_size = 4GB\ncheckpoint_timeout = 30min\n" . ($o{q} ? "autovacuum = off\n" : ''))->start;
$pg->create_db;

sub stat_cpu {
	my ($pid, $dead) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return (0, undef);
	my $l = <$fh> // '';
	return (0, undef) unless $l =~ /^\d+ \(.*\) (.*)$/s;
	my @f = split ' ', $1;
	return (($f[11] + $f[12] + ($dead ? $f[13] + $f[14] : 0)) / $TICK, $f[1]);
}

sub pg_cpu_s {
	open my $fh, '<', "$pg->{data}/postmaster.pid" or return 0;
	chomp(my $pm = <$fh>);
	my ($t) = stat_cpu($pm, 1);
	opendir my $d, '/proc' or return $t;
	for my $p (grep { /^\d+$/ } readdir $d) {
		my ($c, $ppid) = stat_cpu($p, 0);
		$t += $c if defined $ppid && $ppid == $pm;
	}
	return $t;
}

my $hex = unpack('H*', scalar `$top/obj/bench/loadgen --print-body 1 -s $SIZE -p pgbench`);
my $headers = '{"Content-Type":"application/json","User-Agent":"Stripe/1.0 (+https://stripe.com/docs/webhooks)"}';

sub script {
	my ($b) = @_;
	my $f = "$dir/accept-$b.sql";
	return $f if -e $f;
	my $one = $b eq 'one';
	my $arr = $one ? sub { $_[0]->(1) } : sub { 'array[' . join(', ', map { $_[0]->($_) } 1 .. $b) . ']' };
	open my $fh, '>', $f or die $!;
	print $fh "\\set n random(1, 999999999999)\n",
		# the responder's statements (fcgi/store.c, ONE_SQL and ACCEPT_SQL)
		$one ? 'select (r).id, (r).duplicate, (r).held from (select hookinbox.accept_one('
		     : 'select id, duplicate, held from hookinbox.accept_batch(',
		join(', ', $arr->(sub { "'bench'" }), $arr->(sub { "'stripe'" }), $arr->(sub { "'acct_bench'" }),
			$arr->(sub { "'live'" }),
			$arr->(sub { "'evt_' || :client_id::text || '_' || :n::text || '_$_[0]'" }),
			$arr->(sub { "'invoice.paid'" }), $arr->(sub { "'in_' || :n::text" }),
			$arr->(sub { '1700000000::bigint' }), $arr->(sub { "'$headers'::jsonb" }),
			$arr->(sub { "'\\x$hex'::bytea" }), $arr->(sub { 'false' }), $arr->(sub { 'null::bytea' }),
			$arr->(sub { 'null::text' })),
		$one ? ") as r offset 0) s;\n" : ");\n";
	close $fh;
	return $f;
}

my %res;   # "$variant/$batch" => [µs per delivery, ...]
for my $round (1 .. $R) {
	for my $v (@variants) {
		my ($name, $file) = @$v;
		if (defined $file) {
			my ($rc, $out) = $pg->psql_file($file);
			die "$file: $out" if $rc;
		}
		for my $b (@BATCH) {
			my $n = $b eq 'one' ? 1 : $b;
			my $calls = int(($N + $n - 1) / $n);
			my $per = int(($calls + $C - 1) / $C);
			$pg->sql('truncate hookinbox.inbox');
			$pg->sql('checkpoint');
			my @cmd = ("$pg->{bin}/pgbench", '-n', '-M', 'prepared', '-f', script($b), '-c', $C,
				'-j', ($C < 2 ? 1 : 2), ($o{T} ? ('-T', 2 + $o{T}) : ('-t', $per)), '-h', $pg->{sock},
				'-p', $pg->{port}, '-U', 'hookinbox_intake', 'hookinbox');
			if ($o{T}) {
				my $cmdline = join ' ', map { HookTest::Proc::shell_quote($_) } @cmd;
				open my $ph, '-|', "$cmdline 2>&1" or die "pgbench: $!";
				sleep 2;
				my $t0 = time;
				my $c0 = pg_cpu_s();
				my $out = do { local $/; <$ph> } // '';
				close $ph or die "pgbench: $?\n$out";
				sleep 0.3;
				my $c1 = pg_cpu_s();
				my $rows = $pg->sql("select count(*) from hookinbox.inbox where received_at >= to_timestamp($t0)");
				my $us = ($c1 - $c0) * 1e6 / ($rows || 1);
				push @{ $res{"$name/$b"} }, $us;
				printf "# round %d %-12s batch %3s: %6.1f µs/delivery (%d rows in %.0f s)\n", $round, $name, $b,
					$us, $rows, $o{T};
				next;
			}
			my $t0 = time;
			my $c0 = pg_cpu_s();
			my $perf;
			if ($o{p}) {
				$perf = fork // die "fork: $!";
				if ($perf == 0) {
					my $pid;
					for (1 .. 200) {
						$pid = $pg->sql("select pid from pg_stat_activity where application_name = 'pgbench'"
							. " order by pid limit 1") and last;
						sleep 0.01;
					}
					exec('perf', 'record', '-q', '-g', '-o', "$o{p}/$name-$b.data", '-p', (split /\n/, $pid)[0])
						if $pid;
					exit 1;
				}
			}
			my $out = HookTest::Proc::run(@cmd);
			if ($perf) {
				kill 'INT', $perf;
				waitpid $perf, 0;
			}
			sleep 0.3;   # the postmaster reaps the backends
			my $c1 = pg_cpu_s();
			my $rows = $pg->sql('select count(*) from hookinbox.inbox');
			die "$name batch $b: $rows rows, not " . $per * $C * $n . "\n$out" if $rows != $per * $C * $n;
			my $us = ($c1 - $c0) * 1e6 / $rows;
			push @{ $res{"$name/$b"} }, $us;
			printf "# round %d %-12s batch %3s: %6.1f µs/delivery (%d rows, %.1f s)\n", $round, $name, $b, $us,
				$rows, time - $t0;
		}
	}
}
# the machine is shared: the lowest and the median say more than the mean
print "\n| variant | batch | runs | pg CPU µs/delivery (each run) | min | median |\n|---|---|---|---|---|---|\n";
for my $v (@variants) {
	for my $n (@BATCH) {
		my $r = $res{"$v->[0]/$n"};
		my @s = sort { $a <=> $b } @$r;
		printf "| %s | %s | %d | %s | %.0f | %.0f |\n", $v->[0], $n, scalar @$r, join(' ', map { sprintf '%.0f', $_ } @$r),
			$s[0], @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
	}
}
