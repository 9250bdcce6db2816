#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# The model checker's own runner (tests/model/README).
#
#   perl -I tests/lib -I tests/model tests/model/run.pl --seed 7 --ops 300
#   perl -I tests/lib -I tests/model tests/model/run.pl --soak 600 [--ops 200]
#
# --seed N --ops M   one schedule; prints the summary, and on a failure the
#                    broken invariants and the one-line command that replays it
# --soak S           schedules for S seconds, --jobs at once (default: the
#                    cores), each job its own stack: first the --seeds given
#                    (the fixed regression seeds), then seeds from a random
#                    start (printed); a job stops at its first failure.  The
#                    summary: schedules, schedules/hour, operations,
#                    invariant checks, and per operation how often its
#                    precondition held and its effect was seen (Model/Reach.pm)
# --seeds A,B,...    (with --soak) seeds run first
# --jobs N           (with --soak) schedules at once
# --verbose          print each operation as it is done
# HOOKINBOX_MODEL_DEFECTS: which known defects to provoke (Model/Defects.pm)
use strict;
use warnings;
use Cwd ();
use FindBin;
use Getopt::Long;
use File::Temp ();
use JSON::PP ();
use Time::HiRes qw(time);
BEGIN { $ENV{HOOKINBOX_TOP} //= Cwd::abs_path("$FindBin::Bin/../..") }
use Model;

my %o = (ops => 200);
GetOptions(\%o, 'seed=i', 'ops=i', 'soak=i', 'seeds=s', 'jobs=i', 'verbose') or die "usage: see the header of $0\n";
chdir $ENV{HOOKINBOX_TOP} or die "$ENV{HOOKINBOX_TOP}: $!";

sub one {
	my ($seed, $seconds) = @_;
	my $t0 = time;
	my $m = Model->new(seed => $seed, ops => $o{ops}, seconds => $seconds, verbose => $o{verbose});
	my @fail = $m->run;
	printf "%s; %.0f s\n", $m->summary, time - $t0;
	if (@fail) {
		print "FAILED: $_\n" for @fail;
		print "the schedule:\n", map { "  $_\n" } @{ $m->{log} } unless $o{verbose};
		print "replay: ", $m->replay_command, "\n";
	}
	return (scalar @fail, $m->{ops_done}, $m->{checked}, $m->{counts}, $m->{reach});
}

sub cores {
	open my $fh, '<', '/proc/cpuinfo' or return 1;
	my $n = grep { /^processor\s*:/ } <$fh>;
	return $n || 1;
}

# one soak job: the seeds of its share (fixed ones, then from $next on,
# stepping by $step) until the time is up; its totals go to $out as JSON
sub soak_job {
	my ($fixed, $next, $step, $until, $out) = @_;
	my %t = (schedules => 0, ops => 0, checked => {}, counts => {}, reach => {}, failed => []);
	while (time < $until) {
		my $seed = @$fixed ? shift @$fixed : ($next += $step) - $step;
		my ($failed, $n, $c, $k, $r) = one($seed, $until - time);
		$t{schedules}++;
		$t{ops} += $n;
		$t{checked}{$_} += $c->{$_} for keys %$c;
		$t{counts}{$_} += $k->{$_} for grep { !/^exit:/ } keys %$k;
		Model::Reach::add($t{reach}, $r // {});
		if ($failed) {
			push @{ $t{failed} }, $seed;
			last;
		}
	}
	open my $fh, '>', $out or die "$out: $!";
	print $fh JSON::PP->new->encode(\%t);
	close $fh;
}

if ($o{soak}) {
	$| = 1;
	my $t0 = time;
	my $until = $t0 + $o{soak};
	my $jobs = $o{jobs} || cores();
	my @fixed = grep { length } split /[,\s]+/, $o{seeds} // '';
	my $start = $o{seed} // int(time) % 1_000_000;
	print "soak: $o{soak} s, $jobs jobs, $o{ops} operations a schedule; seeds "
		. (@fixed ? join(',', @fixed) . ', then ' : '') . "from $start\n";
	my $dir = File::Temp::tempdir('model-soak-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my %pid;
	for my $j (0 .. $jobs - 1) {
		my @mine = @fixed[grep { $_ % $jobs == $j } 0 .. $#fixed];
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			soak_job(\@mine, $start + $j, $jobs, $until, "$dir/job$j.json");
			exit 0;   # File::Temp removes only what this process made
		}
		$pid{$pid} = $j;
	}
	my %t = (schedules => 0, ops => 0, checked => {}, counts => {}, reach => {}, failed => []);
	while ((my $pid = wait) > 0) {
		my $j = delete $pid{$pid} // next;
		my $f = "$dir/job$j.json";
		if ($? != 0 || !-s $f) {
			push @{ $t{failed} }, "job $j died (status $?)";
			next;
		}
		my $r = JSON::PP->new->decode(HookTest::slurp($f));
		$t{$_} += $r->{$_} for qw(schedules ops);
		$t{checked}{$_} += $r->{checked}{$_} for keys %{ $r->{checked} };
		$t{counts}{$_} += $r->{counts}{$_} for keys %{ $r->{counts} };
		Model::Reach::add($t{reach}, $r->{reach});
		push @{ $t{failed} }, @{ $r->{failed} };
	}
	my $secs = time - $t0;
	my $checks = 0;
	$checks += $_ for values %{ $t{checked} };
	printf "soak: %d schedules in %.0f s (%.0f schedules/hour, %d jobs), %d operations, %d invariant checks (%s)\n",
		$t{schedules}, $secs, $t{schedules} * 3600 / ($secs || 1), $jobs, $t{ops}, $checks,
		join(' ', map { "$_:$t{checked}{$_}" } sort { $a <=> $b } keys %{ $t{checked} });
	print "soak: per operation, how often its precondition held and its effect was seen:\n",
		Model::Reach::report($t{reach});
	if (@{ $t{failed} }) {
		print "soak: FAILED: seed(s) @{ $t{failed} } (each printed its replay line above)\n";
		exit 1;
	}
	print "soak: all held\n";
	exit 0;
}
my ($failed) = one($o{seed} // 1);
exit($failed ? 1 : 0);
