# SPDX-License-Identifier: ISC
# Model::OpsOrder - operations aimed at order = newest (route ord).
package Model::OpsOrder;

use strict;
use warnings;

# A newer version is sent and applied downstream, its worker dies before
# recording it, and its last attempt is used up, so the next claim parks
# it (what seed 151922 reached through a crash, the clock and a replay),
# with an equal version arrived after the call (seed 44); then an older
# version of that object arrives: it must go stale, never out.  The older one is delivered whether or not the newer one got there,
# so the schedule stays the seed's.
sub sent_then_parked {
	my ($m) = @_;
	my $new = Model::Ops::stripe_event($m);
	my $obj = $m->{ev}{ $new->{L} }{object};
	my $ver = $m->{ev}{ $new->{L} }{version};
	my $r = $m->deliver($new);
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
	} else {
		$what .= ', not sent';
	}
	my $old = Model::Ops::stripe_event($m, object => $obj, version => $ver - 1);
	my $ro = $m->deliver($old);
	$m->worker_run('w8', {}, '--once');
	my $st = $m->sql("select a.state from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where a.route = 'ord' and i.event_id = '$old->{id}'") // '';
	return "$what; older $old->{id} -> $ro->{status}, $st";
}

1;
