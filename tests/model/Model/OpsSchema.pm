# SPDX-License-Identifier: ISC
# Model::OpsSchema - operations on the schema under the running programs:
# a function the responder prepared gone, an upgrade applied while
# deliveries and claims are in flight.
package Model::OpsSchema;

use strict;
use warnings;
use POSIX ();
use Time::HiRes qw(sleep time);

# Drawn after the schedule's operations from the extra generator
# (Model::extra_op), so that every seed keeps its schedule
sub extra_table {
	return (
		{ name => 'schema_without_one', weight => 1, extra => 1, run => \&schema_without_one },
		{ name => 'upgrade_live', weight => 1, extra => 1, run => \&upgrade_live },
	);
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
# The responder on the schema without it must store them (docs/
# operations.md; invariant 19: each answered 2xx within 3 s of retries).
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
	# a lock holder of pg_lock's (at most 2 s) would make the judgement's
	# deliveries wait past lock_timeout
	my $until = time + 3;
	while (time < $until) {
		$m->reap;
		last unless grep { $_->{kind} eq 'lock' } @{ $m->{bg} };
		sleep 0.1;
	}
	rename_one($m, 'accept_one', 'accept_one_away');
	my ($live, $before, @after);
	my $ok = eval {
		$live = Model::OpsBatch::deliver_own($m, { %$d1, fe => $fe })->{status};
		$before = $logged->();
		$fe->{httpd}->restart(%clock);
		$fe->{now} = $clock{HOOKINBOX_TEST_NOW};
		# as the provider would, again for 3 s while it is answered 5xx
		# (PgBouncer refuses logins for 2 s after a restart of PostgreSQL)
		for my $d ($d2, Model::Ops::resend_of($d1)) {
			my ($st, $tries) = (0, 0);
			while ($tries++ < 4) {
				$st = Model::OpsBatch::deliver_own($m, { %$d, fe => $fe })->{status};
				last if $st >= 200 && $st <= 299;
				sleep 1;
			}
			push @after, $st;
		}
		1;
	};
	my $err = $@;
	rename_one($m, 'accept_one_away', 'accept_one');
	$fe->{httpd}->restart(%clock);
	$fe->{now} = $clock{HOOKINBOX_TEST_NOW};
	die $err unless $ok;
	my $fell = $logged->() > $before ? 'fallback logged' : 'no fallback logged';
	push @{ $m->{schema_bad} }, "the single-row responder, restarted on a schema without accept_one(), "
		. "answered $d2->{id} and $d1->{id} again @after for 3 s ($fell)"
		if grep { $_ < 200 || $_ > 299 } @after;
	return "accept_one() renamed away: $d1->{id} -> $live; restarted, $fell: $d2->{id}, "
		. "$d1->{id} again -> @after; restored";
}

sub rename_one {
	my ($m, $from, $to) = @_;
	$m->sql("do \$\$ begin execute format('alter function %s rename to $to', "
		. "(select p.oid::regprocedure from pg_proc p where p.proname = '$from' "
		. "and p.pronamespace = 'hookinbox'::regnamespace)); end \$\$");
}

# An upgrade while the programs run, as a package upgrade applies it:
# migration 013 undone (the inbox's states a table CHECK again, its row in
# schema_migrations gone), then sql/install.sql run again behind a
# session that holds the inbox for 1 s (Model::Ops::lock_table), so that
# the migration's ACCESS EXCLUSIVE lock waits there and every delivery and
# claim after it queues behind the migration: a new st event to each
# responder and a w8 --loop worker meet the upgrade in flight (a 5xx is the
# provider's to retry; a 2xx must be a row: invariants 1 and 9; no call
# without a live lease: 5).  The install must end, 013 recorded again and
# the column a domain, whatever the programs were doing: a deadlock or a
# refusal is the operation dying.  Its events are its own and stay out of
# {sent}; draws nothing.  Reached: a delivery sent while the install ran,
# the worker running through it.
sub upgrade_live {
	my ($m) = @_;
	my $n = ++$m->{nupgrade};
	# The worker starts before: a program starting on the schema without
	# 013 refuses to (the upgrade's order, install then programs, is
	# t/60's); one already running meets the migration in flight.  Not
	# counted as a loop (whose death the model reports): one that
	# reconnects inside the window refuses the undone schema, which no
	# real upgrade shows it.
	my $w = $m->worker_start('w8', {}, '--loop', '--concurrency=4');
	push @{ $m->{bg} }, $w;
	sleep 0.5;
	# the table's constraint again, with the domain's own states
	(my $check = $m->sql("select pg_get_constraintdef(c.oid) from pg_constraint c "
		. "where c.contypid = 'hookinbox.inbox_state'::regtype and c.conname = 'inbox_state_check'"))
		=~ s/\bVALUE\b/state/g;
	$check =~ s/\s*NOT VALID\s*$//;
	$m->sql("begin; alter table hookinbox.inbox alter column state type text; "
		. "drop domain hookinbox.inbox_state; "
		. "alter table hookinbox.inbox add constraint inbox_state_check $check; "
		. "delete from hookinbox.schema_migrations where version = 13; commit;");
	push @{ $m->{bg} }, { pid => Model::Ops::lock_table($m, 'inbox', 1), kind => 'lock' };
	sleep 0.2;
	my $pg = $m->t->pg;
	my $log = $m->dir . "/upgrade.$n.log";
	my $t0 = time;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		# as the harness installs (HookTest::Pg::install), and when it ended,
		# for the deliveries that met it
		my $ok = eval { $pg->install; 1 };
		open my $out, '>', $log;
		print $out $ok ? '' : $@;
		close $out;
		open my $fh, '>', "$log.end";
		print $fh time;
		close $fh;
		POSIX::_exit($ok ? 0 : 1);
	}
	my (@st, @sent);
	for my $k (0, 1) {
		my $d = Model::Ops::stripe_event_own($m, "evt_upgrade_${n}_$k", "obj_upgrade_$n", 1_700_000_000 + $k);
		push @sent, time;
		push @st, Model::OpsBatch::deliver_own($m, { %$d, fe => $m->{fe}[$k] })->{status};
	}
	my ($code, $deadline) = (undef, time + 60);
	while (time < $deadline) {
		if (waitpid($pid, POSIX::WNOHANG()) == $pid) {
			$code = Model::wait_code($?);
			last;
		}
		sleep 0.05;
	}
	unless (defined $code) {
		kill 'KILL', $pid;
		waitpid $pid, 0;
		die 'sql/install.sql did not end in 60 s: ' . HookTest::slurp($log);
	}
	die 'sql/install.sql failed under the running programs: ' . HookTest::slurp($log) if $code;
	my $t_end = HookTest::slurp("$log.end") || time;
	my $alive = (HookTest::slurp("/proc/$w->{pid}/stat") =~ /^\d+ \(.*?\) [^Z]/) ? 'through it' : 'ended';
	kill 'TERM', $w->{pid};
	my $during = grep { $_ < $t_end } @sent;
	my $type = $m->sql("select format_type(atttypid, atttypmod) from pg_attribute "
		. "where attrelid = 'hookinbox.inbox'::regclass and attname = 'state'");
	my $rec = $m->sql('select count(*) from hookinbox.schema_migrations where version = 13');
	die "after sql/install.sql: state is $type, migration 013 recorded $rec times"
		unless $type eq 'hookinbox.inbox_state' && $rec == 1;
	return sprintf('013 undone; install.sql ran %.1f s, a --loop worker %s: evt_upgrade_%d_0, _1 -> %s '
		. '(%d sent while it ran); 013 again', $t_end - $t0, $alive, $n, "@st", $during);
}

1;
