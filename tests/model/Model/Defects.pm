# SPDX-License-Identifier: ISC
# Model::Defects - the known defects of hookinbox that the model checker
# can provoke, and THE switch that says which of them to provoke.
#
# Each defect in %KNOWN is open (reported, or found by the checker).
# While it is listed, the operations (or operation parameters) that provoke
# it are left out of the schedule, so `make check` stays green and still
# checks every invariant on everything else.  When the fix is merged, MOVE
# ITS LINE from %KNOWN to %FIXED: from then on every run provokes it (and
# must stay green).  To provoke listed defects for one run (to see the
# checker find them):
#
#   HOOKINBOX_MODEL_DEFECTS=all                 every listed defect
#   HOOKINBOX_MODEL_DEFECTS=held-replay-after-purge,other-one
#   HOOKINBOX_MODEL_DEFECTS=none                (the default)
package Model::Defects;

use strict;
use warnings;

# defects fixed since (their operations always run): moved here from
# %KNOWN when their fixes were merged, each checked with this checker
# before and after (tests/model/README); name => [what provokes it, the
# invariants that failed]
our %FIXED = (
	'twilio-reencoded' => ['a captured Twilio form body replayed under a fresh idempotency token '
		. 'with its parameters reordered or percent-encoded', 1],
	'shopify-other-topic' => ['a Shopify body delivered again, byte for byte, under another topic', 1],
	'huge-numeric-id' => ['two events whose numeric ids differ only beyond int64 (hmac id_field)', 1],
	'poisoned-header' => ['a signed delivery with a non-UTF-8 User-Agent', 9],
	'replay-after-purge' => ['a redelivery, or a captured body under a fresh id, after purge.sql '
		. 'with a dedup_days below the provider\'s retry horizon removed the first row', '1, 7'],
	'lease-behind-slow-calls' => ['calls of over half the lease queued behind each other '
		. '(lease 5 s, timeout 3 s, downstream 2.9 s, concurrency 1, two workers)', '5, 4'],
	'replay-after-retry-window' => ['the clock moved past retry_window, then replay.sql', 3],
	'purge-parked' => ['purge.sql while actions are parked', 8],
	# fixed in worker/db.c: a refusal is a second failure after a good ping
	# --loop reconnects, and it does (1/5 seeds failed before,
	# none of five after); but t/85's random seed 543305 on main 9c2ba93 saw a
	# --loop worker exit 78 (configuration error) across a restart:
	# db_connect() calls a failed connection a refusal when PQping answers
	# OK afterwards, and the server can come up between the two
	# found by this checker on main 9c2ba93 (seed 2): once purge.sql had
	# deleted the first delivery of a Shopify body, a copy held in review
	# (same body, other topic) replayed under a fresh id was stored as a new
	# event and delivered; fixed in sql/functions.sql (accept_batch: the
	# held copy is the replay defence before the insert), t/17 checks it
	'held-replay-after-purge' => ['a held (review) delivery replayed under a fresh id after '
		. 'purge.sql deleted the delivery it collided with', 1],
	'loop-exits-on-restart' => ['PostgreSQL restarted under a --loop worker (the operation always '
		. 'runs; while listed, invariant 10 is not checked)', 10],
	# the ledger of signed content (migration 010): a purged event is never
	# stored again (Model/OpsBackfill.pm); while listed, invariant 1 lets a
	# purge below the replay horizon store it again, as before
	'signed-ledger' => ['a captured delivery replayed after purge.sql deleted its row', 1],
	'backfill-outside-defence' => ['hookinbox-backfill over missed, answered and purged events, '
		. 'then live or replayed deliveries of what it stored', '1, 9'],
);

# name => [what provokes it, the invariants expected to fail]
# (none open: every seed in CI provokes every defect above)
our %KNOWN = ();

# whether this run may provoke the defect: it is fixed (not listed), or asked for
sub provoke {
	my ($name) = @_;
	die "Model::Defects::provoke: unknown defect \"$name\"\n" unless $KNOWN{$name} || $FIXED{$name};
	return 1 unless $KNOWN{$name};
	return scalar grep { $_ eq $name } enabled();
}

# the listed defects provoked by this run
sub enabled {
	my $v = $ENV{HOOKINBOX_MODEL_DEFECTS} // 'none';
	return () if $v eq 'none' || $v eq '';
	return sort keys %KNOWN if $v eq 'all';
	my @d = split /[\s,]+/, $v;
	for (@d) { die "HOOKINBOX_MODEL_DEFECTS: unknown defect \"$_\" (known: @{[ sort keys %KNOWN ]})\n" unless $KNOWN{$_} }
	return @d;
}

1;
