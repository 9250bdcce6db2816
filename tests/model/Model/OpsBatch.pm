# SPDX-License-Identifier: ISC
# Model::OpsBatch - the intake's two paths no other operation met: an hmac
# endpoint whose signature covers a template (tp: signed_content =
# {header:X-Tp-Delivery}.{timestamp}.{body}, providers/template.c), and a
# provider batch (hs: HubSpot, a JSON array of events, fcgi/batchin.c).
#
# deliver_template: a new tp event; or an earlier one again (a duplicate,
#   answered with its first id); or a new event whose body is that of
#   an earlier one under its own delivery id (the id is signed: two events,
#   two rows, never a duplicate nor held for review: docs/providers.md, "no
#   body dedup is needed"); or a captured tp request replayed under another
#   delivery id (the signature was made for the old one: 401, nothing
#   stored; invariant 2); or one signed 400 s ago (outside the 300 s
#   window: 401).
# deliver_batch: a HubSpot batch of 2-4 new events; or new ones with an
#   event stored before (or an earlier batch again, byte for byte); or one
#   new event twice in one batch; or a batch refused whole: one event
#   without its eventId (400), or signed with another secret (401).
#   Each event of an answered batch is recorded as its own answer (its id
#   in the answer's events, in order), so invariants 1 and 9 judge them
#   as any delivery: every acknowledged event stored, duplicates answered
#   with the first id; invariant 17 the rest (Model::Invariants).
package Model::OpsBatch;

use strict;
use warnings;
use Time::HiRes qw(time);

# The operations, drawn after each operation of the schedule from their
# own generator (Model::extra_op): weights as in Model::Ops::table
sub table {
	return (
		{ name => 'deliver_template', weight => 4, extra => 1, run => \&deliver_template },
		{ name => 'deliver_batch', weight => 4, extra => 1, run => \&deliver_batch },
	);
}

# Their deliveries take numbers of their own ({nb}, not the schedule's
# {n}) and stay out of {sent}, the list the schedule's operations pick
# earlier deliveries from: what those operations meet stays as it was.
sub deliver_own {
	my ($m, $d) = @_;
	my $r = $m->deliver($d);
	pop @{ $m->{sent} };
	return $r;
}

# ---------------------------------------------------------------- tp

sub tp_event {
	my ($m, $body) = @_;
	my $n = ++$m->{nb};
	$body //= qq({"type":"tp.thing","n":$n,"obj":"t$n"});
	my $id = "tp-dlv-$n";
	my $e = $m->event(ep => 'tp', type => 'tp.thing', event_id => $id, body => $body);
	$e->{ids}{$id} = 1;
	push @{ $m->{tp_sent} }, { L => $e->{L}, id => $id, body => $body };
	return { L => $e->{L}, ep => 'tp', id => $id, body => $body, type => 'tp.thing' };
}

