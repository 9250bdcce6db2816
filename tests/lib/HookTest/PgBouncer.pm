# SPDX-License-Identifier: ISC
# HookTest::PgBouncer - Debian's PgBouncer (1.18) in front of a test
# cluster, in transaction mode, for the tests and the bench.
#
#   my $b = HookTest::PgBouncer->new(dir => $dir, pg => $t->pg, pool_size => 4)->start;
#   $b->conninfo('hookinbox_intake');   # what the programs are given
#   $b->show('pools');                  # the admin console, as text
#
# PgBouncer listens on 127.0.0.1 and reaches PostgreSQL over its unix
# socket.  Authentication is trust on both sides (PgBouncer still wants
# every user in its auth_file).  It runs as the suite's unprivileged user:
# PgBouncer refuses to run as root.
package HookTest::PgBouncer;

use strict;
use warnings;
use HookTest;
use Scalar::Util ();
use Time::HiRes qw(sleep);
use IO::Socket::INET;

our $BIN = '/usr/sbin/pgbouncer';

sub available { return -x $BIN }

# o: dir, pg (HookTest::Pg), pool_size (server connections per user, default
#    8), max_client_conn (default 400), ignore (ignore_startup_parameters),
#    login_retry (server_login_retry, seconds; default PgBouncer's 15)
sub new {
	my ($class, %o) = @_;
	my $self = bless { pool_size => 8, max_client_conn => 400, %o }, $class;
	$self->{port} //= HookTest::free_port();
	$self->{bdir} = "$o{dir}/pgbouncer";
	return $self;
}

sub write_conf {
	my ($self) = @_;
	my $d = $self->{bdir};
	mkdir $d;
	my $pg = $self->{pg};
	open my $fh, '>', "$d/users.txt" or die $!;
	print $fh qq("$_" ""\n) for qw(postgres hookinbox_intake hookinbox_worker hookinbox_ops);
	close $fh;
	open $fh, '>', "$d/pgbouncer.ini" or die $!;
	# The worker sends "options" (search_path, synchronous_commit) in its
	# start-up packet; PgBouncer 1.18 refuses that parameter unless told to
	# ignore it (see docs/scaling.md for what that costs).
	print $fh <<"INI";
[databases]
$pg->{dbname} = host=$pg->{sock} port=$pg->{port} dbname=$pg->{dbname}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $self->{port}
unix_socket_dir = $d
auth_type = trust
auth_file = $d/users.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = $self->{pool_size}
max_client_conn = $self->{max_client_conn}
ignore_startup_parameters = @{[ $self->{ignore} // 'options' ]}
logfile = $d/pgbouncer.log
pidfile = $d/pgbouncer.pid
log_connections = 0
log_disconnections = 0
@{[ defined $self->{login_retry} ? "server_login_retry = $self->{login_retry}" : '' ]}
INI
	close $fh;
	if ($> == 0) {
		my ($uid, $gid) = (getpwnam($HookTest::PG_USER))[2, 3];
		chown $uid, $gid, $d, "$d/users.txt", "$d/pgbouncer.ini";
	}
}

sub start {
	my ($self) = @_;
	HookTest::ensure_pg_user() if $> == 0;
	$self->write_conf;
	my $d = $self->{bdir};
	unlink "$d/pgbouncer.pid";
	HookTest::run(HookTest::as_pg_user($BIN, '-d', "$d/pgbouncer.ini"));
	for (1 .. 100) {
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $self->{port});
		if ($s) { close $s; last }
		sleep 0.05;
	}
	$self->{running} = 1;
	$self->{pid} = $self->pid;
	$HookTest::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::LIVE{"$self"});
	return $self;
}

sub pid {
	my ($self) = @_;
	return $self->{pid} if $self->{pid};
	open my $fh, '<', "$self->{bdir}/pgbouncer.pid" or return;
	my $p = <$fh>;
	chomp $p if defined $p;
	return $p;
}

sub stop {
	my ($self) = @_;
	return unless $self->{running};
	if (my $pid = $self->pid) {
		kill 'INT', $pid;   # immediate shutdown
		for (1 .. 100) { last unless kill 0, $pid; sleep 0.05 }
	}
	$self->{running} = 0;
	$self->{pid} = undef;
	delete $HookTest::LIVE{"$self"};
}

sub port { $_[0]{port} }

# a libpq connection string through the pooler, as a role
sub conninfo {
	my ($self, $role) = @_;
	return "host=127.0.0.1 port=$self->{port} dbname=$self->{pg}{dbname} user=" . ($role // 'postgres');
}

# SHOW <what> on the admin console; rows joined by "\n", columns by '|'
sub show {
	my ($self, $what) = @_;
	my $out = HookTest::run("$self->{pg}{bin}/psql", '-X', '-A', '-t', '-h', '127.0.0.1', '-p', $self->{port},
		'-U', 'postgres', '-d', 'pgbouncer', '-c', "show $what");
	chomp $out;
	return $out;
}

sub log { return HookTest::slurp("$_[0]{bdir}/pgbouncer.log") }

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

1;
