# The model checker (tests/model/README): seeded random schedules over the
# whole real stack, checked against the invariants of issue 14.  A short
# run: three fixed seeds and one random seed (printed), 60 operations each.
# A failure prints the broken invariants, the schedule and the one line
# that replays it.  Under a sanitizer build: one fixed seed and the random
# one.  `make soak SOAK_SECONDS=N` runs it for longer.
#
# Not 9x-numbered on purpose: the 9x tests run after the others under
# valgrind, which would make this one far too slow.
use strict;
use warnings;
use Test::More;
use HookTest;
use lib HookTest::top() . '/tests/model';
use Model;

my $top = HookTest::top();
my $sanitized = `ldd $top/obj/test/hookinbox-worker 2>/dev/null` =~ /lib(asan|tsan|ubsan)/;
my @seeds = $sanitized ? (1) : (1, 2, 3);
my $random = $ENV{HOOKINBOX_MODEL_SEED} // (int(Time::HiRes::time() * 1000) ^ $$) % 1_000_000;
my $ops = $ENV{HOOKINBOX_MODEL_OPS} // 60;
diag("model: random seed $random (HOOKINBOX_MODEL_SEED=$random to run it again)");

for my $seed (@seeds, $random) {
	my $m = Model->new(seed => $seed, ops => $ops);
	my @fail = $m->run;
	note($m->summary);
	ok(!@fail, "seed $seed: every invariant held over $m->{ops_done} operations") or do {
		diag($_) for @fail;
		diag("the schedule:\n" . join('', map { "  $_\n" } @{ $m->{log} }));
		diag('replay: ' . $m->replay_command);
	};
}

done_testing();
