# SPDX-License-Identifier: ISC
# Model::Reach - did an operation reach what it targets?  Read from the
# description each operation returns (the schedule's log line), one row
# per operation:
#   miss     the precondition did not hold: the operation did nothing
#            ("no loop running", "nothing parked", a purge refused)
#   effect   what shows the operation did what it is for (a crash point
#            reached: exit 99; a delivery answered; a loop told to stop)
# An operation without a row is counted as run only; one with a miss
# pattern and no effect pattern counts every run that did not miss as an
# effect.  The soak summary prints, per operation, runs, held (the
# precondition) and effect.
package Model::Reach;

use strict;
use warnings;

my %RULES = (
	deliver_new => { effect => qr/-> 2\d\d$/ },
	deliver_duplicate => { effect => qr/-> 2\d\d$/ },
	deliver_concurrent_duplicates => { effect => qr/-> 2\d\d( 2\d\d)+$/ },
	deliver_older_version => { effect => qr/-> 2\d\d$/ },
	deliver_equal_version => { effect => qr/-> 2\d\d$/ },
	replay_under_fresh_id => { effect => qr/-> 2\d\d$/ },
	bad_signature => { effect => qr/-> 401;/ },
	worker_background => { miss => qr/^skipped/ },
	worker_stop => { miss => qr/^no loop running/, effect => qr/TERM to loop/ },
	worker_crash => { effect => qr/exit 99(?: \(\d tries\))?$/ },
	responder_crash => { effect => qr/-> .*\b(?:5\d\d|0)\b/ },
	clock_forward => { miss => qr/^skipped/ },
	# dedup_days 0's target is the refusal; the others' a row deleted or a body stripped
	purge => { miss => qr/^skipped|: not refused$/,
		effect => qr/: (?:[1-9]\d* rows deleted|\d+ rows deleted, [1-9]\d* bodies stripped)|, as it must$/ },
	purge_over_parked => { miss => qr/refused|^skipped/ },
	close_parked => { miss => qr/^nothing/ },
	replay_parked => { miss => qr/: 0 parked/ },
	resend => { miss => qr/nothing done on ev/ },
	review_decide => { miss => qr/nothing held$/ },
	route_pause => { miss => qr/already paused/ },
	route_resume => { miss => qr/^no route paused/, effect => qr/resumed$/ },
	pg_restart => { effect => qr/^-m/ },
	slow_calls_near_lease => { miss => qr/^not paused/ },
	metrics_scrape => { miss => qr/^nothing|^skipped/ },
	crash_past_window => { miss => qr/^skipped|no unrecorded call|no failed first attempt/, effect => qr/later parked: / },
	sequence_interleaved => { effect => qr/applied (\d+) of \1, in order(?:, route seq resumed first)?$/ },
	business_twins => { effect => qr/one action for both$/ },
	route_key_refused => { effect => qr/refused \(exit 78\)$/ },
	deliver_template => { effect => qr/-> 2\d\d$|again -> 2\d\d \(duplicate of \d+\)$|BADSIG.* -> 401$/ },
	deliver_batch => { effect => qr/^refused .* -> 4\d\d$|-> 2\d\d \[/ },
	# counted since the fourth round (before, run only)
	provider_retry => { miss => qr/^nothing to retry/, effect => qr/retried -> 2\d\d(?: 2\d\d)*$/ },
	downstream_plan => { effect => qr/-> 2\d\d, worker exit 0/ },
	downstream_rejects => { effect => qr/-> 2\d\d, worker exit 0/ },
	downstream_flaky => { effect => qr/-> 2\d\d, worker exit 0/ },
	downstream_dead => { effect => qr/attempts exhausted/ },
	sequence_woken => { miss => qr/no unrecorded seq call$|: not waiting$/, effect => qr/ dismissed, \d+ due in / },
	downstream_poison => { miss => qr/^route ord paused|^skipped/,
		effect => qr/: (?:[5-9]|\d\d+) calls failed over (?:1\d|[2-9]\d) s/ },
	pre_claim => { effect => qr/genuine \S+ \S+ -> 2\d\d/ },
	upgrade_live => { effect => qr/worker through it: .*\([12] sent while it ran\); 013 again$/ },
	schema_without_one => { effect => qr/restarted, fallback logged: .* -> 2\d\d 2\d\d; restored$/ },
	replay_after_purge => { effect => qr/its row purged; .*? -> 2\d\d(?:;|$)/ },
	backfill_run => { effect => qr/exit 0, stored \d+/ },
	sent_then_parked => { miss => qr/not sent/, effect => qr/sent then parked(?:, replayed[^;]*)?; .*, stale$/ },
);

# adds one run of $name that returned $what to the counters in $c
sub count {
	my ($c, $name, $what) = @_;
	my $r = $RULES{$name};
	my $k = $c->{$name} //= { runs => 0, held => 0, effect => 0, measured => $r ? 1 : 0 };
	$k->{runs}++;
	return unless $r;
	$what //= '';
	return if $r->{miss} && $what =~ $r->{miss};
	$k->{held}++;
	$k->{effect}++ if $r->{effect} ? $what =~ $r->{effect} : 1;
}

sub add {
	my ($into, $from) = @_;
	for my $name (keys %$from) {
		my $k = $into->{$name} //= { runs => 0, held => 0, effect => 0, measured => $from->{$name}{measured} };
		$k->{$_} += $from->{$name}{$_} for qw(runs held effect);
	}
}

# one line per operation: name runs held effect (- when not measured)
sub report {
	my ($c) = @_;
	my @l = sprintf('  %-30s %6s %6s %6s', 'operation', 'runs', 'held', 'effect');
	for my $name (sort keys %$c) {
		my $k = $c->{$name};
		push @l, $k->{measured}
			? sprintf('  %-30s %6d %5.0f%% %5.0f%%', $name, $k->{runs}, 100 * $k->{held} / $k->{runs},
				100 * $k->{effect} / $k->{runs})
			: sprintf('  %-30s %6d %6s %6s', $name, $k->{runs}, '-', '-');
	}
	return join("\n", @l) . "\n";
}

1;
