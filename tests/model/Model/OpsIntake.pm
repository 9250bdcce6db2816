# SPDX-License-Identifier: ISC
# Model::OpsIntake - operations on the delivery key (rows of Ops.pm's table()).
package Model::OpsIntake;

use strict;
use warnings;

# Pre-claiming a delivery id: a captured signed body (GitHub or Shopify,
# whose delivery id and type are unsigned) replayed under the next id with
# another type is held for review; then the genuine delivery of that id,
# with its own body, arrives and must be stored as its own event
# (invariant 1: two events never share an id; 9: it is stored).
my %OTHER = (gh => 'issues.opened', sh => 'orders/cancelled');

sub pre_claim {
	my ($m) = @_;
	my $ep = $m->pick(qw(gh sh));
	my $x = $m->rint(1 << 30);
	my $g = Model::Ops::new_delivery($m, $ep);
	my @c = grep { !$_->{bad} && !$_->{held} && $_->{ep} eq $ep && !$m->{preclaimed}{ $_->{body} } }
		@{ $m->{sent} };
	my $d = @c ? $c[ $x % @c ] : undef;
	my $out = '';
	# only over a first delivery still stored: after a purge the body is
	# simply new again (the ledger of what was signed is another matter)
	if ($d && first_stored($m, $d)) {
		$m->{preclaimed}{ $d->{body} } = 1;
		my $e = $m->event(ep => $ep, type => $OTHER{$ep}, event_id => $g->{id}, body => $d->{body});
		$e->{ids}{ $g->{id} } = 1;
		my $r = $m->deliver({ L => $e->{L}, ep => $ep, id => $g->{id}, body => $d->{body},
			type => $OTHER{$ep}, held => 1 });
		$out = "$ep $d->{id} as $g->{id} $OTHER{$ep} -> $r->{status}; ";
	}
	my $r = $m->deliver($g);
	return "${out}genuine $ep $g->{id} -> $r->{status}";
}

sub first_stored {
	my ($m, $d) = @_;
	(my $b = $d->{body}) =~ s/'/''/g;
	return $m->sql("select count(*) from hookinbox.inbox where endpoint = '$d->{ep}' and review_of is null "
		. "and body_dedup and body_sha256 = sha256(convert_to('$b', 'UTF8'))") > 0;
}

# Drawn after the schedule's operations from the extra generator
# (Model::extra_op), so that every seed keeps its schedule
sub extra_table {
	return ({ name => 'schema_without_one', weight => 1, extra => 1, run => \&schema_without_one });
}

# The schema without accept_one(), the single-row responders' call: a
# responder newer than its schema falls back on accept_batch(), and one
# whose prepared call stops resolving (the function renamed away under
# it) must answer 5xx, never 2xx without a row.  The function is renamed
# while both responders run; a new st event goes to the single-row
# responder; it restarts, finds no accept_one() (the fallback is logged)
# and takes a second new event and the first again (a duplicate of it if
# its first delivery was stored: invariant 9 judges the answer); the
# function comes back and the responder restarts on it.  Its events are
# its own and stay out of {sent} (Model::OpsBatch::deliver_own); draws
# nothing.
# Reached: the fallback logged and both deliveries after it answered 2xx.
my $FALLBACK = qr/the schema has no hookinbox\.accept_one\(\)/;

sub schema_without_one {
	my ($m) = @_;
	my $n = ++$m->{nnoone};
	my $fe = $m->{fe}[0];
	my $log = "$fe->{httpd}{dir}/responder.log";
	my $logged = sub { my @l = (HookTest::slurp($log) // '') =~ /$FALLBACK/g; return scalar @l };
	my %clock = $m->{offset} ? (HOOKINBOX_TEST_NOW => int(time + $m->{offset})) : ();
	my $ev = sub { Model::Ops::stripe_event_own($m, "evt_noone_${n}_$_[0]", "obj_noone_$n", 1_700_000_000 + $_[0]) };
	my ($d1, $d2) = ($ev->(1), $ev->(2));
	rename_one($m, 'accept_one', 'accept_one_away');
	my ($live, $before, @after);
	my $ok = eval {
		$live = Model::OpsBatch::deliver_own($m, { %$d1, fe => $fe })->{status};
		$before = $logged->();
		$fe->{httpd}->restart(%clock);
		$fe->{now} = $clock{HOOKINBOX_TEST_NOW};
		push @after, Model::OpsBatch::deliver_own($m, { %$d2, fe => $fe })->{status};
		push @after, Model::OpsBatch::deliver_own($m, { %{ Model::Ops::resend_of($d1) }, fe => $fe })
			->{status};
		1;
	};
	my $err = $@;
	rename_one($m, 'accept_one_away', 'accept_one');
	$fe->{httpd}->restart(%clock);
	$fe->{now} = $clock{HOOKINBOX_TEST_NOW};
	die $err unless $ok;
	my $fell = $logged->() > $before ? 'fallback logged' : 'no fallback logged';
	return "accept_one() renamed away: $d1->{id} -> $live; restarted, $fell: $d2->{id}, "
		. "$d1->{id} again -> @after; restored";
}

sub rename_one {
	my ($m, $from, $to) = @_;
	$m->sql("do \$\$ begin execute format('alter function %s rename to $to', "
		. "(select p.oid::regprocedure from pg_proc p where p.proname = '$from' "
		. "and p.pronamespace = 'hookinbox'::regnamespace)); end \$\$");
}

1;
