# SPDX-License-Identifier: ISC
# HookTest::Patroni - a two-node PostgreSQL cluster under Patroni with a
# one-node etcd, on loopback, for tests (the recipe and its traps:
# docs/scaling.md, "High availability").
#
#   my $p = HookTest::Patroni->new(dir => $dir, ttl => 10)->start;
#   my $leader = $p->leader;                 # node name, from the REST API
#   $p->pg($leader)->sql('...');             # psql on its unix socket
#   $p->conninfo('hookinbox_intake');        # both nodes, read-write only
#   $p->crash($leader);                      # kill -9 postmaster, then Patroni
#
# etcd and each node's Patroni are children of the test and are waited
# for.  Patroni runs as the system user postgres with a clean environment
# (it hands its environment to the postmaster).  Nodes are stopped with a
# fast shutdown: a smart one would wait for sessions stuck in synchronous
# replication.
package HookTest::Patroni;

use strict;
use warnings;
use HookTest;
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Scalar::Util ();
use Time::HiRes qw(sleep time);

our $PATRONI = '/usr/bin/patroni';
our $ETCD = '/usr/bin/etcd';
our $USER = 'postgres';

sub available {
	return "no $PATRONI (package patroni)" unless -x $PATRONI;
	return "no $ETCD (package etcd-server)" unless -x $ETCD;
	return "no system user $USER (package postgresql)" unless getpwnam($USER);
	return "not root: Patroni is started as the user $USER" if $> != 0;
	return;
}

# o: dir, ttl (default 10), strict (synchronous_mode_strict)
sub new {
	my ($class, %o) = @_;
	my $self = bless { ttl => 10, %o, http => HTTP::Tiny->new(timeout => 3) }, $class;
	$self->{pdir} = "$o{dir}/patroni";
	$self->{etcd_client} = HookTest::free_port();
	$self->{etcd_peer} = HookTest::free_port();
	$self->{pw} = { map { $_ => join('', map { ('a' .. 'z', 0 .. 9)[rand 36] } 1 .. 20) } qw(su repl rewind) };
	for my $n (1, 2) {
		$self->{nodes}{"node$n"} = { pg => HookTest::free_port(), rest => HookTest::free_port() };
	}
	return $self;
}

sub spawn {
	my ($self, $log, @cmd) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		POSIX::setsid();
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or POSIX::_exit(2);
		open STDERR, '>&', \*STDOUT or POSIX::_exit(2);
		exec(@cmd) or POSIX::_exit(127);
	}
	return $pid;
}

sub node_yaml {
	my ($self, $name) = @_;
	my $n = $self->{nodes}{$name};
	my $d = "$self->{pdir}/$name";
	my $bin = HookTest::pg_bindir();
	my $strict = $self->{strict} ? 'true' : 'false';
	my $ttl = $self->{ttl};
	return <<"YAML";
scope: hookinbox
namespace: /service/
name: $name
restapi: {listen: 127.0.0.1:$n->{rest}, connect_address: 127.0.0.1:$n->{rest}}
etcd3: {hosts: 127.0.0.1:$self->{etcd_client}}
bootstrap:
  dcs:
    ttl: $ttl
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: $strict
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters: {wal_log_hints: "on", max_connections: 100, max_wal_senders: 5, max_replication_slots: 5, fsync: "on"}
  initdb: [{encoding: UTF8}, {locale: C}, data-checksums, {auth-local: trust}, {auth-host: md5}]
postgresql:
  listen: 127.0.0.1:$n->{pg}
  connect_address: 127.0.0.1:$n->{pg}
  data_dir: $d/data
  bin_dir: $bin
  pgpass: $d/pgpass
  parameters: {unix_socket_directories: '$d'}
  pg_hba:
  - local all all trust
  - host hookinbox hookinbox_intake,hookinbox_worker 127.0.0.1/32 trust
  - host all all 127.0.0.1/32 md5
  - host replication replicator 127.0.0.1/32 md5
  authentication:
    superuser: {username: postgres, password: $self->{pw}{su}}
    replication: {username: replicator, password: $self->{pw}{repl}}
    rewind: {username: rewinder, password: $self->{pw}{rewind}}
watchdog: {mode: "off"}
YAML
}

