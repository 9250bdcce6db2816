# SPDX-License-Identifier: ISC
# Model::OpsOrder - operations aimed at order = newest (route ord).
package Model::OpsOrder;

use strict;
use warnings;
use Time::HiRes ();

# The model cuts an action's lease short (it does not wait out the lease)
# only once no call under it can still be in flight: the route timeout
# after its last claim, as the lease would have.  Without this, a
# background worker's call claimed a moment before was cut loose, and the
# replay that followed called the key 1.46 s into it (seed 221033,
# invariant 4: the model's doing, no worker's).
sub wait_calls_over {
	my ($m, $id) = @_;
	my $left = $m->sql("select extract(epoch from max(real_at) - clock_timestamp()) "
		. "from model.claim where action_id = $id");
	# (3 s: the longest timeout of any variant's routes, "tight")
	$left = ($left || 0) + 3 + 0.3;
	Time::HiRes::sleep($left) if $left > 0;
}

# A newer version is sent and applied downstream, its worker dies before
# recording it, and its last attempt is used up, so the next claim parks
# it (what seed 151922 reached through a crash, the clock and a replay),
# with an equal version arrived after the call (seed 44); then an older
# version of that object arrives: it must go stale, never out.  The older one is delivered whether or not the newer one got there,
# so the schedule stays the seed's.
# The operator replays the parked action at once, while the downstream is
# still applying its first call: the replay's one attempt is answered 409
# (key in progress) and parked.  The database must not say a refusal: the
# key is being applied (seed 33: "http status 409; attempts exhausted",
# then dismissed).  Judged here, before the drain replays it to done, by
# invariant 4's rule ($m->{truth_bad}).
sub replay_in_progress {
	my ($m, $id) = @_;
	my ($key, $state) = split /\|/, $m->sql("select idem_key || '|' || state from hookinbox.action where id = $id");
	return '' unless $state eq 'parked';
	# the model cut the crashed worker's lease short (max_attempts above);
	# its call counts as in flight until the route timeout, as a lease
	# would have kept it (seed 151922: a replay 0.3 s into it, invariant 4)
	my ($first) = grep { ($_->{key} // '') eq $key } $m->ds->requests;
	my $wait = $first ? $first->{t} + $Model::ROUTE_TIMEOUT + 0.3 - Time::HiRes::time() : 0;
	Time::HiRes::sleep($wait) if $wait > 0;
	# blind=1: the clock may have moved a day (this downstream keeps every key)
	Model::Ops::operator($m, 'replay', action_id => $id, go => 1, blind => 1);
	$m->worker_run('w8', {}, '--once');
	my ($st, $err) = split /\|/, $m->sql("select state || '|' || coalesce(last_error, '') "
		. "from hookinbox.action where id = $id");
	my @calls = grep { ($_->{key} // '') eq $key } $m->ds->requests;
	my $busy = grep { $_->{inprogress} } @calls;
	if ($st eq 'parked' && (grep { $_->{effect} } @calls) && $err !~ /outcome unknown|without a recorded outcome/) {
		push @{ $m->{truth_bad} }, "action $id (ord) was parked ($err) while the downstream applied its key";
	}
	# the route's max_attempts back (1 was only to reach the park): the
	# drain's replay, within the downstream's 6 s, retries its 409s
	# (seed 151922: "replayed and parked again", invariant 3)
	$m->sql("update hookinbox.action set max_attempts = 60 where id = $id");
	return ", replayed at once -> $st" . ($busy ? ' (409 in progress)' : '');
}

sub sent_then_parked {
	my ($m) = @_;
	my $close_seq = $m->pick(qw(replay dismiss resolve));   # drawn every run: the seed's schedule
	# its target is the new event's ord call by the worker that dies after
	# it: no background worker may take that action first, and no backlog
	# may fill the dying worker's first calls (half the runs of two soaks
	# of the fourth round said "not sent", "worker exit 0": no call made)
	$m->quiesce(60);
	$m->worker_run('w8', {}, '--once', '--concurrency=16');
	my $new = Model::Ops::stripe_event($m);
	my $obj = $m->{ev}{ $new->{L} }{object};
	my $ver = $m->{ev}{ $new->{L} }{version};
	my $r = $m->deliver($new);
	# every other run, the call outlasts the route timeout (the downstream
	# applies it at once and answers after 6 s), as in seed 33
	my $slow = $m->{n} % 2 == 0;
	$m->ds->plan('/ord', 'sleep 6 200') if $slow;
	my $rc = $m->worker_run('w8', { HOOKINBOX_FAILPOINT => 'worker-after-call' }, '--once', '--concurrency=16');
	my ($id, $state, $att) = split /\|/, $m->sql("select a.id || '|' || a.state || '|' || a.attempts "
		. "from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where a.route = 'ord' and i.event_id = '$new->{id}'") // '';
	# an equal version after the call: review for it, never for the one sent
	# (replayed by the drain, it goes on)
	my $eq = Model::Ops::stripe_event($m, object => $obj, version => $ver);
	my $re = $m->deliver($eq);
	my $what = "st $new->{id} $obj -> $r->{status}, worker exit $rc, equal $eq->{id} -> $re->{status}";
	if ($id && $state eq 'pending' && $att > 0) {
		wait_calls_over($m, $id);
		$m->sql("update hookinbox.action set max_attempts = attempts, due_at = now(), "
			. "lease_until = least(lease_until, now()) where id = $id and state = 'pending'");
		$m->worker_run('w8', {}, '--once');
		$what .= ', sent then ' . $m->sql("select state from hookinbox.action where id = $id");
		$what .= replay_in_progress($m, $id) if $slow;
	} else {
		$what .= ', not sent';
	}
	$what .= seq_sent_then_closed($m, $new->{id}, $close_seq);
	$m->ds->plan('/ord', '200') if $slow;
	my $old = Model::Ops::stripe_event($m, object => $obj, version => $ver - 1);
	my $ro = $m->deliver($old);
	$m->worker_run('w8', {}, '--once');
	my $st = $m->sql("select a.state from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where a.route = 'ord' and i.event_id = '$old->{id}'") // '';
	return "$what; older $old->{id} -> $ro->{status}, $st";
}

# The same newer version on route seq (order = sequence), when the dead
# worker had called it: parked the same way, then replayed by the operator
# (attempts back to 0, pending again) or dismissed or resolved, and left
# so while the older version arrives.  Whatever its row says now, it was
# sent: the older one must go to review, never out after it (invariant 14;
# the drain dismisses the review).  Seed 33's path, in every run that
# reaches it.
sub seq_sent_then_closed {
	my ($m, $event_id, $how) = @_;
	my ($id, $state, $att, $key) = split /\|/, $m->sql("select a.id || '|' || a.state || '|' || a.attempts "
		. "|| '|' || a.idem_key from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where a.route = 'seq' and i.event_id = '$event_id'") // '';
	return '; seq uncalled' unless $id && $state eq 'pending' && $att > 0;
	wait_calls_over($m, $id);
	$m->sql("update hookinbox.action set max_attempts = attempts, due_at = now(), "
		. "lease_until = least(lease_until, now()) where id = $id and state = 'pending'");
	$m->worker_run('w8', {}, '--once');
	my $now = $m->sql("select state from hookinbox.action where id = $id");
	return "; seq $id sent then $now" if $now ne 'parked';
	if ($how eq 'replay') {
		# its call counts as in flight until the route timeout (see above)
		my ($first) = grep { ($_->{key} // '') eq $key } $m->ds->requests;
		my $wait = $first ? $first->{t} + $Model::ROUTE_TIMEOUT + 0.3 - Time::HiRes::time() : 0;
		Time::HiRes::sleep($wait) if $wait > 0;
		Model::Ops::operator($m, 'replay', action_id => $id, go => 1, blind => 1);
		$m->sql("update hookinbox.action set max_attempts = 60 where id = $id");
	} else {
		Model::Ops::operator($m, $how, action_id => $id, reason => "model $how", go => 1);
		$m->{closed}{$id} = { how => $how, state => $m->sql("select state from hookinbox.action where id = $id"),
			key => $key, route => 'seq', t => Model::Ops::db_now($m) };
	}
	return "; seq $id sent, parked, $how -> " . $m->sql("select state from hookinbox.action where id = $id");
}

# order = sequence across several objects: 2-4 fresh objects, 2-4
# versions each (gaps of 1-3), delivered interleaved in a shuffled order
# (a later version often first), with no worker running, then workers
# until the route seq has nothing of them pending.  Every version of each
# object must reach /seq in version order, none missing (invariants 14
# and 15 judge it at the end with the rest; the description says what
# this run saw).  The downstream fails some first calls (retries in
# between must not let a later version overtake).
sub sequence_interleaved {
	my ($m) = @_;
	my $nobj = 2 + $m->rint(3);
	my @vers;
	for my $o (1 .. $nobj) {
		my $nv = 2 + $m->rint(3);
		my $v = 1_700_000_000;
		push @vers, map { $v += 1 + $m->rint(3); [$o, $v] } 1 .. $nv;
	}
	for (my $i = $#vers; $i > 0; $i--) {
		my $j = $m->rint($i + 1);
		@vers[$i, $j] = @vers[$j, $i];
	}
	my $plan = $m->pick('200', '500,200', '503,200,503,200', 'sleep 0.3 200', 'reset,200');
	my $tag = ++$m->{nseq};
	my %obj = map { $_->[0] => "sq_${tag}_$_->[0]" } @vers;
	$m->quiesce(60);
	# a paused seq sends nothing (seed 166894: twice 0 of 8): the operator
	# resumes it first (invariant 11 keeps the pause's interval)
	my $resumed = $m->{paused}{seq} ? ', ' . Model::Ops::resume_route($m, 'seq') . ' first' : '';
	$m->ds->plan('/seq', $plan);
	my @ids;
	for my $x (@vers) {
		my $d = stripe_event_for($m, $obj{ $x->[0] }, $x->[1]);
		$m->deliver({ %$d, fe => $m->{fe}[ $m->{n} % 2 ] });
		push @ids, $d->{id};
	}
	my $in = join ',', map { "'$_'" } @ids;
	my $deadline = Time::HiRes::time() + 40;
	my $left;
	while (Time::HiRes::time() < $deadline) {
		$m->worker_run('w8', {}, '--once', '--concurrency=16');
		$left = $m->sql("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
			. "where a.route = 'seq' and a.state = 'pending' and i.event_id in ($in)");
		last if !$left;
		Time::HiRes::sleep(0.5);
	}
	$m->ds->plan('/seq', '200');
	# what reached /seq, in the order it was applied
	my %ver = map { $_->{event_id} => $_ } grep { $_->{ep} eq 'st' } values %{ $m->{ev} };
	my (%last, $applied, $inorder);
	$inorder = 1;
	for my $r (grep { $_->{path} eq '/seq' && $_->{effect} } $m->ds->requests) {
		my $e = $ver{ $r->{event_id} // '' } or next;
		next unless ($e->{object} // '') =~ /^sq_${tag}_/;
		$applied++;
		$inorder = 0 if defined $last{ $e->{object} } && $e->{version} <= $last{ $e->{object} };
		$last{ $e->{object} } = $e->{version};
	}
	return sprintf('%d objects, %d versions shuffled, /seq %s: applied %d of %d%s%s', $nobj, scalar @vers,
		$plan, $applied // 0, scalar @vers, $inorder ? ', in order' : ', OUT OF ORDER',
		$left ? ", $left still pending" : '') . $resumed;
}

# The order operations drawn after each operation of the schedule from
# the extra generator (Model::extra_op): weights as in Model::Ops::table
sub extra_table {
	return ({ name => 'sequence_woken', weight => 2, extra => 1, run => \&sequence_woken });
}

# order = sequence: a later version sent once, whose worker died after
# the call (its lease then ran out), waits behind an earlier version that
# arrived after it and went to review; the operator's dismissal of the
# earlier one ends the wait at once (docs/configuration.md: a later event
# waits while an earlier one is pending, retrying, parked or in review),
# not after the claim's 5 minutes.  The crash: worker-after-call, the
# event's calls on ord and biz failing once by their keys' plans so that
# seq's is the first answered 2xx; the lease is then ended, as its 8 s
# would.  Its object, ids and versions are its own and it stays out of
# {sent}.  Draws nothing.  Judged at once (invariant 14, $m->{seq_bad}).
sub sequence_woken {
	my ($m) = @_;
	$m->quiesce(60);
	my $resumed = $m->{paused}{seq} ? Model::Ops::resume_route($m, 'seq') . ' first, ' : '';
	my $n = ++$m->{nwoken};
	my ($obj, $v) = ("obj_woken_$n", 1_700_000_000);
	# (the earlier version is made when it is sent: an event made is owed its row)
	my @d = (Model::Ops::stripe_event_own($m, "evt_woken_${n}_v2", $obj, $v + 2));
	$m->ds->plan('key:' . Model::Ops::st_key($m, $_, $d[0]), '503,200') for qw(ord biz);
	my $r = Model::OpsBatch::deliver_own($m, { %{ $d[0] }, fe => $m->{fe}[ $n % 2 ] });
	my $rc = $m->worker_run('w8', { HOOKINBOX_FAILPOINT => 'worker-after-call' }, '--once', '--concurrency=4');
	my $seq = sub {
		my ($id) = @_;
		my $row = $m->sql("select a.id || '|' || a.state || '|' || a.attempts || '|' "
			. "|| coalesce(a.last_status::text, '') || '|' || extract(epoch from a.due_at - now())::int "
			. "from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
			. "where a.route = 'seq' and i.event_id = '$id'");
		return split /\|/, $row // '', -1;
	};
	my ($w2, $st2, $att2, $last2) = $seq->($d[0]{id});
	my $what = "${resumed}$obj v2 $d[0]{id} -> $r->{status}, worker exit $rc";
	return "$what, no unrecorded seq call" unless $rc == 99 && $w2 && $st2 eq 'pending' && $att2 > 0
		&& $last2 eq '';
	$m->sql("update hookinbox.action set lease_until = least(lease_until, now()), "
		. "due_at = least(due_at, now()) where id = $w2");
	push @d, Model::Ops::stripe_event_own($m, "evt_woken_${n}_v1", $obj, $v + 1);
	$r = Model::OpsBatch::deliver_own($m, { %{ $d[1] }, fe => $m->{fe}[ ($n + 1) % 2 ] });
	$m->worker_run('w8', {}, '--once', '--concurrency=4');
	my ($w1, $st1) = $seq->($d[1]{id});
	my (undef, undef, undef, undef, $wait) = $seq->($d[0]{id});
	$what .= ", v1 $d[1]{id} -> $r->{status}, seq " . ($w1 // '-') . ' ' . ($st1 // '-') . ", $w2 due in "
		. ($wait // '-') . ' s';
	return "$what: not waiting" unless $st1 && $st1 eq 'review' && ($wait // 0) > 60;
	Model::Ops::operator($m, 'order-review', action_id => $w1, do => 'dismiss', reason => 'model late', go => 1);
	$m->{closed}{$w1} = { how => 'dismiss', state => ($seq->($d[1]{id}))[1], key => Model::Ops::st_key($m, 'seq', $d[1]),
		route => 'seq', t => Model::Ops::db_now($m) };
	($wait) = (($seq->($d[0]{id}))[4]);
	push @{ $m->{seq_bad} }, "action $w2 (seq, $obj version 2, sent once, its lease run out) was left "
		. "waiting $wait s after the dismissal of action $w1, the earlier version in review" if $wait > 1;
	return "$what; $w1 dismissed, $w2 due in $wait s";
}

# a Stripe event of a given object and version (an invoice.updated),
# drawing nothing
sub stripe_event_for {
	my ($m, $obj, $ver) = @_;
	return Model::Ops::stripe_event($m, object => $obj, version => $ver, type => 'invoice.updated');
}

1;
