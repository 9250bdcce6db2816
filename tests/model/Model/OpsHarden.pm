# SPDX-License-Identifier: ISC
# Model::OpsHarden - operations on how the stack degrades: a database that
# stops answering.  A row in Model::Ops::table() each.
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

1;
