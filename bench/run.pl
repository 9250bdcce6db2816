#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# bench/run.pl - `make bench`: hookinbox against its own same-run ceilings.
#
#   HOOKINBOX_TOP=$PWD perl -I tests/lib bench/run.pl
#
# One private PostgreSQL cluster (default durability: fsync and
# synchronous_commit on), lighttpd with mod_fastcgi, and at 1, 16 and 64
# connections:
#   db    pgbench running the responder's own statement for one delivery
#         (accept_one()), unique event ids, the same body bytes
#   web   lighttpd + obj/bench/null.fcgi (reads the body, answers 200)
#   hookinbox: unique signed deliveries, 30 % redeliveries, 256 KB bodies,
#         and the group-commit mode ([intake] threads) when the responder has it
# then the same through PgBouncer (transaction mode) at 16 and 64
# connections, the worker half (20,000 events x 2 routes against a 20 ms downstream),
# the circuit breaker on and off against fail-first, flaky and dead downstreams, EXPLAIN of the claim with 100,000 due actions beside 1,000,000 done, and
# the verification cost per provider class (obj/bench/verifycost) beside
# the web ceiling.
#
# Every 2xx of every hookinbox run is checked against the inbox afterwards;
# a run that lost or duplicated an acknowledged event is printed as FAILED.
# Figures are measured, not judged: no thresholds, the targets are printed
# beside the ratios.  Exit status 0 unless the set-up itself cannot start.
#
# Environment: BENCH_SECONDS (default 5) per measured run, BENCH_LEVELS
# (default "1 16 64"), BENCH_NO_WORKER=1, BENCH_NO_EXPLAIN=1,
# BENCH_NO_256K=1, BENCH_NO_POOLER=1, BENCH_NO_BREAKER=1, BENCH_ONLY=breaker
# (that part alone), BENCH_BREAKER_EVENTS (2000), BENCH_BREAKER_WINDOW (60 s),
# HOOKINBOX_KEEP=1 keeps the temp dir.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../tests/lib";
use HookTest;
use HookTest::PgBouncer;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use Fcntl qw(O_WRONLY O_CREAT O_DSYNC);
use POSIX qw(strftime sysconf _SC_CLK_TCK WNOHANG);
use Time::HiRes qw(time sleep);
use List::Util qw(max sum0);