sub start {
	my ($self) = @_;
	my ($uid, $gid) = (getpwnam($USER))[2, 3];
	mkdir $self->{pdir};
	chmod 0755, $self->{pdir};
	my ($pc, $pp) = @$self{qw(etcd_client etcd_peer)};
	$self->{etcd} = $self->spawn("$self->{pdir}/etcd.log", $ETCD, '--name', 't', '--data-dir',
		"$self->{pdir}/etcd", '--listen-client-urls', "http://127.0.0.1:$pc", '--advertise-client-urls',
		"http://127.0.0.1:$pc", '--listen-peer-urls', "http://127.0.0.1:$pp", '--initial-advertise-peer-urls',
		"http://127.0.0.1:$pp", '--initial-cluster', "t=http://127.0.0.1:$pp", '--initial-cluster-state', 'new');
	$HookTest::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::LIVE{"$self"});
	$self->wait_for(sub { ($self->{http}->get("http://127.0.0.1:$pc/health")->{content} // '') =~ /"health":\s*"true"/ },
		30, 'etcd');
	for my $name (sort keys %{ $self->{nodes} }) {
		my $d = "$self->{pdir}/$name";
		mkdir $d, 0700;
		chown $uid, $gid, $d;
		open my $fh, '>', "$d.yml" or die $!;
		print $fh $self->node_yaml($name);
		close $fh;
		chmod 0644, "$d.yml";
		$self->start_node($name);
		# the first node bootstraps alone; the second clones it
		$self->wait_for(sub { $self->leader }, 60, 'a leader') if $name eq 'node1';
	}
	$self->wait_sync;
	my $leader = $self->leader;
	$self->pg($leader)->create_db;
	return $self;
}

sub start_node {
	my ($self, $name) = @_;
	$self->{nodes}{$name}{pid} = $self->spawn("$self->{pdir}/$name.log", 'env', '-i',
		'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8', 'runuser', '-u', $USER, '--', $PATRONI,
		"$self->{pdir}/$name.yml");
}

sub wait_for {
	my ($self, $cond, $seconds, $what) = @_;
	my $until = time() + $seconds;
	while (time() < $until) {
		return 1 if $cond->();
		sleep 0.2;
	}
	die "patroni: no $what after $seconds s; logs in $self->{pdir}\n";
}

# GET on a node's REST API: (status, decoded body or undef)
sub rest {
	my ($self, $name, $path) = @_;
	my $r = $self->{http}->get("http://127.0.0.1:$self->{nodes}{$name}{rest}$path");
	return ($r->{status}, eval { decode_json($r->{content}) });
}

# change the cluster's dynamic configuration (PATCH /config on a node)
sub patch_config {
	my ($self, $name, $changes) = @_;
	my $r = $self->{http}->request('PATCH', "http://127.0.0.1:$self->{nodes}{$name}{rest}/config",
		{ content => encode_json($changes), headers => { 'Content-Type' => 'application/json' } });
	die "patroni: PATCH /config: $r->{status} $r->{content}\n" unless $r->{success};
	return decode_json($r->{content});
}

# the node Patroni runs as primary (read-write), or undef
sub leader {
	my ($self) = @_;
	for my $name (sort keys %{ $self->{nodes} }) {
		next if $self->{nodes}{$name}{down};
		my ($st) = $self->rest($name, '/primary');
		return $name if $st == 200;
	}
	return;
}

# the node that is the synchronous standby, or undef
sub sync_standby {
	my ($self) = @_;
	for my $name (sort keys %{ $self->{nodes} }) {
		next if $self->{nodes}{$name}{down};
		my ($st) = $self->rest($name, '/sync');
		return $name if $st == 200;
	}
	return;
}

sub wait_sync {
	my ($self, $seconds) = @_;
	$self->wait_for(sub { $self->sync_standby }, $seconds // 90, 'synchronous standby');
}

# a HookTest::Pg for psql on the node's unix socket (superuser, trust)
sub pg {
	my ($self, $name) = @_;
	my $pg = HookTest::Pg->new(dir => "$self->{pdir}/$name", port => $self->{nodes}{$name}{pg});
	$pg->{sock} = "$self->{pdir}/$name";
	return $pg;
}

sub postmaster_pid {
	my ($self, $name) = @_;
	open my $fh, '<', "$self->{pdir}/$name/data/postmaster.pid" or return;
	my $p = <$fh>;
	chomp $p if defined $p;
	return $p;
}

# The machine of this node is gone: kill -9 of the postmaster (and its
# processes), then of Patroni.
sub crash {
	my ($self, $name) = @_;
	my $pm = $self->postmaster_pid($name);
	if ($pm) {
		require HookTest::Replica;
		kill 'KILL', $pm, HookTest::Replica::children($pm);
	}
	kill 'KILL', -$self->{nodes}{$name}{pid};   # Patroni and runuser: their own session
	waitpid $self->{nodes}{$name}{pid}, 0;
	$self->{nodes}{$name}{down} = 1;
}

# start a crashed node's Patroni again: it rewinds and follows the leader
sub rejoin {
	my ($self, $name) = @_;
	delete $self->{nodes}{$name}{down};
	$self->start_node($name);
}

# both nodes, libpq picks the one that accepts writes
sub conninfo {
	my ($self, $role) = @_;
	my @n = map { $self->{nodes}{$_}{pg} } sort keys %{ $self->{nodes} };
	return 'host=' . join(',', map { '127.0.0.1' } @n) . ' port=' . join(',', @n)
		. " dbname=hookinbox user=$role target_session_attrs=read-write connect_timeout=2";
}

sub log {
	my ($self, $name) = @_;
	return HookTest::slurp("$self->{pdir}/$name.log");
}

# fast shutdown of every node (SIGINT to Patroni stops its postmaster
# first), then etcd
sub stop {
	my ($self) = @_;
	for my $name (sort keys %{ $self->{nodes} }) {
		my $n = $self->{nodes}{$name};
		next if $n->{down} || !$n->{pid};
		kill 'INT', -$n->{pid};
	}
	for my $name (sort keys %{ $self->{nodes} }) {
		my $n = $self->{nodes}{$name};
		next if $n->{down} || !$n->{pid};
		my $until = time() + 20;
		sleep 0.1 while waitpid($n->{pid}, POSIX::WNOHANG()) == 0 && time() < $until;
		if (time() >= $until) {
			kill 'KILL', -$n->{pid};
			waitpid $n->{pid}, 0;
		}
		if (my $pm = $self->postmaster_pid($name)) {
			kill 'QUIT', $pm if kill 0, $pm;
		}
		$n->{down} = 1;
	}
	if ($self->{etcd}) {
		kill 'TERM', $self->{etcd};
		waitpid $self->{etcd}, 0;
		delete $self->{etcd};
	}
	delete $HookTest::LIVE{"$self"};
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

1;