sub deliver_template {
	my ($m) = @_;
	my $k = $m->rint(6);
	my $x = $m->rint(1 << 30);
	my @old = @{ $m->{tp_sent} // [] };
	if (($k == 2 || $k == 3) && @old) {
		my $o = $old[ $x % @old ];
		my $d = tp_event($m, $o->{body});
		my $r = deliver_own($m, $d);
		return "tp $d->{id}, the body of $o->{id} -> $r->{status}" . dup_of($r);
	}
	if ($k == 1 && @old) {
		# redelivered: a duplicate, answered with the first id (invariant 1)
		my $o = $old[ $x % @old ];
		my $r = deliver_own($m, { L => $o->{L}, ep => 'tp', id => $o->{id}, body => $o->{body}, type => 'tp.thing' });
		return "tp $o->{id} again -> $r->{status}" . dup_of($r);
	}
	if ($k == 4 && @old) {
		my $o = $old[ $x % @old ];
		my $id = 'BADSIG-tp-' . ++$m->{nb};
		my $r = deliver_own($m, { ep => 'tp', id => $id, signed_id => $o->{id}, body => $o->{body}, type => 'x',
			bad => 1 });
		return "tp $o->{id} replayed as $id -> $r->{status}";
	}
	if ($k == 5) {
		my $n = ++$m->{nb};
		my $id = "BADSIG-tp-$n";
		my $r = deliver_own($m, { ep => 'tp', id => $id, body => qq({"type":"tp.thing","n":$n,"note":"BADSIG"}),
			type => 'x', bad => 1, forge => 'stale' });
		return "tp $id signed 400 s ago -> $r->{status}";
	}
	my $d = tp_event($m);
	my $r = deliver_own($m, $d);
	return "tp $d->{id} -> $r->{status}" . dup_of($r);
}

sub dup_of {
	my ($r) = @_;
	return '' unless $r->{json};
	return $r->{json}{duplicate} ? " (duplicate of $r->{json}{id})" : $r->{json}{review} ? ' (review)' : '';
}

# ---------------------------------------------------------------- hs

sub hs_json {
	my ($n) = @_;
	my $sub = 70 + $n % 3;
	return ("$sub:$n", sprintf('{"eventId":%d,"subscriptionId":%d,"portalId":62515,"appId":54321,'
		. '"occurredAt":%d,"subscriptionType":"contact.propertyChange","attemptNumber":0,'
		. '"objectId":%d,"propertyName":"email","changeSource":"CRM"}', $n, $sub, 1714723200000 + $n,
		1246000 + $n));
}

# a new event of the schedule (owed a row: invariants 1, 3, 9)
sub hs_event {
	my ($m) = @_;
	my ($id, $json) = hs_json(++$m->{nb});
	my $e = $m->event(ep => 'hs', type => 'contact.propertyChange', event_id => $id, body => $json);
	$e->{ids}{$id} = 1;
	my $ev = { L => $e->{L}, id => $id, json => $json, op => $m->{n_op} };
	push @{ $m->{hs_events} }, $ev;
	return $ev;
}

sub deliver_batch {
	my ($m) = @_;
	$m->{n_op}++;
	my $k = $m->rint(6);
	my $n = 2 + $m->rint(3);
	my $x = $m->rint(1 << 30);
	my @old = @{ $m->{hs_events} // [] };
	my (@b, @fresh, $what);
	my %d = (ep => 'hs', type => 'contact.propertyChange');
	# one run in six refused, for one reason or the other
	if ($k == 5) {
		my $missing = $x % 2 == 0;
		# refused whole: fresh events, never owed a row
		my @items;
		for (1 .. ($missing ? $n - 1 : $n)) {
			my ($id, $json) = hs_json(++$m->{nb});
			push @fresh, $id;
			push @items, $json;
		}
		if ($missing) {
			my ($id, $json) = hs_json(++$m->{nb});
			$json =~ s/"eventId":\d+,//;
			splice @items, $x % @items, 0, $json;
			$what = 'refused (an event without eventId)';
		} else {
			$d{bad} = 1;
			$what = 'refused (another secret)';
		}
		$d{body} = '[' . join(',', @items) . ']';
		$d{refuse} = $what;
		$d{fresh_ids} = \@fresh;
		$d{batch} = [];
		$d{id} = "batch of $fresh[0]";
		my $r = deliver_own($m, \%d);
		return "$what: " . scalar(@fresh) . " new events -> $r->{status}";
	}
	if ($k == 2 && @old && $x % 2 == 0 && $m->{hs_last}) {
		my $r = deliver_own($m, { %{ $m->{hs_last} } });
		return 'the last batch again (' . scalar(@{ $m->{hs_last}{batch} }) . " events) -> $r->{status}"
			. answered($r);
	}
	if ($k == 2 && @old) {
		@b = map { hs_event($m) } 1 .. $n - 1;
		splice @b, $x % @b, 0, $old[ $x % @old ];
		$what = ($n - 1) . " new and $old[ $x % @old ]{id} stored before";
	} elsif ($k == 3 || $k == 4) {
		@b = map { hs_event($m) } 1 .. $n - 1;
		push @b, $b[0];
		$what = "$n events, $b[0]{id} twice";
	} else {
		@b = map { hs_event($m) } 1 .. $n;
		$what = "$n new events";
	}
	# the events new to this batch (not one stored before)
	my %new = map { $_->{id} => 1 } grep { $_->{op} == $m->{n_op} } @b;
	$d{body} = '[' . join(',', map { $_->{json} } @b) . ']';
	$d{batch} = [ map { { L => $_->{L}, id => $_->{id} } } @b ];
	$d{id} = "batch of $b[0]{id}";
	my $r = deliver_own($m, \%d);
	$m->{hs_last} = { map { $_ => $d{$_} } qw(ep type body batch id) };
	if ($r->{status} >= 500 || $r->{status} == 0) {
		# stored in one transaction: all of its events or none
		my $in = join(',', map { Model::Invariants::sqlq($_) } sort keys %new);
		my $stored = $m->sql("select count(distinct event_id) from hookinbox.inbox where endpoint = 'hs' "
			. "and event_id in ($in)");
		push @{ $m->{batch_bad} }, "a batch ($what) answered $r->{status} left $stored of its "
			. scalar(keys %new) . ' new events stored' if $stored && $stored < keys %new;
	}
	return "$what -> $r->{status}" . answered($r);
}

sub answered {
	my ($r) = @_;
	my $ev = $r->{json} && $r->{json}{events} or return '';
	return ' [' . join(' ', map { $_->{id} . ($_->{duplicate} ? 'd' : '') } @$ev) . ']';
}

# Model::record_answer for a batch: one answer per event (invariants 1
# and 9), a refused batch kept for invariant 17; a 5xx or no answer the
# provider retries, the whole batch
sub record_batch {
	my ($m, $d, $r) = @_;
	my $st = $r->{status};
	my $ok = $st >= 200 && $st <= 299;
	if ($d->{refuse}) {
		push @{ $m->{batch_refused} }, { ids => $d->{fresh_ids}, status => $st, why => $d->{refuse} };
		return { status => $st };
	}
	my @b = @{ $d->{batch} };
	my @ans = $ok && $r->{json} && ref $r->{json}{events} eq 'ARRAY' ? @{ $r->{json}{events} } : ();
	push @{ $m->{batch_bad} }, sprintf('a batch of %d events (%s) was answered %d with %d ids: %s', scalar @b,
		$d->{id}, $st, scalar @ans, substr($r->{content} // '', 0, 200)) if $ok && @ans != @b;
	for my $i (0 .. $#b) {
		my %a = (ep => 'hs', L => $b[$i]{L}, id => $b[$i]{id}, status => $st, t => time(), batch => 1,
			fe_name => $d->{fe_name}, secs => $r->{secs});
		if ($ok && $ans[$i]) {
			$a{got} = $ans[$i]{id};
			$a{dup} = $ans[$i]{duplicate} ? 1 : 0;
		}
		push @{ $m->{dl} }, \%a;
	}
	if (!$d->{bad} && ($st >= 500 || $st == 0)) {
		push @{ $m->{retry} }, { map { $_ => $d->{$_} } grep { $_ ne 'fe' } keys %$d };
	}
	return { status => $st };
}

1;
