#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# The model checker's own runner (tests/model/README).
#
#   perl -I tests/lib -I tests/model tests/model/run.pl --seed 7 --ops 300
#   perl -I tests/lib -I tests/model tests/model/run.pl --soak 600 [--ops 200]
#
# --seed N --ops M   one schedule; prints the summary, and on a failure the
#                    broken invariants and the one-line command that replays it
# --soak S           one schedule after another (seeds from a random start,
#                    printed) for S seconds; stops at the first failure
# --verbose          print each operation as it is done
# HOOKINBOX_MODEL_DEFECTS: which known defects to provoke (Model/Defects.pm)
use strict;
use warnings;
use Cwd ();
use FindBin;
use Getopt::Long;
use Time::HiRes qw(time);
BEGIN { $ENV{HOOKINBOX_TOP} //= Cwd::abs_path("$FindBin::Bin/../..") }
use Model;

my %o = (ops => 200);
GetOptions(\%o, 'seed=i', 'ops=i', 'soak=i', 'verbose') or die "usage: see the header of $0\n";
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
	return (scalar @fail, $m->{ops_done}, $m->{checked}, $m->{counts});
}

if ($o{soak}) {
	my $until = time + $o{soak};
	my $seed = $o{seed} // int(time) % 1_000_000;
	print "soak: $o{soak} s from seed $seed, $o{ops} operations each\n";
	my ($seeds, $ops, %checked, %counts) = (0, 0);
	while (time < $until) {
		my ($failed, $n, $c, $k) = one($seed, $until - time);
		$seeds++;
		$ops += $n;
		$checked{$_} += $c->{$_} for keys %$c;
		$counts{$_} += $k->{$_} for grep { !/^exit:/ } keys %$k;
		if ($failed) {
			print "soak: failed at seed $seed after $seeds schedules\n";
			exit 1;
		}
		$seed++;
	}
	printf "soak: %d schedules, %d operations (%s), invariant checks %s: all held\n", $seeds, $ops,
		join(' ', map { "$_=$counts{$_}" } sort keys %counts),
		join(' ', map { "$_:$checked{$_}" } sort { $a <=> $b } keys %checked);
	exit 0;
}
my ($failed) = one($o{seed} // 1);
exit($failed ? 1 : 0);
