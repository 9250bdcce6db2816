# SPDX-License-Identifier: ISC
# HookTest::Lighttpd - lighttpd running the responder (the test build,
# obj/test/hookinbox.fcgi) through mod_fastcgi, or as plain CGI, on a
# loopback port; under valgrind with $HOOKINBOX_VALGRIND.
#
#   my $h = HookTest::Lighttpd->new(dir => $dir, fcgi => $bin, config => $conf)->start;
#   $h->restart(HOOKINBOX_FAILPOINT => '...');   # with more environment
#   $h->url;                                     # http://127.0.0.1:PORT/hooks
package HookTest::Lighttpd;

use strict;
use warnings;
use HookTest::Proc;
use IO::Socket::INET;
use Scalar::Util ();
use Time::HiRes ();

# o: dir, fcgi (path), config (hookinbox.conf), procs, env (hash), port
sub new {
	my ($class, %o) = @_;
	my $self = bless {%o}, $class;
	$self->{port} //= HookTest::Proc::free_port();
	$self->{procs} //= 2;
	$self->{env} //= {};
	return $self;
}

sub write_conf {
	my ($self) = @_;
	my $d = $self->{dir};
	my %env = (HOOKINBOX_CONFIG => $self->{config}, %{ $self->{env} });
	for my $k (qw(ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS)) {
		$env{$k} //= $ENV{$k} if defined $ENV{$k};
	}
	my $envs = join(",\n\t\t\t", map { "\"$_\" => \"$env{$_}\"" } sort keys %env);
	my $bin = $self->{fcgi};
	if ($ENV{HOOKINBOX_VALGRIND}) {
		# one valgrind log per responder process, checked by the test that owns it
		$bin = "/usr/bin/valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect "
			. "--errors-for-leak-kinds=definite,indirect --error-exitcode=42 "
			. "--log-file=$d/valgrind.%p.log $bin";
	}
	my $common = <<"CONF";
server.document-root = "$d"
server.bind = "127.0.0.1"
server.port = $self->{port}
server.errorlog = "$d/lighttpd.error.log"
server.breakagelog = "$d/responder.log"
server.pid-file = "$d/lighttpd.pid"
server.max-request-size = 131072
# the tests pause for seconds between requests on one keep-alive
# connection: a server closing it mid-pause races the next POST, which
# HTTP::Tiny does not retry (not idempotent)
server.max-keep-alive-idle = 300
CONF
	open my $fh, '>', "$d/lighttpd.conf" or die $!;
	if ($self->{cgi}) {
		# plain CGI: /hooks/<endpoint> runs the responder once per request
		my $cgienv = join(",\n\t", map { "\"$_\" => \"$env{$_}\"" } sort keys %env);
		print $fh $common, <<"CONF";
server.modules += ("mod_alias", "mod_cgi", "mod_setenv")
alias.url = ( "/hooks" => "$self->{fcgi}" )
cgi.assign = ( "" => "" )
setenv.add-environment = (
	$cgienv
)
CONF
		close $fh;
		return;
	}
	print $fh $common, <<"CONF";
server.modules += ("mod_fastcgi")
fastcgi.server = ( "/hooks/" => ((
		"socket" => "$d/hookinbox.@{[ ++$self->{generation} ]}.sock",
		"bin-path" => "$bin -c $self->{config}",
		"check-local" => "disable",
		# all of them from the start: lighttpd otherwise starts 4 and
		# adds more only as requests queue up
		"min-procs" => $self->{procs},
		"max-procs" => $self->{procs},
		"bin-environment" => (
			$envs
		),
)))
CONF
	close $fh;
}

