# SPDX-License-Identifier: ISC
# HookTest::Netns - "hosts" for tests: network namespaces, each with its
# own address on a veth pair to this (the database's) namespace.
#
#   my $n = HookTest::Netns->new(hosts => [qw(ra rb wa wb)]);   # or die with why
#   $n->addr('ra');            # the host's address (inside its namespace)
#   $n->gateway('ra');         # this side's address on that host's veth
#   $n->wrap('ra');            # ('ip', 'netns', 'exec', NAME): run a command there
#   $n->relay(port => $p);     # 127.0.0.1:$p reachable from every host (returns the port)
#   my $h = HookTest::Netns::Lighttpd->new(netns => $n, host => 'ra', dir => ..., ...)->start;
#
# Host i gets 10.N.i.2/24 in its namespace and 10.N.i.1/24 on this side,
# with a default route through it, so it can reach every address of this
# namespace (N from the test's pid, so that two runs do not collide).
# Everything is removed when the object goes away.
package HookTest::Netns;

use strict;
use warnings;
use HookTest;
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use Scalar::Util ();
use Time::HiRes qw(sleep);

sub ip {
	my (@args) = @_;
	my $out = `ip @{[ join ' ', map { HookTest::shell_quote($_) } @args ]} 2>&1`;
	die "ip @args: $out" if $? != 0;
	return $out;
}

# undef when namespaces can be made here, else why not
sub unavailable {
	return 'not root' if $> != 0;
	return 'no ip (package iproute2)' unless -x '/usr/sbin/ip' || -x '/sbin/ip' || -x '/bin/ip';
	my $name = "hbprobe$$";
	my $out = `ip netns add $name 2>&1`;
	return "ip netns add failed: $out" if $? != 0;
	$out = `ip netns exec $name ip link set lo up 2>&1`;
	my $why = $? != 0 ? "ip netns exec failed: $out" : undef;
	system('ip', 'netns', 'del', $name);
	return $why;
}

sub new {
	my ($class, %o) = @_;
	my $self = bless { hosts => $o{hosts}, net => 10 + $$ % 200, made => [] }, $class;
	$HookTest::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::LIVE{"$self"});
	my $i = 0;
	for my $h (@{ $o{hosts} }) {
		$i++;
		my $ns = sprintf('hb%d%s', $$, $h);
		my ($out, $in) = (sprintf('vh%d%s', $$, $h), sprintf('vn%d%s', $$, $h));
		$self->{host}{$h} = { ns => $ns, i => $i, addr => "10.$self->{net}.$i.2", gw => "10.$self->{net}.$i.1" };
		ip('netns', 'add', $ns);
		push @{ $self->{made} }, $ns;
		ip('link', 'add', $out, 'type', 'veth', 'peer', 'name', $in);
		ip('link', 'set', $in, 'netns', $ns);
		ip('addr', 'add', "10.$self->{net}.$i.1/24", 'dev', $out);
		ip('link', 'set', $out, 'up');
		ip('netns', 'exec', $ns, 'ip', 'addr', 'add', "10.$self->{net}.$i.2/24", 'dev', $in);
		ip('netns', 'exec', $ns, 'ip', 'link', 'set', $in, 'up');
		ip('netns', 'exec', $ns, 'ip', 'link', 'set', 'lo', 'up');
		ip('netns', 'exec', $ns, 'ip', 'route', 'add', 'default', 'via', "10.$self->{net}.$i.1");
	}
	return $self;
}

sub addr { $_[0]{host}{ $_[1] }{addr} }
sub gateway { $_[0]{host}{ $_[1] }{gw} }
sub gateways { my ($self) = @_; return map { $self->gateway($_) } @{ $self->{hosts} } }
sub subnet { "10.$_[0]{net}.0.0/16" }
sub wrap { my ($self, $h) = @_; return ('ip', 'netns', 'exec', $self->{host}{$h}{ns}) }

# a TCP relay from the first host's gateway address to 127.0.0.1:port (a
# server of this namespace that listens on loopback only); returns the
# port it listens on
sub relay {
	my ($self, %o) = @_;
	my $listen = IO::Socket::INET->new(Listen => 128, LocalAddr => $self->gateway($self->{hosts}[0]),
		LocalPort => 0, ReuseAddr => 1) or die "relay: $!";
	my $port = $listen->sockport;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		$SIG{CHLD} = 'IGNORE';
		while (my $c = $listen->accept) {
			my $k = fork;
			if (defined $k && $k == 0) {
				close $listen;
				pipe_both($c, IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $o{port}));
				POSIX::_exit(0);
			}
			close $c;
		}
		POSIX::_exit(0);
	}
	close $listen;
	push @{ $self->{relays} }, $pid;
	return $port;
}

sub pipe_both {
	my ($a, $b) = @_;
	return unless $b;
	my $sel = IO::Select->new($a, $b);
	while (1) {
		for my $fh ($sel->can_read(60)) {
			my $n = sysread($fh, my $buf, 65536);
			return if !$n;
			my $to = $fh == $a ? $b : $a;
			for (my $off = 0; $off < $n;) {
				my $w = syswrite($to, $buf, $n - $off, $off);
				return unless $w;
				$off += $w;
			}
		}
	}
}

sub remove {
	my ($self) = @_;
	for my $pid (@{ $self->{relays} // [] }) {
		kill 'TERM', $pid;
		waitpid $pid, 0;
	}
	$self->{relays} = [];
	# deleting a namespace deletes its end of the veth, and with it the pair
	system('ip', 'netns', 'del', $_) for @{ $self->{made} };
	$self->{made} = [];
	delete $HookTest::LIVE{"$self"};
}

sub stop { $_[0]->remove }

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->remove;
}

# ---------------------------------------------------------------- lighttpd in a namespace

# HookTest::Lighttpd bound to the host's address, started inside its
# namespace.  o: netns, host, and HookTest::Lighttpd's
package HookTest::Netns::Lighttpd;

use strict;
use warnings;
use parent -norequire, 'HookTest::Lighttpd';

sub write_conf {
	my ($self) = @_;
	$self->SUPER::write_conf();
	my $path = "$self->{dir}/lighttpd.conf";
	my $c = HookTest::slurp($path);
	my $addr = $self->{netns}->addr($self->{host});
	$c =~ s/^server\.bind = .*$/server.bind = "$addr"/m or die 'no server.bind';
	open my $fh, '>', $path or die $!;
	print $fh $c;
	close $fh;
}

sub start {
	my ($self) = @_;
	$self->write_conf;
	my $d = $self->{dir};
	unlink "$d/lighttpd.pid";
	HookTest::run($self->{netns}->wrap($self->{host}), '/usr/sbin/lighttpd', '-f', "$d/lighttpd.conf");
	my $addr = $self->{netns}->addr($self->{host});
	for (1 .. 100) {
		my $s = IO::Socket::INET->new(PeerAddr => $addr, PeerPort => $self->{port});
		if ($s) { close $s; last }
		Time::HiRes::sleep(0.05);
	}
	$self->{running} = 1;
	$self->{pid} = undef;
	$self->{pid} = $self->pid;
	$HookTest::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::LIVE{"$self"});
	return $self;
}

sub url {
	my ($self) = @_;
	return 'http://' . $self->{netns}->addr($self->{host}) . ":$self->{port}/hooks";
}

1;
