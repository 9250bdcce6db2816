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

1;