sub start {
	my ($self) = @_;
	$self->write_conf;
	my $d = $self->{dir};
	unlink "$d/lighttpd.pid";
	# a fresh socket name each start: responders of the last run may still be draining
	eval { HookTest::Proc::run('/usr/sbin/lighttpd', '-f', "$d/lighttpd.conf") };
	if ($@) {
		my $log = '';
		if (open my $fh, '<', "$d/lighttpd.error.log") { local $/; $log = <$fh> }
		die $@ . "lighttpd error log:\n$log";
	}
	for (1 .. 100) {
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $self->{port});
		if ($s) { close $s; last }
		Time::HiRes::sleep(0.05);
	}
	# and for its pid file (pid() reads it): nothing orders its writing
	# with the port's first answer
	for (1 .. 100) {
		last if -s "$d/lighttpd.pid";
		Time::HiRes::sleep(0.05);
	}
	$self->{running} = 1;
	# remembered now: File::Temp may remove the pid file before we stop
	$self->{pid} = undef;
	$self->{pid} = $self->pid;
	$HookTest::Proc::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::Proc::LIVE{"$self"});
	return $self;
}

sub pid {
	my ($self) = @_;
	return $self->{pid} if $self->{pid};
	open my $fh, '<', "$self->{dir}/lighttpd.pid" or return;
	my $p = <$fh>;
	chomp $p;
	return $p;
}

# this lighttpd's responder processes: its children running the responder
sub responders {
	my ($self) = @_;
	my $lighttpd = $self->pid or return;
	my @pids;
	for my $proc (glob '/proc/[0-9]*') {
		my ($pid) = $proc =~ m{(\d+)$};
		open my $st, '<', "$proc/stat" or next;
		my ($ppid) = (<$st> // '') =~ /\)\s+\S+\s+(\d+)/ or next;
		next unless $ppid == $lighttpd;
		open my $cl, '<', "$proc/cmdline" or next;
		my $cmd = <$cl> // '';
		push @pids, $pid if index($cmd, $self->{fcgi}) >= 0;
	}
	return sort { $a <=> $b } @pids;
}

# Waits (up to $secs) for all the responders to be started and to have
# SIGHUP blocked (bit 0 of SigBlk in some thread), as a responder does
# first: until then a SIGHUP ends it.  lighttpd answers its port before
# its children get there, and a loaded or sanitized build takes a while.
sub signalable_responders {
	my ($self, $secs) = @_;
	my $blocked = sub {
		for my $status (glob "/proc/$_[0]/task/*/status") {
			open my $st, '<', $status or next;
			my ($blk) = join('', <$st>) =~ /^SigBlk:\s*([0-9a-f]+)/m or next;
			return 1 if hex(substr($blk, -8)) & 1;
		}
		return 0;
	};
	my $until = Time::HiRes::time() + ($secs // 60);
	my @pids;
	do {
		@pids = $self->responders;
		return @pids if @pids == $self->{procs} && !grep { !$blocked->($_) } @pids;
		Time::HiRes::sleep(0.05);
	} while (Time::HiRes::time() < $until);
	return @pids;
}

sub stop {
	my ($self) = @_;
	return unless $self->{running};
	my $pid = $self->pid;
	if ($pid) {
		kill 'TERM', $pid;
		for (1 .. 200) { last unless kill 0, $pid; Time::HiRes::sleep(0.05) }
	}
	# A responder lighttpd was still (re)spawning as it stopped is not
	# stopped by it: find this instance's by the -c on their command line.
	if ($self->{config} && !$self->{cgi}) {
		my @left = grep { $_ != $$ } split ' ', `pgrep -f -- '-c \Q$self->{config}\E\$' 2>/dev/null`;
		kill 'TERM', @left if @left;
		for (1 .. 100) { last unless grep { kill 0, $_ } @left; Time::HiRes::sleep(0.05) }
		kill 'KILL', grep { kill 0, $_ } @left;
	}
	$self->{running} = 0;
	$self->{pid} = undef;
	delete $HookTest::Proc::LIVE{"$self"};
}

sub restart {
	my ($self, %env) = @_;
	$self->stop;
	$self->{env} = { %{ $self->{env} }, %env };
	delete $self->{env}{$_} for grep { !defined $self->{env}{$_} } keys %{ $self->{env} };
	$self->start;
}

sub url { my ($self) = @_; return "http://127.0.0.1:$self->{port}/hooks" }

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

1;