$| = 1;
my $top = HookTest::top();
my $T = $ENV{BENCH_SECONDS} // 5;
my @LEVELS = split ' ', ($ENV{BENCH_LEVELS} // '1 16 64');
my $TICK = sysconf(_SC_CLK_TCK) || 100;
my $BIG = 256 * 1024;
my $SMALL = 2048;
my $WARM = 2;   # seconds of pgbench warm-up left out of the figures
# BENCH_ONLY=breaker: only the breaker runs (no intake, pooler, worker, plan or verification cost)
my $only = $ENV{BENCH_ONLY} // '';
die "BENCH_ONLY=$only: the only part that runs alone is \"breaker\"\n" if $only ne '' && $only ne 'breaker';
my $started = time;
my @rows;       # the table
my @failures;   # loud at the end too
my %res;        # "$kind/$size/$c" => result hash, for ratios

sub say { print @_, "\n" }
sub note { print '# ', @_, "\n" }

sub loud {
	my ($msg) = @_;
	push @failures, $msg;
	print "\n!!!!!!!! FAILED RUN: $msg !!!!!!!!\n\n";
}

# ---------------------------------------------------------------- build

sub build {
	my %src = (loadgen => [qw(libcurl libcrypto)], downstream => []);
	make_path("$top/obj/bench");
	for my $p (sort keys %src) {
		my ($s, $b) = ("$top/bench/$p.c", "$top/obj/bench/$p");
		next if -x $b && -M $b <= -M $s;
		my $cflags = join ' ', map { `pkg-config --cflags $_` =~ s/\s+$//r } @{ $src{$p} };
		my $libs = join ' ', map { `pkg-config --libs $_` =~ s/\s+$//r } @{ $src{$p} };
		my $cmd = "cc -std=c17 -O2 -g -Wall -Wextra -D_GNU_SOURCE $cflags -o $b $s $libs";
		note("build: $cmd");
		system($cmd) == 0 or die "could not build $b\n";
	}
	for my $need ("$top/fcgi/hookinbox.fcgi", "$top/obj/bench/null.fcgi") {
		die "$need missing: run `make all build-tests build-bench` first (make bench does)\n" unless -x $need;
	}
}

# ---------------------------------------------------------------- /proc

sub proc_stat {
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return;
	my $l = <$fh>;
	close $fh;
	return unless $l && $l =~ /^\d+ \((.*)\) (.*)$/s;
	my ($comm, $rest) = ($1, $2);
	my @f = split ' ', $rest;   # $f[0] is field 3 (state)
	return { comm => $comm, ppid => $f[1], utime => $f[11], stime => $f[12], cutime => $f[13],
		cstime => $f[14] };
}

sub all_pids {
	opendir my $d, '/proc' or return ();
	return grep { /^\d+$/ } readdir $d;
}

sub children_of {
	my ($ppid) = @_;
	my @c;
	for my $p (all_pids()) {
		my $s = proc_stat($p) or next;
		push @c, $p if $s->{ppid} == $ppid;
	}
	return @c;
}

sub cpu_s {
	my ($pid, $with_dead_children) = @_;
	my $s = proc_stat($pid) or return 0;
	my $t = $s->{utime} + $s->{stime};
	$t += $s->{cutime} + $s->{cstime} if $with_dead_children;
	return $t / $TICK;
}

# CPU of the children this script has waited for (pgbench, loadgen, worker)
sub children_cpu_s {
	my (undef, undef, $cu, $cs) = times;
	return $cu + $cs;
}

# cores kept busy by anything outside the set-up (other jobs on the machine)
sub other_load {
	my ($machine, $ours, $wall) = @_;
	return undef unless $wall > 0;
	my $o = ($machine - $ours) / $wall;
	return $o < 0 ? 0 : $o;
}

sub machine_busy_s {
	open my $fh, '<', '/proc/stat' or return 0;
	my $l = <$fh>;
	my (undef, @v) = split ' ', $l;
	# user nice system idle iowait irq softirq steal
	return ($v[0] + $v[1] + $v[2] + $v[5] + $v[6]) / $TICK;
}

sub status_kb {
	my ($pid, $file, $key) = @_;
	open my $fh, '<', "/proc/$pid/$file" or return;
	while (<$fh>) { return $1 if /^\Q$key\E:\s+(\d+)\s+kB/ }
	return;
}

# ---------------------------------------------------------------- set-up

my $dir = tempdir('hookinbox-bench-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{HOOKINBOX_KEEP});
chmod 0755, $dir;
build();

my $pg = HookTest::Pg->new(dir => $dir)->init(extra => "max_connections = 300\n"
	. "max_wal_size = 4GB\nmin_wal_size = 2GB\ncheckpoint_timeout = 30min\n"
	. "log_autovacuum_min_duration = 0\nlog_checkpoints = on\n")->start;
$pg->create_db;
# A fresh cluster creates (and zero-fills) each WAL segment the first time
# it is needed, a cost a cluster in steady state does not pay: it recycles
# the segments of the last checkpoint.  So 1.5 GB of WAL is written once
# here, and min_wal_size keeps its segments for every run to reuse.
$pg->sql('create table bench_wal_warmup as select repeat(md5(g::text), 32) as pad '
	. 'from generate_series(1, 1300000) g');
$pg->sql('drop table bench_wal_warmup');
$pg->sql('checkpoint');
my $sock = $pg->{sock};
my $pgport = $pg->{port};
my $pgbin = $pg->{bin};

# What PostgreSQL did in the background while a run lasted (its log from
# the run's start), so that a latency outlier with an automatic vacuum or
# analyze beside it can be told from one without; and in the runs at half
# of peak (half_peak), the statements whose execution took PostgreSQL
# over 10 ms, so that a slow request can be told from a slow statement.
sub pg_log_size { return -s "$pg->{data}/server.log" // 0 }

sub pg_background {
	my ($from) = @_;
	open my $fh, '<', "$pg->{data}/server.log" or return '';
	seek $fh, $from, 0;
	my (%n, $slow, $longest);
	while (<$fh>) {
		if (/automatic (vacuum|analyze) of table "[^".]*\.([^".]*)\.([^"]*)"/) {
			$n{"auto$1 $3"}++;
		} elsif (/checkpoint starting: (.*)/) {
			$n{'checkpoint'}++ unless $1 =~ /immediate/;
		} elsif (/duration: ([\d.]+) ms/) {
			$slow++;
			$longest = $1 if $1 > ($longest // 0);
		}
	}
	my @out = map { $n{$_} > 1 ? "$_ x$n{$_}" : $_ } sort keys %n;
	push @out, sprintf('%d statements over 10 ms (longest %.0f ms)', $slow, $longest) if $slow;
	return join(', ', @out);
}

sub postmaster_pid {
	open my $fh, '<', "$pg->{data}/postmaster.pid" or return;
	my $p = <$fh>;
	chomp $p;
	return $p;
}

# the whole cluster: the postmaster, its live children, and its reaped ones
sub pg_cpu_s {
	my $pm = postmaster_pid() or return 0;
	return cpu_s($pm, 1) + sum0(map { cpu_s($_, 0) } children_of($pm));
}

my $secret = 'whsec_bench_' . join('', map { ('a' .. 'z', 0 .. 9)[rand 36] } 1 .. 24);
make_path("$dir/secrets");
for my $f ("$dir/secrets/bench") {
	open my $fh, '>', $f or die $!;
	print $fh "$secret\n";
	close $fh;
	chmod 0600, $f;
}

sub write_conf {
	my ($path, %o) = @_;
	my $c = "; written by bench/run.pl\n[database]\nconninfo = "
		. ($o{conninfo} // $pg->conninfo($o{role} // 'hookinbox_intake')) . "\n[intake]\nmax_body = 300000\n";
	$c .= "threads = $o{threads}\n" if $o{threads};
	$c .= "[log]\nformat = text\n";
	$c .= "[worker]\n" . join('', map { "$_ = $o{worker}{$_}\n" } sort keys %{ $o{worker} }) if $o{worker};
	$c .= "[endpoint bench]\nprovider = stripe\nsecret_file = $dir/secrets/bench\n"
		. "account = acct_bench\nenvironment = live\n";
	for my $r (@{ $o{routes} // [] }) {
		$c .= "[route $r->{name}]\n" . join('', map { "$_ = $r->{$_}\n" } grep { $_ ne 'name' } sort keys %$r);
	}
	open my $fh, '>', $path or die $!;
	print $fh $c;
	close $fh;
	return $path;
}

my $conf = write_conf("$dir/hookinbox.conf");

# the naive intake (bench/naive.c) and its table, as the cluster's superuser
sql('create schema bench');
sql('create table bench.naive_inbox (id bigint generated always as identity primary key, '
	. 'event_id text not null unique, event_type text, object_id text, created bigint, '
	. 'received_at timestamptz not null default now(), body bytea)');
my $naive_conf = "$dir/naive.conf";
{
	open my $fh, '>', $naive_conf or die $!;
	print $fh 'conninfo=' . $pg->conninfo('postgres') . "\nsecret_file=$dir/secrets/bench\n";
	close $fh;
}
my $n_httpd = 0;

sub httpd_start {
	my ($fcgi, $procs, $config) = @_;
	my $d = "$dir/httpd" . ++$n_httpd;
	make_path($d);
	chmod 0755, $d;
	my $h = HookTest::Lighttpd->new(dir => $d, fcgi => $fcgi, config => $config // $conf, procs => $procs);
	$h->start;
	# wait for every responder process to be there
	for (1 .. 100) {
		last if scalar(responders($h)) >= $procs;
		sleep 0.05;
	}
	return $h;
}

sub responders {
	my ($h) = @_;
	my $pid = $h->pid or return ();
	return children_of($pid);
}

sub sql { return $pg->sql(@_) }

sub fresh_inbox {
	sql('truncate hookinbox.inbox');
	sql('checkpoint');
}

# ---------------------------------------------------------------- machine

sub machine {
	my %m;
	for (split /\n/, `lscpu 2>/dev/null`) {
		$m{model} = $1 if /^Model name:\s+(.*)/;
		$m{cpus} = $1 if /^CPU\(s\):\s+(\d+)/;
	}
	open my $fh, '<', '/proc/meminfo';
	while (<$fh>) { $m{mem} = sprintf('%.1f GiB', $1 / 1048576) if /^MemTotal:\s+(\d+)/ }
	$m{kernel} = `uname -r` =~ s/\s+$//r;
	$m{pg} = `$pgbin/postgres --version` =~ s/\s+$//r;
	$m{lighttpd} = (`/usr/sbin/lighttpd -v` =~ /^(\S+)/)[0];
	$m{fs} = `df -T $dir | tail -1 | awk '{print \$2}'` =~ s/\s+$//r;
	return \%m;
}

# ---------------------------------------------------------------- runners

sub percentile {
	my ($sorted, $p) = @_;
	return 0 unless @$sorted;
	return $sorted->[int($p * $#$sorted + 0.5)];
}

my %bodies;

sub body_hex {
	my ($size) = @_;
	return $bodies{$size} //= unpack('H*', scalar `$top/obj/bench/loadgen --print-body 1 -s $size -p pgbench`);
}

# (1) the database ceiling
sub run_pgbench {
	my ($c, $size) = @_;
	my $script = "$dir/accept-$size.sql";
	unless (-e $script) {
		open my $fh, '>', $script or die $!;
		# the responder's statement for a single delivery
		print $fh "\\set n random(1, 999999999999)\n",
			"select (r).id, (r).duplicate, (r).held from (select hookinbox.accept_one('bench', 'stripe', ",
			"'acct_bench', 'live', 'evt_pgb_' || :client_id::text || '_' || :n::text, ",
			"'invoice.paid', 'in_' || :n::text, 1700000000::bigint, ",
			"'{\"Content-Type\":\"application/json\",\"User-Agent\":\"Stripe/1.0 (+https://stripe.com/docs/webhooks)\"}'::jsonb, ",
			"'\\x", body_hex($size), "'::bytea, false, null::bytea, null::text) as r offset 0) s;\n";
		close $fh;
	}
	fresh_inbox();
	my $logdir = "$dir/pgbench-$size-$c";
	make_path($logdir);
	my $j = $c < 2 ? 1 : 2;
	# Each pgbench client is a new backend that still has to start and
	# compile accept(): run $WARM s longer and count only what completes
	# after the first $WARM s, as the responder's backends are warm too.
	my @cmd = ("$pgbin/pgbench", '-n', '-M', 'prepared', '-f', $script, '-c', $c, '-j', $j,
		'-T', $T + $WARM, '-h', $sock, '-p', $pgport, '-U', 'hookinbox_intake', '--log',
		"--log-prefix=$logdir/tx", 'hookinbox');
	my $cmdline = join ' ', map { HookTest::shell_quote($_) } @cmd;
	my $c0 = children_cpu_s();
	my $pid = open(my $ph, '-|', "$cmdline 2>&1") or die "pgbench: $!";
	sleep $WARM;
	my ($pg0, $m0, $t0, $log0) = (pg_cpu_s(), machine_busy_s(), time, pg_log_size());
	my $out = do { local $/; <$ph> } // '';
	close $ph;
	my $rc = $?;
	sleep 0.3;   # let the postmaster reap the backends
	my ($pg1, $m1, $c1, $t1) = (pg_cpu_s(), machine_busy_s(), children_cpu_s(), time);
	if ($rc != 0) {
		loud("pgbench c=$c size=$size: exit $rc\n$out");
		return;
	}
	my (@lat, $all, $tmax);
	for my $f (glob("$logdir/tx*")) {
		open my $fh, '<', $f or next;
		while (<$fh>) {
			my @f = split;
			$all++;
			my $done = $f[4] + $f[5] / 1e6;
			next if $done < $t0;
			push @lat, $f[2] / 1000;
			$tmax = $done if !defined $tmax || $done > $tmax;
		}
	}
	@lat = sort { $a <=> $b } @lat;
	my $n = scalar @lat;
	my $span = defined $tmax && $tmax > $t0 ? $tmax - $t0 : $T;
	my ($failed) = $out =~ /number of failed transactions: (\d+)/;
	my $rows = sql("select count(*) from hookinbox.inbox");
	# pgbench's own CPU is known only for the whole run: prorate it
	my $client = ($c1 - $c0) * ($n / ($all || 1));
	return {
		kind => 'db', c => $c, size => $size, n => $n, rps => $n / $span,
		p50 => percentile(\@lat, 0.5), p99 => percentile(\@lat, 0.99),
		pg_cpu => ($pg1 - $pg0), client_cpu => $client,
		setup_cpu => ($pg1 - $pg0) + $client, other => other_load($m1 - $m0, $pg1 - $pg0 + $client, $t1 - $t0),
		check => ($failed // 0) ? "$failed failed" : "$rows rows", bg => pg_background($log0),
	};
}

sub parse_kv {
	my ($line) = @_;
	my %h = map { split /=/, $_, 2 } grep { /=/ } split ' ', $line // '';
	return \%h;
}

sub loadgen {
	my (%o) = @_;
	my @cmd = ("$top/obj/bench/loadgen", '-u', $o{url}, '-k', "$dir/secrets/bench", '-c', $o{c},
		'-d', $o{seconds} // $T, '-s', $o{size} // $SMALL, '-p', $o{prefix},
		($o{redeliver} ? ('-r', $o{redeliver}) : ()), ($o{rate} ? ('-R', $o{rate}) : ()),
		($o{out} ? ('-o', $o{out}) : ()));
	my $line = `@{[ join ' ', map { HookTest::shell_quote($_) } @cmd ]} 2>$dir/loadgen.err`;
	if ($? != 0) {
		loud("loadgen exit $?: " . `cat $dir/loadgen.err`);
		return;
	}
	my $err = `cat $dir/loadgen.err`;
	print map { "#   $_\n" } split /\n/, $err if $err =~ /\S/;
	return parse_kv($line);
}

# context switches of the processes' threads so far (voluntary, involuntary)
sub ctx_switches {
	my (@pids) = @_;
	my ($v, $i) = (0, 0);
	for my $p (@pids) {
		opendir my $d, "/proc/$p/task" or next;
		for my $t (grep { /^\d+$/ } readdir $d) {
			open my $fh, '<', "/proc/$p/task/$t/status" or next;
			while (<$fh>) {
				$v += $1 if /^voluntary_ctxt_switches:\s+(\d+)/;
				$i += $1 if /^nonvoluntary_ctxt_switches:\s+(\d+)/;
			}
		}
	}
	return ($v, $i);
}

# BENCH_PERF=1: `perf record -g` on the responders of the runs that ask for
# it (the naive intake and the unique 2 KB runs), and apart on the
# cluster's processes (the postmaster's children: backends, WAL writer,
# checkpointer); a summary by object and by symbol beside the table
# (perf-<tag>.txt in the temp dir; HOOKINBOX_KEEP=1 keeps the data)
my @profiles;

sub perf_start {
	my ($tag, @pids) = @_;
	return unless $ENV{BENCH_PERF} && @pids;
	my $data = "$dir/perf-$tag.data";
	my $pid = fork // die "fork: $!";
	if (!$pid) {
		open STDOUT, '>', '/dev/null';
		open STDERR, '>', "$dir/perf-$tag.err";
		exec 'perf', 'record', '-q', '-g', '-F', '1999', '-o', $data, '-p', join(',', @pids)
			or POSIX::_exit(127);
	}
	sleep 0.2;   # perf attaches
	return { pid => $pid, data => $data, tag => $tag };
}

sub perf_stop {
	my ($p, $label, $n) = @_;
	return unless $p;
	kill 'INT', $p->{pid};
	waitpid($p->{pid}, 0);
	my $out = "$dir/perf-$p->{tag}.txt";
	my $dso = `perf report -i $p->{data} --stdio --no-children --sort dso -g none 2>/dev/null`;
	my $sym = `perf report -i $p->{data} --stdio --no-children --sort dso,sym -g none --percent-limit 0.7 2>/dev/null`;
	my @keep = grep { /^\s+\d/ } split /\n/, $dso;
	my @ksym = grep { /^\s+\d/ } split /\n/, $sym;
	open my $fh, '>', $out or die $!;
	print $fh "$label ($n deliveries)\n\nby object:\n", join("\n", @keep), "\n\nby symbol (>= 0.7 %):\n",
		join("\n", @ksym), "\n";
	close $fh;
	push @profiles, [$label, $out];
	note("profile of $label: $out");
}

# Open-loop runs (p99 at half of peak): a sampler beside the load wakes
# every 5 ms and writes CLOCK_MONOTONIC and the machine's steal ticks
# (/proc/stat: time the hypervisor ran something else on our vCPUs).  A
# wake-up more than 10 ms late is a stall: no CPU for a runnable process.
# Beside it a probe writes 4 KB synchronously (O_DSYNC: a write and its
# flush, as a WAL flush) to a file on the cluster's file system every 10 ms
# and notes how long each took: a commit waits for the WAL's flush after
# the statement's duration is taken, so a disk that stops flushing for a
# while shows in no statement log.
# Afterwards the requests slower than 10 ms are lined up with the stalls,
# the steal and the slow flushes, so that a p99 outlier can be told apart:
# the machine or its disk stopped, or the request waited on its own path.
sub flush_probe_start {
	my ($tag) = @_;
	my $file = "$dir/flush-$tag.txt";
	my $pid = fork // die "fork: $!";
	if (!$pid) {
		open my $fh, '>', $file or POSIX::_exit(1);
		sysopen(my $p, "$dir/flush-probe", O_WRONLY | O_CREAT | O_DSYNC) or POSIX::_exit(1);
		my $block = 'x' x 4096;
		my $stop = 0;
		local $SIG{TERM} = sub { $stop = 1 };
		while (!$stop) {
			my $t = Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());
			sysseek($p, 0, 0);
			syswrite($p, $block) == 4096 or last;
			printf $fh "%d %d\n", $t * 1e6, (Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) - $t) * 1e6;
			Time::HiRes::sleep(0.01);
		}
		close $fh;
		POSIX::_exit(0);
	}
	return { pid => $pid, file => $file };
}

sub stall_start {
	my ($tag) = @_;
	my $file = "$dir/stall-$tag.txt";
	my $probe = flush_probe_start($tag);
	my $pid = fork // die "fork: $!";
	if (!$pid) {
		open my $fh, '>', $file or POSIX::_exit(1);
		my $stop = 0;
		local $SIG{TERM} = sub { $stop = 1 };
		while (!$stop) {
			open my $st, '<', '/proc/stat' or last;
			my (undef, @v) = split ' ', scalar <$st>;
			close $st;
			printf $fh "%d %d\n", Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) * 1e6, $v[7];
			Time::HiRes::sleep(0.005);
		}
		close $fh;
		POSIX::_exit(0);
	}
	return { pid => $pid, file => $file, probe => $probe };
}

sub stall_stop {
	my ($s) = @_;
	kill 'TERM', $_ for $s->{pid}, $s->{probe}{pid};
	waitpid($_, 0) for $s->{pid}, $s->{probe}{pid};
}

sub stall_report {
	my ($s, $r) = @_;
	stall_stop($s);
	my $t0 = $r->{lg}{t0_us} or return '';
	# the probe's flushes over 10 ms
	my (@flush, $flush_longest);
	if (open my $pf, '<', $s->{probe}{file}) {
		while (<$pf>) {
			my ($t, $d) = split;
			next unless $d > 10_000;
			push @flush, [$t, $t + $d];
			$flush_longest = $d if $d > ($flush_longest // 0);
		}
		close $pf;
	}
	my (@t, @steal);
	open my $fh, '<', $s->{file} or return '';
	while (<$fh>) {
		my ($t, $st) = split;
		push @t, $t;
		push @steal, $st;
	}
	close $fh;
	return '' if @t < 2;
	# the windows in which the machine gave us no CPU: a late wake-up, or steal
	my (@win, $longest);
	for my $i (1 .. $#t) {
		my $late = $t[$i] - $t[ $i - 1 ] - 5000;
		$longest = $late if $late > ($longest // 0);
		push @win, [$t[ $i - 1 ], $t[$i]] if $late > 10_000 || $steal[$i] > $steal[ $i - 1 ];
	}
	my ($slow, $met, $met_flush, %by_s) = (0, 0, 0);
	open my $ok, '<', "$dir/$r->{prefix}.ok" or return '';
	while (<$ok>) {
		my (undef, undef, undef, undef, $start, $lat) = split /\t/;
		next unless $lat > 10_000;
		$slow++;
		$by_s{ int($start / 1e6) }++;
		my ($from, $to) = ($t0 + $start, $t0 + $start + $lat);
		$met++ if grep { $_->[0] < $to && $_->[1] > $from } @win;
		$met_flush++ if grep { $_->[0] < $to && $_->[1] > $from } @flush;
	}
	close $ok;
	# when they were sent: a start-up transient, or a window in the run
	my $when = join(' ', map { "$_:$by_s{$_}" } sort { $a <=> $b } keys %by_s);
	return sprintf('%d requests over 10 ms%s, %d of them beside a stall, %d beside a slow disk flush; '
		. 'stalls: %d (latest wake-up %.1f ms late), steal %.0f ms; disk flushes over 10 ms: %d (longest %.0f ms)',
		$slow, $slow ? " (by second of the run $when)" : '', $met, $met_flush,
		scalar(grep { $_->[1] - $_->[0] > 15_000 } @win), ($longest // 0) / 1000,
		($steal[-1] - $steal[0]) * 1000 / $TICK, scalar(@flush), ($flush_longest // 0) / 1000);
}

# one measured loadgen run against a lighttpd; CPU from /proc around it
my $prefix_n = 0;

sub measure_http {
	my ($kind, $h, %o) = @_;
	my $prefix = sprintf('%s%d', $o{tag} // 'r', ++$prefix_n);
	my @resp = responders($h);
	my $hpid = $h->pid;
	my $prof = $o{profile} && perf_start($prefix, @resp);
	my $pm = postmaster_pid();
	my $pgprof = $o{profile} && $pm && perf_start("${prefix}pg", children_of($pm));
	my $stall = $o{rate} && stall_start($prefix);
	my ($cv0, $ci0) = ctx_switches(@resp);
	my $log0 = pg_log_size();
	my ($r0, $l0, $pg0, $m0, $t0) = (sum0(map { cpu_s($_) } @resp), cpu_s($hpid), pg_cpu_s(), machine_busy_s(), time);
	my $lg = loadgen(url => $h->url . '/bench', prefix => $prefix, out => "$dir/$prefix.ok",
		map { $_ => $o{$_} } grep { $_ ne 'profile' } keys %o);
	unless ($lg) {
		# (the samplers would outlive the run)
		kill 'INT', $_->{pid} for grep { $_ } $prof, $pgprof;
		stall_stop($stall) if $stall;
		return;
	}
	my ($r1, $l1, $pg1, $m1, $t1) = (sum0(map { cpu_s($_) } @resp), cpu_s($hpid), pg_cpu_s(), machine_busy_s(), time);
	my ($cv1, $ci1) = ctx_switches(@resp);
	perf_stop($prof, "$kind c=$o{c}, the responders", $lg->{completed}) if $prof;
	perf_stop($pgprof, "$kind c=$o{c}, PostgreSQL", $lg->{completed}) if $pgprof;
	my $ours = ($r1 - $r0) + ($l1 - $l0) + ($pg1 - $pg0) + $lg->{cpu_s};
	my ($hwm, $pss) = (0, 0);
	for my $p (@resp) {
		$hwm = max($hwm, status_kb($p, 'status', 'VmHWM') // 0);
		$pss = max($pss, status_kb($p, 'smaps_rollup', 'Pss') // 0);
	}
	return {
		kind => $kind, c => $o{c}, size => $o{size} // $SMALL, n => $lg->{completed}, rps => $lg->{rps},
		p50 => $lg->{p50_ms}, p99 => $lg->{p99_ms}, resp_cpu => $r1 - $r0, httpd_cpu => $l1 - $l0,
		pg_cpu => $pg1 - $pg0, client_cpu => $lg->{cpu_s}, setup_cpu => $ours,
		other => other_load($m1 - $m0, $ours, $t1 - $t0), hwm_kb => $hwm, pss_kb => $pss, lg => $lg,
		prefix => $prefix, procs => scalar(@resp), rate => $o{rate}, redeliver => $o{redeliver},
		cs_vol => $cv1 - $cv0, cs_invol => $ci1 - $ci0, bg => pg_background($log0),
		stall => $stall ? stall_report($stall, { lg => $lg, prefix => $prefix }) : '',
	};
}

# Every 2xx against the inbox: each acknowledged event id has exactly one
# row, with the id the reply carried; redeliveries were answered duplicate.
sub verify {
	my ($r) = @_;
	my $lg = $r->{lg};
	my (%ack, $mismatch, $lines);
	open my $fh, '<', "$dir/$r->{prefix}.ok" or do { $r->{check} = 'FAILED: no 2xx log'; return };
	while (<$fh>) {
		chomp;
		my ($n, $id, $dup, $redo) = split /\t/;
		$lines++;
		my $ev = sprintf('evt_%s_%010d', $r->{prefix}, $n);
		$mismatch++ if defined $ack{$ev} && $ack{$ev} != $id;
		$ack{$ev} = $id;
	}
	close $fh;
	my %db;
	for (split /\n/, sql("select event_id || '|' || id from hookinbox.inbox where event_id like 'evt\\_$r->{prefix}\\_%'")) {
		my ($ev, $id) = split /\|/;
		$db{$ev} = $id;
	}
	my $dups = sql("select count(*) - count(distinct (provider, account, environment, event_id)) "
		. "from hookinbox.inbox where event_id like 'evt\\_$r->{prefix}\\_%'");
	my @lost = grep { !exists $db{$_} } keys %ack;
	my @wrong = grep { exists $db{$_} && $db{$_} != $ack{$_} } keys %ack;
	my $extra = scalar(grep { !exists $ack{$_} } keys %db);   # committed, reply not 2xx (or not seen)
	my @bad;
	push @bad, scalar(@lost) . ' acknowledged events missing' if @lost;
	push @bad, scalar(@wrong) . ' acknowledged ids differ from the inbox' if @wrong;
	push @bad, "$mismatch redeliveries answered with another id" if $mismatch;
	push @bad, "$dups duplicate rows" if $dups;
	push @bad, "$lg->{dup_unexpected} replies with the wrong duplicate flag" if $lg->{dup_unexpected};
	push @bad, "$lg->{other} non-2xx replies" if $lg->{other};
	push @bad, "$lg->{errors} transport errors" if $lg->{errors};
	if (@bad) {
		$r->{check} = 'FAILED';
		loud("$r->{kind} c=$r->{c} size=$r->{size}: " . join('; ', @bad)
			. " (2xx: $lines, distinct events: " . scalar(keys %ack) . ", inbox rows: " . scalar(keys %db) . ')');
	} else {
		$r->{check} = sprintf('ok %d=%d', scalar(keys %ack), scalar(keys %db)) . ($extra ? " +$extra" : '');
	}
}

# ---------------------------------------------------------------- table

sub fmt_cpu {
	my ($s, $n) = @_;
	return '-' unless defined $s && $n;
	return sprintf('%.3f', $s / $n * 1000);
}

sub ratio {
	my ($a, $b) = @_;
	return '-' unless $a && $b;
	return sprintf('%.2fx', $a / $b);
}

sub add_row {
	my ($r, $label) = @_;
	return unless $r;
	my $key = "$r->{size}/$r->{c}";
	my $db = $res{"db/$key"};
	my $web = $res{"web/$key"};
	push @rows, [
		$label, $r->{c}, ($r->{size} >= 1024 ? ($r->{size} / 1024) . ' KB' : $r->{size}),
		sprintf('%.0f', $r->{rps}), sprintf('%.2f', $r->{p50}), sprintf('%.2f', $r->{p99}),
		fmt_cpu($r->{resp_cpu}, $r->{n}), fmt_cpu($r->{httpd_cpu}, $r->{n}), fmt_cpu($r->{pg_cpu}, $r->{n}),
		fmt_cpu($r->{client_cpu}, $r->{n}), fmt_cpu($r->{setup_cpu}, $r->{n}),
		defined $r->{other} ? sprintf('%.2f', $r->{other}) : '-',
		$r->{hwm_kb} ? sprintf('%.1f', $r->{hwm_kb} / 1024) : '-',
		$r->{pss_kb} ? sprintf('%.2f', $r->{pss_kb} / 1024) : '-',
		defined $r->{cs_vol} && $r->{n} ? sprintf('%.2f', ($r->{cs_vol} + $r->{cs_invol}) / $r->{n}) : '-',
		$r->{kind} eq 'db' ? '1.00x' : ratio($r->{rps}, $db && $db->{rps}),
		$r->{kind} eq 'web' ? '1.00x' : ratio($r->{rps}, $web && $web->{rps}),
		($r->{check} // '') . ($r->{bg} ? "; beside it: $r->{bg}" : '') . ($r->{stall} ? "; $r->{stall}" : ''),
	];
	printf "#   %-26s c=%-3d %8s req/s  p50 %7s ms  p99 %7s ms  other load %s  %s\n", $label, $r->{c},
		sprintf('%.0f', $r->{rps}), sprintf('%.2f', $r->{p50}), sprintf('%.2f', $r->{p99}),
		defined $r->{other} ? sprintf('%.2f', $r->{other}) : '-', $r->{check} // '';
}

sub placeholder_row {
	my ($label, $c, $why) = @_;
	push @rows, [$label, $c, ('') x 16, $why];
}

sub print_table {
	my @h = ('run', 'conns', 'body', 'req/s', 'p50 ms', 'p99 ms', 'resp CPU', 'lighttpd CPU', 'pg CPU',
		'client CPU', 'set-up CPU', 'other load', 'HWM MB', 'PSS MB', 'resp cs', 'x db', 'x web', 'check');
	say '| ' . join(' | ', @h) . ' |';
	say '|' . join('|', map { '---' } @h) . '|';
	say '| ' . join(' | ', @$_) . ' |' for @rows;
}

# ---------------------------------------------------------------- intake

my $m = machine();
note("hookinbox bench: $T s per run, connections @LEVELS, dir $dir");
note("machine: $m->{model}, $m->{cpus} CPUs, $m->{mem}; $m->{pg}; $m->{lighttpd}; data on $m->{fs}");
note('durability: ' . sql("select string_agg(name || '=' || setting, ', ' order by name) from pg_settings "
	. "where name in ('fsync', 'synchronous_commit', 'wal_sync_method', 'full_page_writes', 'commit_delay')"));

my $have_threads = do {
	open my $fh, "<", "$top/conf/conf.c" or return 0;
	local $/;
	(<$fh> // '') =~ /"threads"/;
};
my %peak;   # hookinbox unique 2 KB: best req/s and its level
my %gpeak;  # the same in group-commit mode

for my $c ($only ? () : @LEVELS) {
	note("---- $c connection(s)");
	my @sizes = ($SMALL, $ENV{BENCH_NO_256K} ? () : ($BIG));
	for my $size (@sizes) {
		my $r = eval { run_pgbench($c, $size) };
		loud("pgbench: $@") if $@;
		$res{"db/$size/$c"} = $r if $r;
		add_row($r, 'db ceiling (pgbench)');
	}
	{
		my $h = httpd_start("$top/obj/bench/null.fcgi", $c);
		loadgen(url => $h->url . '/bench', c => $c, seconds => 1, prefix => "nullw$c");
		for my $size (@sizes) {
			my $r = measure_http('web', $h, c => $c, size => $size, tag => 'null');
			$res{"web/$size/$c"} = $r if $r;
			$r->{check} = $r->{lg}{other} || $r->{lg}{errors} ? "$r->{lg}{other} non-2xx, $r->{lg}{errors} errors" : 'all 2xx' if $r;
			add_row($r, 'web ceiling (null.fcgi)');
		}
		$h->stop;
	}
	if (-x "$top/obj/bench/naive.fcgi") {
		# the naive single-INSERT intake: one process per connection, as hookinbox single-row
		my $h = httpd_start("$top/obj/bench/naive.fcgi", $c, $naive_conf);
		loadgen(url => $h->url . '/bench', c => $c, seconds => 1, prefix => "naivew$c");
		sql('truncate bench.naive_inbox');
		my $r = measure_http('naive', $h, c => $c, tag => 'naive', profile => 1);
		if ($r) {
			my $rows = sql('select count(*) from bench.naive_inbox');
			my $bad = $r->{lg}{other} || $r->{lg}{errors} || $rows != $r->{lg}{ok};
			$r->{check} = $bad ? "FAILED: $r->{lg}{other} non-2xx, $r->{lg}{errors} errors, $rows rows"
				: "ok $r->{lg}{ok}=$rows";
			$res{"naive/$SMALL/$c"} = $r;
		}
		add_row($r, 'naive intake (naive.fcgi)');
		$h->stop;
	}
	{
		my $h = httpd_start("$top/fcgi/hookinbox.fcgi", $c);
		# warm-up: every responder connects and prepares (verified too)
		my $w = measure_http('warm-up', $h, c => $c, seconds => 1, tag => 'w');
		verify($w) if $w;
		fresh_inbox();
		my $r = measure_http('hookinbox', $h, c => $c, tag => 'u', profile => 1);
		verify($r) if $r;
		add_row($r, 'hookinbox unique');
		%peak = (rps => $r->{rps}, c => $c) if $r && $r->{rps} > ($peak{rps} // 0);
		$res{"hookinbox/$SMALL/$c"} = $r if $r;
		fresh_inbox();
		$r = measure_http('hookinbox', $h, c => $c, redeliver => 0.3, tag => 'd');
		verify($r) if $r;
		add_row($r, 'hookinbox 30% redelivered');
		unless ($ENV{BENCH_NO_256K}) {
			fresh_inbox();
			$r = measure_http('hookinbox', $h, c => $c, size => $BIG, tag => 'b');
			verify($r) if $r;
			add_row($r, 'hookinbox 256 KB');
		}
		$h->stop;
	}
	if ($have_threads) {
		my $gconf = write_conf("$dir/group-$c.conf", threads => $c < 2 ? 2 : $c);
		my $h = httpd_start("$top/fcgi/hookinbox.fcgi", 1, $gconf);
		my $w = measure_http('warm-up', $h, c => $c, seconds => 1, tag => 'gw');
		verify($w) if $w;
		fresh_inbox();
		my $r = measure_http('group', $h, c => $c, tag => 'g', profile => 1);
		verify($r) if $r;
		add_row($r, 'group commit (1 proc, threads=' . ($c < 2 ? 2 : $c) . ')');
		$res{"group/$SMALL/$c"} = $r if $r;
		%gpeak = (rps => $r->{rps}, c => $c) if $r && $r->{rps} > ($gpeak{rps} // 0);
		unless ($ENV{BENCH_NO_256K}) {
			fresh_inbox();
			$r = measure_http('group', $h, c => $c, size => $BIG, tag => 'gb');
			verify($r) if $r;
			add_row($r, 'group commit 256 KB');
			$res{"group/$BIG/$c"} = $r if $r;
		}
		$h->stop;
	} else {
		placeholder_row('group commit', $c, 'PLACEHOLDER: [intake] threads not in common/conf.c yet');
	}
}

sub log_slow {
	my ($ms) = @_;
	sql("alter system set log_min_duration_statement = $ms");
	sql('alter system set log_parameter_max_length = 0');
	sql('select pg_reload_conf()');
	sleep 0.2;   # the backends read it before their next statement
}

# p99 at half of the peak, open loop (latency counted from the intended start)
sub half_peak {
	my ($peak, $kind, $label, $tag, $procs, $config) = @_;
	return unless $peak->{rps};
	my $rate = int($peak->{rps} / 2);
	my $c = $peak->{c};
	note("---- $label at half of its peak: $rate req/s at $c connection(s)");
	my $h = httpd_start("$top/fcgi/hookinbox.fcgi", $procs // $c, $config);
	my $w = measure_http('warm-up', $h, c => $c, seconds => 1, tag => "${tag}w");
	verify($w) if $w;
	fresh_inbox();
	# each statement over 10 ms in the log (its execution: the extended
	# protocol commits at Sync, after the duration is taken; no
	# parameters), in these runs only: the db ceiling's statements carry
	# their body as a literal
	log_slow(10);
	my $r = measure_http($kind, $h, c => $c, rate => $rate, tag => $tag);
	log_slow(-1);
	verify($r) if $r;
	add_row($r, "$label at half peak ($rate/s)");
	$peak->{half} = $r;
	$h->stop;
}
half_peak(\%peak, 'hookinbox', 'hookinbox', 'h');
half_peak(\%gpeak, 'group', 'group commit', 'gh', 1, $gpeak{c} && "$dir/group-$gpeak{c}.conf");

# ---------------------------------------------------------------- pooler

# PgBouncer in transaction mode between the responders and the same
# cluster, POOL server connections: the single-row and group-commit runs
# again at 16 and 64 connections, for ratios to the direct runs above.
# PgBouncer's own CPU is printed in the check column (it is not in set-up).
my $POOL = 16;
if (!$ENV{BENCH_NO_POOLER} && !$only && HookTest::PgBouncer::available()) {
	my $b = HookTest::PgBouncer->new(dir => $dir, pg => $pg, pool_size => $POOL)->start;
	my $ci = $b->conninfo('hookinbox_intake');
	for my $c (grep { $_ >= 16 } @LEVELS) {
		note("---- $c connections through PgBouncer (transaction mode, pool $POOL)");
		for my $mode ('single', 'group') {
			my ($procs, $conf_p) = $mode eq 'single'
				? ($c, write_conf("$dir/pooled-$c.conf", conninfo => $ci))
				: (1, write_conf("$dir/pooled-group-$c.conf", conninfo => $ci, threads => $c));
			my $h = httpd_start("$top/fcgi/hookinbox.fcgi", $procs, $conf_p);
			my $w = measure_http('warm-up', $h, c => $c, seconds => 1, tag => "pw$mode");
			verify($w) if $w;
			fresh_inbox();
			my $b0 = cpu_s($b->pid);
			my $r = measure_http($mode eq 'single' ? 'hookinbox' : 'group', $h, c => $c, tag => "p$mode");
			my $bcpu = cpu_s($b->pid) - $b0;
			if ($r) {
				verify($r);
				$r->{check} .= sprintf('; pgbouncer CPU %s', fmt_cpu($bcpu, $r->{n}));
				$res{"pooled-$mode/$SMALL/$c"} = $r;
			}
			add_row($r, $mode eq 'single' ? "via PgBouncer (pool $POOL)" : "group commit via PgBouncer");
			$h->stop;
		}
	}
	$b->stop;
}

# ---------------------------------------------------------------- worker

my ($worker_line, $explain);

# %o: label (for the report), route (keys added to both routes)
sub run_worker {
	my (%o) = @_;
	my $bin = "$top/worker/hookinbox-worker";
	return 'skipped: worker not built' unless -x $bin;
	my $help = `$bin --help 2>&1`;
	return 'skipped: worker not built (no --once in --help)' unless $help =~ /--once/ && $help =~ /--concurrency/;
	my $label = $o{label} // '';
	note("---- worker$label: 20,000 events x 2 routes, downstream 20 ms, --once --concurrency 64");
	sql('truncate hookinbox.inbox');
	sql('truncate hookinbox.action') if sql("select to_regclass('hookinbox.action') is not null") eq 't';
	my $hex = body_hex($SMALL);
	sql("select count(*) from (select hookinbox.accept('bench', 'stripe', 'acct_bench', 'live', "
		. "'evt_wk_' || g, 'invoice.paid', 'in_wk_' || g, 1700000000, "
		. "'{\"Content-Type\":\"application/json\"}'::jsonb, '\\x$hex'::bytea, false) "
		. "from generate_series(1, 20000) g) s");
	sql('vacuum analyze hookinbox.inbox');
	sql('checkpoint');
	# the downstream: fixed 20 ms, every Idempotency-Key logged
	my $keys = "$dir/downstream.keys";
	my $dpid = open(my $dfh, '-|', "$top/obj/bench/downstream", '--latency', '20', '--keys', $keys)
		or return "FAILED: downstream: $!";
	my $portline = <$dfh>;
	my ($port) = ($portline // '') =~ /port=(\d+)/ or return 'FAILED: downstream gave no port';
	my $wconf = write_conf("$dir/worker.conf", role => 'hookinbox_worker',
		routes => [map { { name => "r$_", endpoint => 'bench', url => "http://127.0.0.1:$port/r$_",
			%{ $o{route} // {} } } } 1 .. 2]);
	my ($pg0, $m0, $c0) = (pg_cpu_s(), machine_busy_s(), children_cpu_s());
	my $t0 = time;
	my $wpid = fork // die;
	if (!$wpid) {
		open STDOUT, '>', "$dir/worker.log";
		open STDERR, '>&', \*STDOUT;
		exec { $bin } $bin, "-c", $wconf, "--once", "--concurrency", "64" or POSIX::_exit(127);
	}
	my $wrc;
	while (1) {
		my $k = waitpid($wpid, WNOHANG);
		if ($k == $wpid) { $wrc = $? >> 8; last }
		if (time - $t0 > 180) { kill 'TERM', $wpid; waitpid($wpid, 0); $wrc = 'timeout'; last }
		sleep 0.05;
	}
	my $wall = time - $t0;
	my ($pg1, $m1, $c1) = (pg_cpu_s(), machine_busy_s(), children_cpu_s());
	my $dcpu = cpu_s($dpid);
	kill 'TERM', $dpid;
	my $rest = do { local $/; <$dfh> } // '';
	close $dfh;
	my ($calls) = $rest =~ /requests=(\d+)/;
	$calls //= 0;
	my %k;
	if (open my $kf, '<', $keys) { while (<$kf>) { chomp; $k{$_}++ } }
	my $distinct = scalar keys %k;
	my $states = sql("select string_agg(state || '=' || n, ' ' order by state) from "
		. "(select state, count(*) n from hookinbox.action group by state) s");
	my $done = sql("select count(*) from hookinbox.action where state = 'done'");
	my $rate = $calls / $wall;
	my @bad;
	push @bad, "worker exit $wrc" if $wrc ne '0';
	push @bad, "$done of 40000 actions done" if $done != 40000;
	push @bad, "$distinct distinct keys of 40000" if $distinct != 40000;
	loud('worker: ' . join('; ', @bad) . ' (log: ' . `tail -5 $dir/worker.log` . ')') if @bad;
	$res{"worker$label"} = { rate => $rate };
	return sprintf("| worker --once --concurrency 64$label" . ' | %d calls in %.2f s | %.0f calls/s | %.2fx of ideal 3,200/s '
		. '(target >= 0.9x) | CPU s/1k calls: worker %.3f, pg %.3f, downstream %.3f; other load %.2f cores '
		. '| actions: %s; distinct keys %d | %s |',
		$calls, $wall, $rate, $rate / 3200, ($c1 - $c0) / ($calls || 1) * 1000,
		($pg1 - $pg0) / ($calls || 1) * 1000, $dcpu / ($calls || 1) * 1000,
		other_load($m1 - $m0, ($c1 - $c0) + ($pg1 - $pg0) + $dcpu, $wall) // 0,
		$states, $distinct, @bad ? 'FAILED' : 'ok');
}

sub run_explain {
	return 'skipped: no hookinbox.action table' if sql("select to_regclass('hookinbox.action') is null") eq 't';
	note('---- EXPLAIN: claim with 100,000 due actions beside 1,000,000 done');
	sql('truncate hookinbox.action');
	sql(q{insert into hookinbox.action (inbox_id, route, idem_key, state, max_attempts, due_at, done_at,
		created_at, updated_at)
		select g, 'r' || (g % 2 + 1), 'hookinbox:bench:' || g,
		       case when g <= 1000000 then 'done' else 'pending' end, 12,
		       now() - interval '1 hour' * random(),
		       case when g <= 1000000 then now() - interval '1 hour' end, now(), now()
		  from generate_series(1, 1100000) g});
	sql('vacuum analyze hookinbox.action');
	my $plain = sql(q{explain (costs off) select a.id from hookinbox.action a
		where a.state = 'pending' and a.due_at <= now() order by a.due_at limit 64
		for no key update skip locked});
	# the function's own statements, as it runs them (auto_explain, nested)
	# claim_actions is overloaded (routes, route limits): the three-argument one, if still there
	my $sig = sql("select coalesce(pg_get_function_identity_arguments("
		. "to_regprocedure('hookinbox.claim_actions(integer, integer, integer)')), '')");
	my $nested = '';
	if ($sig =~ /^p_limit integer, p_lease_s integer, p_retry_window_s integer$/) {
		my $f = "$dir/explain.sql";
		open my $fh, '>', $f or die $!;
		print $fh "load 'auto_explain';\nset auto_explain.log_min_duration = 0;\n",
			"set auto_explain.log_nested_statements = on;\nset auto_explain.log_analyze = on;\n",
			"set auto_explain.log_timing = off;\nset client_min_messages = log;\n",
			"begin;\nselect count(*) from hookinbox.claim_actions(64, 60, 86400);\nrollback;\n";
		close $fh;
		my ($rc, $out) = $pg->psql_file($f);
		# the plan of the loop's claim query
		if ($out =~ /(Query Text: select a\.id, a\.route.*?)(?=\n[^\n]*LOG:  duration|\z)/s) {
			$nested = $1;
		} else {
			$nested = "(auto_explain output not recognised; exit $rc)\n$out";
		}
	} else {
		$nested = "(claim_actions($sig): not called, signature changed)";
	}
	my $ok = $plain =~ /Index Scan using action_due/ ? 'index scan on action_due' : 'NOT an index scan on action_due';
	loud("EXPLAIN: the claim is $ok") unless $plain =~ /Index Scan using action_due/;
	return "claim with 100,000 due beside 1,000,000 done: $ok\n\n```\n$plain\n```\n\n"
		. "inside hookinbox.claim_actions (auto_explain, analyze):\n\n```\n$nested\n```\n";
}

unless ($ENV{BENCH_NO_WORKER} || $only) {
	$worker_line = eval { run_worker() } // "FAILED: $@";
	loud("worker: $worker_line") if $worker_line =~ /^FAILED/;
	# the cost of the route limits when none is hit: a run with every
	# limit at work but never reached (a rate no run reaches, the breaker
	# on, a cap above the worker's) against one with the limits off
	unless ($ENV{BENCH_NO_ROUTE_LIMITS}) {
		my %on = (concurrency => 64, breaker_failures => 5, rate => 100000);
		my %off = (concurrency => 64, breaker_failures => 0);
		my $l_on = eval { run_worker(label => ' (route limits on, none hit)', route => \%on) } // "FAILED: $@";
		my $l_off = eval { run_worker(label => ' (route limits off)', route => \%off) } // "FAILED: $@";
		$worker_line .= "\n$l_on\n$l_off";
		my ($a, $b) = map { $res{"worker (route limits $_)"} } 'on, none hit', 'off';
		$worker_line .= sprintf("\n\nroute limits on (none hit) / off: %.3f of the calls/s (target >= 0.97)",
			$a->{rate} / $b->{rate}) if $a && $b && $b->{rate};
	}
}
unless ($ENV{BENCH_NO_EXPLAIN} || $only) {
	$explain = eval { run_explain() } // "FAILED: $@";
}

# ---------------------------------------------------------------- breaker

# The circuit breaker against downstreams that misbehave in the ordinary
# way, each run twice, with the default breaker and with breaker_failures =
# 0, the same events and the same failing calls (bench/downstream.c --mode):
# fail-first (500 to a key's first call, 200 to its retry) and flaky (about
# half of the first three calls of a key fail, the fourth answers): time to
# deliver every event, as throughput on / off; dead (500 to everything):
# calls per minute while the breaker is open, against the same minute with
# it off.  The worker runs --loop with the default backoff (5 s, doubling):
# the flaky runs end within 5 + 10 + 20 s of backoff plus jitter.
my $BRK_N = $ENV{BENCH_BREAKER_EVENTS} // 2000;
my $BRK_WINDOW = $ENV{BENCH_BREAKER_WINDOW} // 60;   # seconds of a dead downstream counted

# the downstream's counts so far (SIGUSR1)
sub ds_counts {
	my ($ds) = @_;
	kill 'USR1', $ds->{pid};
	my $fh = $ds->{fh};
	my $line = <$fh>;
	return parse_kv($line);
}

sub ds_stop {
	my ($ds) = @_;
	kill 'TERM', $ds->{pid};
	my $fh = $ds->{fh};
	my $last;
	while (my $l = <$fh>) { $last = $l }
	close $fh;
	return parse_kv($last);
}

# one run: $mode downstream, the route's breaker as %$route says; returns a
# hash of figures, or a string saying what failed
sub breaker_run {
	my (%o) = @_;
	my $bin = "$top/worker/hookinbox-worker";
	sql('truncate hookinbox.inbox');
	sql('truncate hookinbox.action');
	sql('delete from hookinbox.route_state');
	my $hex = body_hex($SMALL);
	sql("select count(*) from (select hookinbox.accept('bench', 'stripe', 'acct_bench', 'live', "
		. "'evt_brk_' || g, 'invoice.paid', 'in_brk_' || g, 1700000000, "
		. "'{\"Content-Type\":\"application/json\"}'::jsonb, '\\x$hex'::bytea, false) "
		. "from generate_series(1, $BRK_N) g) s");
	sql('vacuum analyze hookinbox.inbox');
	my $dpid = open(my $dfh, '-|', "$top/obj/bench/downstream", '--latency', '20', '--mode', $o{mode})
		or return "downstream: $!";
	my ($port) = (<$dfh> // '') =~ /port=(\d+)/ or return 'downstream gave no port';
	my $ds = { pid => $dpid, fh => $dfh };
	my $wconf = write_conf("$dir/breaker.conf", role => 'hookinbox_worker',
		routes => [{ name => 'brk', endpoint => 'bench', url => "http://127.0.0.1:$port/brk", %{ $o{route} } }]);
	my $t0 = sql('select extract(epoch from clock_timestamp())');
	my ($pg0, $m0, $c0, $w0) = (pg_cpu_s(), machine_busy_s(), children_cpu_s(), time);
	my $wpid = fork // die;
	if (!$wpid) {
		open STDOUT, '>', "$dir/breaker-$o{tag}.log";
		open STDERR, '>&', \*STDOUT;
		exec { $bin } $bin, '-c', $wconf, '--loop', '--concurrency', '64' or POSIX::_exit(127);
	}
	my %r = (tag => $o{tag});
	my $limit = $o{limit} // 300;
	if ($o{mode} eq 'dead') {
		# until the breaker opens (or, breaker off, as long as the run with it took)
		my $open_after = $o{open_after};
		while (!defined $open_after && time - $w0 < 120) {
			$open_after = time - $w0
				if sql("select count(*) from hookinbox.route_state where route = 'brk' and breaker <> 'closed'");
			sleep 0.2;
		}
		if (defined $open_after) {
			sleep 0.2 while time - $w0 < $open_after;
			my $a = ds_counts($ds);
			sleep $BRK_WINDOW;
			my $b = ds_counts($ds);
			%r = (%r, open_after => $open_after, before => $a->{requests},
				per_min => ($b->{requests} - $a->{requests}) * 60 / $BRK_WINDOW);
		}
	} else {
		my $q = "select count(*) from hookinbox.action where state = 'done'";
		sleep 0.2 while time - $w0 < $limit && sql($q) < $BRK_N;
	}
	kill 'TERM', $wpid;
	waitpid($wpid, 0);
	my $wall = time - $w0;
	$r{wall} = $wall;
	my ($pg1, $m1, $c1) = (pg_cpu_s(), machine_busy_s(), children_cpu_s());
	my $dcpu = cpu_s($dpid);
	my $end = ds_stop($ds);
	$r{done} = sql("select count(*) from hookinbox.action where state = 'done'");
	$r{took} = sql("select coalesce(extract(epoch from max(done_at)) - $t0, 0) from hookinbox.action "
		. "where state = 'done'");
	$r{calls} = $end->{requests} // 0;
	$r{failed} = $end->{failed} // 0;
	$r{twice} = $end->{twice} // 0;
	$r{opened} = sql("select count(*) from hookinbox.route_state where route = 'brk' and breaker <> 'closed'");
	$r{states} = sql("select string_agg(state || '=' || n, ' ' order by state) from "
		. "(select state, count(*) n from hookinbox.action group by state) s");
	$r{other} = other_load($m1 - $m0, ($c1 - $c0) + ($pg1 - $pg0) + $dcpu, $wall) // 0;
	return \%r;
}

sub run_breaker {
	my $bin = "$top/worker/hookinbox-worker";
	return 'skipped: worker not built' unless -x $bin;
	my %on = (breaker_failures => 5, breaker_cooldown => 30);   # the defaults, spelt out
	my %off = (breaker_failures => 0);
	my @out;
	push @out, "$BRK_N events, one route, downstream 20 ms, `--loop --concurrency 64`, the default "
		. 'backoff (`backoff_base = 5`, doubling, +-20 % jitter) and breaker (`breaker_failures = 5`, '
		. '`breaker_cooldown = 30`) against `breaker_failures = 0`', '';
	push @out, '| downstream | breaker | delivered | time to deliver all | events/s | calls (500s) | '
		. 'second effects | breaker opened | other load | check |';
	push @out, '|---|---|---|---|---|---|---|---|---|---|';
	my @verdicts;
	for my $mode (['fail-first', 'fail-first (500, then 200)'], ['flaky', 'flaky (~50 % of the first 3 calls)']) {
		my %got;
		for my $side (['on', \%on], ['off', \%off]) {
			note("---- breaker $side->[0], $mode->[0] downstream: $BRK_N events");
			my $r = breaker_run(mode => $mode->[0], tag => "$mode->[0]-$side->[0]", route => $side->[1]);
			unless (ref $r) {
				loud("breaker $side->[0], $mode->[0]: $r");
				next;
			}
			my @bad;
			push @bad, "$r->{done} of $BRK_N done" if $r->{done} != $BRK_N;
			push @bad, "$r->{twice} second effects" if $r->{twice};
			loud("breaker $side->[0], $mode->[0]: a key answered 200 twice") if $r->{twice};
			# a run that did not finish: what it delivered over the time it had
			my $span = $r->{done} == $BRK_N ? $r->{took} : $r->{wall};
			$r->{rate} = $span > 0 ? $r->{done} / $span : 0;
			$got{$side->[0]} = $r;
			push @out, sprintf('| %s | %s | %d of %d | %s | %.0f | %d (%d) | %d | %s | %.2f | %s |', $mode->[1],
				$side->[0] eq 'on' ? 'default' : 'off', $r->{done}, $BRK_N,
				$r->{done} == $BRK_N ? sprintf('%.1f s', $r->{took}) : sprintf('not within %.0f s (STALL)', $r->{wall}),
				$r->{rate}, $r->{calls}, $r->{failed}, $r->{twice}, $r->{opened} ? 'yes' : 'no', $r->{other},
				@bad ? 'FAILED: ' . join('; ', @bad) : 'ok');
			$res{"breaker/$mode->[0]/$side->[0]"} = { other => $r->{other} };
		}
		my ($a, $b) = @got{qw(on off)};
		next unless $a && $b && $b->{rate};
		my $x = $a->{rate} / $b->{rate};
		push @verdicts, sprintf('- %s: breaker on / off %.2fx of the events/s (goal >= 0.8x%s): %s', $mode->[0], $x,
			$mode->[0] eq 'fail-first' ? ', no stall' : '', $x >= 0.8 ? 'PASS' : 'FALL SHORT');
	}
	note("---- breaker on, dead downstream: calls per minute while open ($BRK_WINDOW s)");
	my $d_on = breaker_run(mode => 'dead', tag => 'dead-on', route => \%on);
	my $d_off = ref $d_on && defined $d_on->{open_after}
		? breaker_run(mode => 'dead', tag => 'dead-off', route => \%off, open_after => $d_on->{open_after})
		: undef;
	for my $r ([$d_on, 'default'], [$d_off, 'off']) {
		next unless $r->[0];
		unless (ref $r->[0] && defined $r->[0]{per_min}) {
			loud("breaker $r->[1], dead: " . (ref $r->[0] ? 'the breaker never opened' : $r->[0]));
			next;
		}
		push @out, sprintf('| dead (500 to all) | %s | %s | - | - | %d (%d) | %d | %s | %.2f | %.1f calls/min from %.0f s '
			. 'to %.0f s after the start (%d calls before) |', $r->[1], $r->[0]{states}, $r->[0]{calls}, $r->[0]{failed},
			$r->[0]{twice}, $r->[0]{opened} ? 'yes' : 'no', $r->[0]{other}, $r->[0]{per_min}, $r->[0]{open_after},
			$r->[0]{open_after} + $BRK_WINDOW, $r->[0]{before});
		$res{"breaker/dead/$r->[1]"} = { other => $r->[0]{other} };
	}
	push @verdicts, sprintf('- dead: %.1f calls per minute while the breaker is open (a probe after each 30 s '
		. 'cool-down: 1 or 2 a minute), %.0f with the breaker off', $d_on->{per_min},
		ref $d_off ? $d_off->{per_min} // 0 : 0)
		if ref $d_on && defined $d_on->{per_min};
	return join("\n", @out, '', @verdicts);
}

my $breaker_line;
if (!$ENV{BENCH_NO_BREAKER} && (!$only || $only eq 'breaker')) {
	$breaker_line = eval { run_breaker() } // "FAILED: $@";
	loud("breaker: $breaker_line") if $breaker_line =~ /^FAILED/;
}

# ---------------------------------------------------------------- verification per provider class

# obj/bench/verifycost: every provider of the table, grouped by class (those
# added later too), microseconds of one thread per 2 KB delivery
my @vcost;
unless ($only) {
	note('verification cost per provider class (obj/bench/verifycost)');
	my $out = `$top/obj/bench/verifycost $SMALL 20000 2>&1`;
	loud("verifycost: exit $?: $out") if $?;
	for (split /\n/, $out) {
		my ($class, $us, $split, $size, $providers) = split /\t/;
		push @vcost, { class => $class, us => $us, split => $split, size => $size, providers => $providers }
			if defined $providers;
	}
}

# ---------------------------------------------------------------- report

say '';
say "## hookinbox bench, " . strftime('%Y-%m-%d %H:%M %Z', localtime($started));
say '';
say "machine: $m->{model}, $m->{cpus} CPUs, $m->{mem} RAM, kernel $m->{kernel}, data on $m->{fs}; "
	. "$m->{pg}; $m->{lighttpd}; $T s per run";
say '';
print_table() if @rows;
say '' if @rows;
unless ($only) {
	say 'CPU columns: CPU seconds per 1,000 completed requests (utime+stime from /proc): resp = the responder '
		. 'processes, lighttpd = the web server, pg = the whole PostgreSQL cluster (backends, walwriter, '
		. 'checkpointer; reaped backends through the postmaster\'s cutime), client = pgbench or the load '
		. 'generator, set-up = the sum of these. other load = cores kept busy by anything else on the machine '
		. 'during the run (/proc/stat minus the set-up): above ~0.1 the figures of that row are disturbed. '
		. 'HWM = the largest VmHWM of a responder process, PSS = the largest Pss (smaps_rollup). '
		. 'resp cs = context switches of the responders\' threads per request (voluntary + involuntary, '
		. '/proc/PID/task/*/status). '
		. 'x db / x web = req/s over the same-run ceiling at the same connections and body size.';
	say '';
	say '### goals: closer to the limit (printed, not enforced)';
	say '';
	{
		my $verdict = sub { return $_[0] ? 'PASS' : 'FALL SHORT' };
		my $us = sub { my ($s, $n) = @_; return $n ? $s / $n * 1e6 : undef };
		for my $size ($SMALL, $BIG) {
			for my $c (grep { $_ >= 16 } @LEVELS) {
				my ($g, $w) = ($res{"group/$size/$c"}, $res{"web/$size/$c"});
				next unless $g && $w && $w->{rps};
				my $x = $g->{rps} / $w->{rps};
				say sprintf('- group commit / web ceiling, %s, %d connections: %.2fx (goal >= 0.5x): %s',
					$size == $BIG ? '256 KB' : '2 KB', $c, $x, $verdict->($x >= 0.5));
			}
		}
		for my $c (@LEVELS) {
			my ($h, $nv) = ($res{"hookinbox/$SMALL/$c"}, $res{"naive/$SMALL/$c"});
			next unless $h && $nv && $nv->{rps};
			my $x = $h->{rps} / $nv->{rps};
			say sprintf('- one-commit mode / naive single-INSERT intake, %d connections: %.2fx (goal >= 1.0x): %s',
				$c, $x, $verdict->($x >= 1.0));
		}
		for my $p (['one-commit mode', \%peak], ['group commit', \%gpeak]) {
			my $hp = $p->[1]{half} or next;
			say sprintf('- p99 at half of peak, %s (%d req/s, %d connections): %.2f ms (goal < 10 ms): %s%s%s',
				$p->[0], $hp->{rate}, $hp->{c}, $hp->{p99}, $verdict->($hp->{p99} < 10),
				$hp->{bg} ? " (PostgreSQL beside it: $hp->{bg})" : '', $hp->{stall} ? "; $hp->{stall}" : '');
		}
		for my $c (grep { $_ >= 16 } @LEVELS) {
			my $g = $res{"group/$SMALL/$c"} or next;
			my ($r, $d) = ($us->($g->{resp_cpu}, $g->{n}), $us->($g->{pg_cpu}, $g->{n}));
			say sprintf('- CPU per delivery in group commit, %d connections: responder %.0f us (goal <= 60): %s; '
				. 'PostgreSQL %.0f us (goal <= 50): %s; context switches of the responder %.2f per request',
				$c, $r, $verdict->($r <= 60), $d, $verdict->($d <= 50),
				($g->{cs_vol} + $g->{cs_invol}) / ($g->{n} || 1));
		}
		say '- no allocation per delivery in steady state: counted by tests/t/10-intake.t and 11 '
			. '(LD_PRELOAD tests/lib/malloccount.c), not here';
	}
	say '';
	say '### targets (printed, not enforced)';
	say '';
	for my $c (grep { $_ >= 16 } @LEVELS) {
		my ($h, $db) = ($res{"hookinbox/$SMALL/$c"}, $res{"db/$SMALL/$c"});
		say "- intake in single-row mode (threads = 1) / db ceiling at $c connections: " . ratio($h && $h->{rps}, $db && $db->{rps}) . ' (target >= 0.8x)';
	}
	for my $c (grep { $_ >= 16 } @LEVELS) {
		my ($g, $db) = ($res{"group/$SMALL/$c"}, $res{"db/$SMALL/$c"});
		say "- intake in group-commit mode (the sample configuration's) / db ceiling at $c connections: "
			. ratio($g && $g->{rps}, $db && $db->{rps}) . ' (target >= 0.8x)' if $g;
	}
	if (my $hp = $peak{half}) {
		say sprintf('- p99 at half of peak (%d req/s at %d connections): %.2f ms (target < 10 ms)', $hp->{rate}, $hp->{c}, $hp->{p99});
	}
	if (my $hp = $gpeak{half}) {
		say sprintf('- p99 at half of peak in group-commit mode (%d req/s at %d connections): %.2f ms (target < 10 ms)',
			$hp->{rate}, $hp->{c}, $hp->{p99});
	}
	for my $c (@LEVELS) {
		my ($g, $db) = ($res{"group/$SMALL/$c"}, $res{"db/$SMALL/$c"});
		say "- group commit / single-row db ceiling at $c connections: "
			. ($g ? ratio($g->{rps}, $db && $db->{rps}) : 'not measured (placeholder)') . ' (target >= 1.5x)'
			. ($c == 1 ? ': one delivery at a time has nothing to share a commit with' : '');
	}
	for my $c (grep { $_ >= 16 } @LEVELS) {
		my ($p, $h, $pg_, $g) = map { $res{"$_/$SMALL/$c"} } qw(pooled-single hookinbox pooled-group group);
		next unless $p || $pg_;
		say "- through PgBouncer (transaction mode, pool $POOL) / direct at $c connections: single-row "
			. ratio($p && $p->{rps}, $h && $h->{rps}) . ', group commit ' . ratio($pg_ && $pg_->{rps}, $g && $g->{rps});
	}
	{
		# PSS shares the library pages among the responder processes: read it
		# where there are the most of them (single-row mode, most connections)
		my ($hwm, $pss, $procs) = (0, 0, 0);
		for my $r (values %res) {
			next unless ref $r eq 'HASH' && ($r->{kind} // '') eq 'hookinbox';
			$hwm = max($hwm, $r->{hwm_kb} // 0);
			($pss, $procs) = ($r->{pss_kb} // 0, $r->{procs}) if $r->{procs} > $procs;
		}
		say sprintf('- responder peak RSS %.1f MB over the 2 KB runs (target < 8 MB); PSS %.2f MB per process '
			. 'with %d processes (target < 1.5 MB)', $hwm / 1024, $pss / 1024, $procs) if $hwm;
	}
	say '- worker: ' . (defined $res{worker} ? sprintf('%.2fx of ideal', $res{worker}{rate} / 3200) : 'not measured')
		. ' (target >= 0.9x)';
	say '';
}
if (@vcost) {
	# the web ceiling at the most connections measured, 2 KB bodies
	my ($wc) = grep { $res{"web/$SMALL/$_"} } reverse @LEVELS;
	my $web = $wc ? $res{"web/$SMALL/$wc"}{rps} : undef;
	say '### verification cost per provider class';
	say '';
	say 'One thread, about 2 KB a delivery (obj/bench/verifycost: each provider signs as it does, '
		. 'verify_request checks; for batches also the split into events). per core = deliveries a '
		. 'second one core could verify; x web = that over the web ceiling'
		. ($web ? sprintf(' (null.fcgi, %.0f req/s at %d connections)', $web, $wc) : ' (not measured)') . '.';
	say '';
	say '| class | verify µs | split µs | body | per core | x web | providers |';
	say '|---|---|---|---|---|---|---|';
	for my $v (@vcost) {
		my $total = ($v->{us} =~ /^[\d.]+$/ ? $v->{us} : 0) + ($v->{split} =~ /^[\d.]+$/ ? $v->{split} : 0);
		my $per_core = $total > 0 ? 1e6 / $total : 0;
		say '| ' . join(' | ', $v->{class}, $v->{us}, $v->{split}, $v->{size},
			$per_core ? sprintf('%.0f', $per_core) : '-', $per_core ? ratio($per_core, $web) : '-',
			$v->{providers}) . ' |';
	}
	say '';
}
if (defined $breaker_line) {
	say '### circuit breaker: flaky, fail-first and dead downstreams';
	say '';
	say $breaker_line;
	say '';
}
if (defined $worker_line) {
	say '### worker';
	say '';
	say $worker_line;
	say '';
}
if (defined $explain) {
	say '### claim plan';
	say '';
	say $explain;
}
{
	my @o = sort { $a <=> $b } map { $_->{other} // 0 } values %res;
	my @all = grep { ref $_ eq 'HASH' && defined $_->{other} } values %res;
	my $med = @o ? $o[$#o / 2] : 0;
	say sprintf('!!! the machine was busy with other work during this bench (median %.2f cores outside the '
		. 'set-up): the figures and ratios are disturbed; run again on a quiet machine', $med) if $med > 0.2;
}
for my $p (@profiles) {
	say "### profile: $p->[0]";
	say '';
	say '```';
	print `cat $p->[1]`;
	say '```';
	say '';
}
if (@failures) {
	say '';
	say '!!!!!!!! ' . scalar(@failures) . ' FAILED RUN(S) — acknowledged events lost or a set-up failed:';
	say "!!!!!!!!   $_" for @failures;
}
say sprintf('bench finished in %.0f s', time - $started);
exit 0;
