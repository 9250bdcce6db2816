# SPDX-License-Identifier: ISC
# The model checker (tests/model/README): seeded random schedules over the
# whole real stack, checked against the invariants hookinbox promises.  A short
# run: the fixed seeds 1 and 3 and one random seed, printed in the log with
# the line that replays it, 75 operations each, each schedule on its own
# stack, all at once.  A failure prints the broken invariants, the schedule
# and the one line that replays it.  Under a sanitizer build: seed 1 only.
# HOOKINBOX_MODEL_SEED=N runs seed N as the random one;
# HOOKINBOX_MODEL_RANDOM=0 leaves the random seed out.
# `make soak SOAK_SECONDS=N` runs random seeds for longer.
#
# Seed 2 stays out of the fixed seeds: beside the rest of the suite (prove
# -j3 with the Patroni and standby tests) it once found actions of a route
# parked although the downstream applied them (invariant 4); not
# reproduced since (tests/model/README, "Open finding").
#
# Not 9x-numbered on purpose: the 9x tests run after the others under
# valgrind, which would make this one far too slow.
use strict;
use warnings;
use Test::More;
use JSON::PP ();
use HookTest;
use lib HookTest::top() . '/tests/model';
use Model;

my $top = HookTest::top();
my $sanitized = `ldd $top/obj/test/hookinbox-worker 2>/dev/null` =~ /lib(asan|tsan|ubsan)/;
my @seeds = $sanitized ? (1) : (1, 3);
my $random = $ENV{HOOKINBOX_MODEL_SEED} // (int(Time::HiRes::time() * 1000) ^ $$) % 1_000_000;
my $ops = $ENV{HOOKINBOX_MODEL_OPS} // 75;
my @random = $sanitized || ($ENV{HOOKINBOX_MODEL_RANDOM} // 1) eq '0' ? () : ($random);
diag("model: random seed $random; replay: make build-tests && perl -I tests/lib -I tests/model "
	. "tests/model/run.pl --seed $random --ops $ops") if @random;

my $out = File::Temp::tempdir('model-t-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my %kid;
for my $seed (@seeds, @random) {
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		my %r;
		eval {
			my $m = Model->new(seed => $seed, ops => $ops);
			$r{fail} = [$m->run];
			@r{qw(summary log replay ops)} = ($m->summary, $m->{log}, $m->replay_command, $m->{ops_done});
		};
		$r{fail} = ["the model died: $@"] if $@;
		open my $fh, '>', "$out/$seed.json" or die $!;
		print $fh JSON::PP::encode_json(\%r);
		close $fh;
		exit 0;
	}
	$kid{$pid} = $seed;
}
while ((my $pid = wait) > 0) {
	my $seed = delete $kid{$pid} // next;
	my $r = eval { JSON::PP::decode_json(HookTest::slurp("$out/$seed.json")) }
		// { fail => ["seed $seed: no result (exit status $?)"] };
	note($r->{summary}) if $r->{summary};
	ok(!@{ $r->{fail} }, "seed $seed: every invariant held over " . ($r->{ops} // '?') . ' operations') or do {
		diag($_) for @{ $r->{fail} };
		diag("the schedule:\n" . join('', map { "  $_\n" } @{ $r->{log} // [] }));
		diag('replay: ' . ($r->{replay} // "perl -I tests/lib -I tests/model tests/model/run.pl --seed $seed --ops $ops"));
	};
}

done_testing();
