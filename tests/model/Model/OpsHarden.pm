# SPDX-License-Identifier: ISC
# Model::OpsHarden - operations on how the stack degrades: a database that
# stops answering, a worker that dies and is not replaced in time.  A row
# in Model::Ops::table() each.
package Model::OpsHarden;

use strict;
use warnings;
use POSIX ();
use Time::HiRes qw(sleep time);

# the postmaster and every process it started
sub pg_pids {
	my ($pg) = @_;
	open my $fh, '<', "$pg->{data}/postmaster.pid" or return ();
	chomp(my $pm = <$fh> // '');
	return () unless $pm =~ /^\d+$/;
	my @kids;
	for my $stat (glob('/proc/[0-9]*/stat')) {
		open my $s, '<', $stat or next;
		my $line = <$s> // '';
		push @kids, $1 if $line =~ /^(\d+) \(.*?\) \S (\d+)/ && $2 == $pm;
	}
	return ($pm, @kids);
}

# PostgreSQL frozen (SIGSTOP to the postmaster and its backends, as a hung
# host or a partition) for 0.5 to 4 s while new deliveries arrive: each is
# answered in time, 2xx only once stored, 503 otherwise (retried later by
# provider_retry); the invariants must hold whatever the timing.  A child
# process resumes the server even if this one dies.
sub pg_stall {
	my ($m) = @_;
	my $secs = $m->pick(0.5, 1, 2.5, 4);
	my $n = 1 + $m->rint(3);
	my @eps = map { $m->pick(qw(st st gh sh ac)) } 1 .. $n;
	my @pids = pg_pids($m->t->pg) or return 'skipped: no postmaster pid';
	kill 'STOP', @pids;
	my $waker = fork // do { kill 'CONT', @pids; die "fork: $!" };
	if ($waker == 0) {
		sleep $secs;
		kill 'CONT', @pids;
		POSIX::_exit(0);
	}
	my @st;
	for my $ep (@eps) {
		my $t0 = time;
		my $r = $m->deliver(Model::Ops::new_delivery($m, $ep));
		push @st, sprintf('%s %d in %.1f s', $ep, $r->{status}, time - $t0);
	}
	waitpid $waker, 0;
	kill 'CONT', @pids;
	return "frozen for $secs s: " . join(', ', @st);
}

# a worker dies after its call and before its record, and no worker runs
# again until the action's retry window (20 h by default) has passed: the
# next claim parks it, and must say the outcome is unknown, since the
# downstream may have applied it (invariant 4; replay.sql then asks for
# blind=1).  Only that action's clock moves: its age and its lease.  Every
# other run (the first included; a count, not a draw) the first attempt
# fails and is recorded (500), so that the unrecorded call is the second,
# over an outcome the row still holds.
sub crash_past_window {
	my ($m) = @_;
	my $failed_first = !($m->{ncrash_window}++ % 2);
	$m->quiesce(60);
	$m->ds->plan('/ev', $failed_first ? '500' : '200');
	my $d = Model::Ops::new_delivery($m, 'ac');
	my $r = $m->deliver($d);
	if ($r->{status} != 200) {
		$m->ds->plan('/ev', '200');
		return "skipped: ac $d->{id} -> $r->{status}";
	}
	my $ev = Model::Invariants::sqlq($d->{id});
	my $before = '';
	if ($failed_first) {
		$m->worker_run('w8', {}, '--once');
		$m->ds->plan('/ev', '200');
		my $n = $m->sql(q{update hookinbox.action a set due_at = now() from hookinbox.inbox i
			where i.id = a.inbox_id and i.event_id = } . $ev . q{ and a.state = 'pending'
			and a.attempts = 1 and a.last_status = 500 and a.lease_token is null returning a.id});
		return "ac $d->{id}: no failed first attempt waiting" unless $n;
		$before = 'a failed attempt, then ';
	}
	my $rc = $m->worker_run('w8', { HOOKINBOX_FAILPOINT => 'worker-after-call' }, '--once');
	return "ac $d->{id}: worker exit $rc, no unrecorded call" if $rc != 99;
	my $id = $m->sql(q{select a.id from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id
		where i.event_id = } . $ev . q{ and a.state = 'pending' and }
		. ($failed_first ? q{a.attempts = 2 and a.last_status = 500}
			: q{a.attempts > 0 and a.last_status is null and a.last_error is null})
		. q{ order by a.id limit 1});
	return "ac $d->{id}: worker exit 99, no unrecorded call" unless $id;
	$m->sql("update hookinbox.action set created_at = created_at - interval '21 hours', "
		. "lease_until = least(lease_until, now()), due_at = least(due_at, now()) where id = $id");
	$m->worker_run('w8', {}, '--once');
	my ($key, $state, $err) = split /\|/, $m->sql("select idem_key || '|' || state || '|' "
		. "|| coalesce(last_error, '') from hookinbox.action where id = $id"), 3;
	# judged now, by invariant 4's rule: the drain at the end replays it to done
	my $applied = grep { ($_->{key} // '') eq $key && $_->{effect} } $m->ds->requests;
	push @{ $m->{truth_bad} }, "action $id (ev) was parked ($err) while the downstream applied its key"
		if $state eq 'parked' && $applied && $err !~ /outcome unknown/;
	return "ac $d->{id}: ${before}action $id called, unrecorded, 21 h later $state: $err";
}

1;
