# SPDX-License-Identifier: ISC
# HookTest::Replica - plain PostgreSQL streaming replication between test
# clusters, as an operator without Patroni runs it: pg_basebackup -R for a
# standby, pg_ctl promote to make it the primary.
#
#   my $s = HookTest::Replica::standby($t->pg, "$dir/b");   # started, streaming
#   HookTest::Replica::synchronous($t->pg);                 # commits wait for it
#   HookTest::Replica::crash($t->pg);                       # the machine is gone
#   HookTest::Replica::promote($s);
package HookTest::Replica;

use strict;
use warnings;
use HookTest;
use Time::HiRes qw(sleep time);

# a HookTest::Pg for a new, empty directory (not initialised)
sub empty_pg {
	my ($dir) = @_;
	mkdir $dir;
	chmod 0755, $dir;
	my $pg = HookTest::Pg->new(dir => $dir);
	# short: the configuration's lines are read up to 200 bytes (inih)
	$pg->{sock} = "$dir/s";
	mkdir $pg->{sock};
	mkdir $pg->{data}, 0700;
	if ($> == 0) {
		HookTest::ensure_pg_user();
		my ($uid, $gid) = (getpwnam($HookTest::PG_USER))[2, 3];
		chown $uid, $gid, $pg->{sock}, $pg->{data};
	}
	return $pg;
}

# a streaming standby of $primary in $where (a directory, or what
# empty_pg made), started; its application_name is the directory's name
sub standby {
	my ($primary, $where) = @_;
	my $s = ref $where ? $where : empty_pg($where);
	my $name = $s->{dir} =~ s{.*/}{}r;
	HookTest::run(HookTest::as_pg_user("$s->{bin}/pg_basebackup", '-D', $s->{data}, '-h', $primary->{sock},
		'-p', $primary->{port}, '-U', 'postgres', '-R', '-X', 'stream', '--no-sync', '-c', 'fast',
		'-d', "application_name=$name"));
	# the copied postgresql.conf names the primary's port and socket: later lines win
	open my $fh, '>>', "$s->{data}/postgresql.conf" or die $!;
	print $fh "port = $s->{port}\nunix_socket_directories = '$s->{sock}'\nhot_standby = on\n";
	close $fh;
	$s->start;
	wait_streaming($primary, $name);
	return $s;
}

sub wait_streaming {
	my ($primary, $name) = @_;
	for (1 .. 300) {
		return if $primary->sql("select count(*) from pg_stat_replication where application_name = '$name' "
			. "and state = 'streaming'") == 1;
		sleep 0.1;
	}
	die "standby $name did not start streaming\n";
}

# commits on $primary wait until a standby has flushed them
sub synchronous {
	my ($primary, $names) = @_;
	$primary->sql("alter system set synchronous_standby_names = '" . ($names // '*') . "'");
	$primary->sql('select pg_reload_conf()');
}

sub postmaster_pid {
	my ($pg) = @_;
	open my $fh, '<', "$pg->{data}/postmaster.pid" or return;
	my $p = <$fh>;
	chomp $p if defined $p;
	return $p;
}

# kill -9 of the postmaster and every process of the cluster at once: the
# machine is gone.  The object is marked stopped.
sub crash {
	my ($pg) = @_;
	my $pid = postmaster_pid($pg) or die "no postmaster for $pg->{data}\n";
	my @all = ($pid, children($pid));
	kill 'KILL', @all;
	for (1 .. 200) {
		last unless grep { alive($_) } @all;
		sleep 0.05;
	}
	$pg->{running} = 0;
	delete $HookTest::LIVE{"$pg"};
}

# the field after the command name in /proc/PID/stat: (state, ppid, ...)
sub proc_stat {
	my ($pid) = @_;
	my $s = HookTest::slurp("/proc/$pid/stat");
	return $s =~ /\)\s+(.*)$/s ? split(' ', $1) : ();
}

# running, not a zombie (an orphan's zombie may linger in a container)
sub alive {
	my ($pid) = @_;
	my ($state) = proc_stat($pid);
	return defined $state && $state ne 'Z';
}

sub children {
	my ($ppid) = @_;
	return grep { ((proc_stat($_))[1] // -1) == $ppid } map { m{/proc/(\d+)$} ? $1 : () } glob('/proc/[0-9]*');
}

sub promote {
	my ($pg) = @_;
	HookTest::run(HookTest::as_pg_user("$pg->{bin}/pg_ctl", '-D', $pg->{data}, '-w', '-t', '60', 'promote'));
}

# the flush position of $primary reached $standby's replay
sub caught_up {
	my ($primary, $standby) = @_;
	my $lsn = $primary->sql('select pg_current_wal_flush_lsn()');
	for (1 .. 300) {
		return 1 if $standby->sql("select pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn") eq 't';
		sleep 0.05;
	}
	return 0;
}

# a multi-host libpq conninfo over these clusters' sockets
sub conninfo {
	my ($role, @pgs) = @_;
	return 'host=' . join(',', map { $_->{sock} } @pgs) . ' port=' . join(',', map { $_->{port} } @pgs)
		. " dbname=hookinbox user=$role target_session_attrs=read-write";
}

1;
