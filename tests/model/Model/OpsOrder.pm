# SPDX-License-Identifier: ISC
# Model::OpsOrder - operations aimed at order = newest (route ord).
package Model::OpsOrder;

use strict;
use warnings;
use Time::HiRes ();

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
		$m->sql("update hookinbox.action set max_attempts = attempts, due_at = now(), "
			. "lease_until = least(lease_until, now()) where id = $id and state = 'pending'");
		$m->worker_run('w8', {}, '--once');
		$what .= ', sent then ' . $m->sql("select state from hookinbox.action where id = $id");
		$what .= replay_in_progress($m, $id) if $slow;
	} else {
		$what .= ', not sent';
	}
	$m->ds->plan('/ord', '200') if $slow;
	my $old = Model::Ops::stripe_event($m, object => $obj, version => $ver - 1);
	my $ro = $m->deliver($old);
	$m->worker_run('w8', {}, '--once');
	my $st = $m->sql("select a.state from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where a.route = 'ord' and i.event_id = '$old->{id}'") // '';
	return "$what; older $old->{id} -> $ro->{status}, $st";
}

1;
