# SPDX-License-Identifier: ISC
# HookTest::Pg - a throw-away PostgreSQL cluster: initdb in a temp dir,
# pg_ctl on a unix socket (as HookTest::Proc's unprivileged user when run as
# root: postgres refuses root), the schema installed, queries through psql.
#
#   my $pg = HookTest::Pg->new(dir => $dir)->init(fsync => 'off')->start;
#   $pg->create_db;                      # hookinbox, with sql/install.sql
#   my $n = $pg->sql('select count(*) from hookinbox.inbox');
package HookTest::Pg;

use strict;
use warnings;
use HookTest::Proc;
use Scalar::Util ();

# the newest server's bin directory ($PG_BINDIR to choose); HookTest::pg_bindir
sub pg_bindir {
	return $ENV{PG_BINDIR} if $ENV{PG_BINDIR};
	my @d = sort { ($b =~ /(\d+)\/bin$/)[0] <=> ($a =~ /(\d+)\/bin$/)[0] }
		glob('/usr/lib/postgresql/*/bin');
	return $d[0] // die "no PostgreSQL server found under /usr/lib/postgresql\n";
}

sub new {
	my ($class, %o) = @_;
	my $dir = $o{dir} // die 'dir';
	my $self = bless {
		dir => $dir,
		data => "$dir/pgdata",
		sock => "$dir/pgsock",
		port => $o{port} // HookTest::Proc::free_port(),
		bin => pg_bindir(),
		dbname => 'hookinbox',
	}, $class;
	return $self;
}

sub init {
	my ($self, %o) = @_;
	mkdir $self->{sock};
	if ($> == 0) {
		HookTest::Proc::ensure_pg_user();
		my ($uid, $gid) = (getpwnam($HookTest::Proc::PG_USER))[2, 3];
		defined $uid or die "no user $HookTest::Proc::PG_USER\n";
		chown $uid, $gid, $self->{sock};
		chmod 0755, $self->{dir};
		mkdir $self->{data};
		chown $uid, $gid, $self->{data};
	}
	HookTest::Proc::run(HookTest::Proc::as_pg_user("$self->{bin}/initdb", '-D', $self->{data}, '-U', 'postgres',
		'--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'));
	open my $fh, '>>', "$self->{data}/postgresql.conf" or die $!;
	print $fh "listen_addresses = ''\nunix_socket_directories = '$self->{sock}'\n",
		"port = $self->{port}\nmax_connections = 200\nshared_buffers = 64MB\n",
		"fsync = " . ($o{fsync} // 'on') . "\nlog_min_messages = warning\n",
		"log_line_prefix = '%m [%p] %u '\n", ($o{extra} // '');
	close $fh;
	return $self;
}

sub start {
	my ($self) = @_;
	HookTest::Proc::run(HookTest::Proc::as_pg_user("$self->{bin}/pg_ctl", '-D', $self->{data}, '-l',
		"$self->{data}/server.log", '-w', '-t', '60', 'start'));
	$self->{running} = 1;
	$HookTest::Proc::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::Proc::LIVE{"$self"});
	return $self;
}

# mode: fast | immediate | smart
sub stop {
	my ($self, $mode) = @_;
	return unless $self->{running};
	HookTest::Proc::run(HookTest::Proc::as_pg_user("$self->{bin}/pg_ctl", '-D', $self->{data}, '-w', '-t', '60',
		'-m', $mode // 'fast', 'stop'));
	$self->{running} = 0;
	delete $HookTest::Proc::LIVE{"$self"};
}

sub restart {
	my ($self, $mode) = @_;
	$self->stop($mode);
	$self->start;
}

sub create_db {
	my ($self) = @_;
	$self->psql_raw('postgres', 'postgres', "create database $self->{dbname}");
	$self->install;
}

sub install {
	my ($self) = @_;
	my $top = HookTest::Proc::top();
	return HookTest::Proc::run("$self->{bin}/psql", '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $self->{sock},
		'-p', $self->{port}, '-U', 'postgres', '-d', $self->{dbname}, '-f', "$top/sql/install.sql");
}

sub conninfo {
	my ($self, $role) = @_;
	return "host=$self->{sock} port=$self->{port} dbname=$self->{dbname} user=" . ($role // 'postgres');
}

sub psql_raw {
	my ($self, $db, $role, $sql, @vars) = @_;
	my @cmd = ("$self->{bin}/psql", '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', $self->{sock},
		'-p', $self->{port}, '-U', $role, '-d', $db, (map { ('-v', $_) } @vars), '-c', $sql);
	my $out = HookTest::Proc::run(@cmd);
	chomp $out;
	return $out;
}

# one query as superuser, result as text (rows joined by "\n", columns by '|')
sub sql {
	my ($self, $sql) = @_;
	return $self->psql_raw($self->{dbname}, 'postgres', $sql);
}

# run a script file with psql -v settings; returns (exit code, output)
sub psql_file {
	my ($self, $file, %o) = @_;
	my @cmd = ("$self->{bin}/psql", '-X', '-v', 'ON_ERROR_STOP=1', '-h', $self->{sock}, '-p', $self->{port},
		'-U', $o{role} // 'postgres', '-d', $self->{dbname},
		(map { ('-v', "$_=$o{vars}{$_}") } sort keys %{ $o{vars} // {} }), '-f', $file);
	my $out = `@{[ join ' ', map { HookTest::Proc::shell_quote($_) } @cmd ]} 2>&1`;
	return ($? >> 8, $out);
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	eval { $self->stop('immediate') } if $self->{running};
}

1;
