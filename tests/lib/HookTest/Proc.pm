# SPDX-License-Identifier: ISC
# HookTest::Proc - what every part of the harness needs to run things: the
# tree's top, free ports, commands (with their output on failure), the
# unprivileged user servers run as under root, and the servers still
# running when a test script ends (%LIVE, stopped by the END block below).
#
# HookTest re-exports every name here (HookTest::run, HookTest::top,
# $HookTest::PG_USER, %HookTest::LIVE, ...).
package HookTest::Proc;

use strict;
use warnings;
use Fcntl ();
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Temp ();
use IO::Socket::INET;

our $PG_USER = 'hookinbox_test';

# Servers still running when the test script ends are stopped here, before
# File::Temp's own END block removes their directories (END blocks run in
# reverse order of definition, and File::Temp was loaded first: above).
# A server adds itself on start ($LIVE{"$self"}, weakened) and removes
# itself on stop; each has a stop method.
our %LIVE;
END {
	local $?;
	for my $obj (grep { defined } values %LIVE) {
		eval { $obj->stop($obj->isa('HookTest::Pg') ? 'immediate' : ()) };
	}
}

# a whole file, '' when it cannot be read
sub slurp {
	my ($path) = @_;
	open my $fh, '<', $path or return '';
	local $/;
	return <$fh> // '';
}

# the top of the tree: $HOOKINBOX_TOP, else three levels above this file
sub top {
	return $ENV{HOOKINBOX_TOP} // abs_path(dirname(abs_path(__FILE__)) . '/../../..');
}

sub free_port {
	my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
		or die "no free port: $!";
	my $p = $s->sockport;
	close $s;
	return $p;
}

# run a command (list), die with its output on failure
sub run {
	my (@cmd) = @_;
	my $out = `@{[ join ' ', map { shell_quote($_) } @cmd ]} 2>&1`;
	die "command failed ($?): @cmd\n$out" if $? != 0;
	return $out;
}

# run a command (list); returns (exit code, its output), whatever the code
sub run_status {
	my (@cmd) = @_;
	my $out = `@{[ join ' ', map { shell_quote($_) } @cmd ]} 2>&1`;
	return ($? >> 8, $out);
}

# write text to path, mode 0600 unless given; returns path
sub write_file {
	my ($path, $text, $mode) = @_;
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh or die "$path: $!";
	chmod $mode // 0600, $path;
	return $path;
}

sub shell_quote {
	my ($s) = @_;
	return $s if $s =~ /^[\w\/.,:=@%+-]+$/;
	$s =~ s/'/'\\''/g;
	return "'$s'";
}

# as root, commands that start postgres run as an unprivileged user
sub as_pg_user {
	my (@cmd) = @_;
	return @cmd if $> != 0;
	ensure_pg_user();
	return ('runuser', '-u', $PG_USER, '--', @cmd);
}

# Parallel jobs on a fresh machine meet here at once: one creates the
# user under a lock, the others wait for it and then see it.
sub ensure_pg_user {
	return if getpwnam($PG_USER);
	open my $lock, '>', '/tmp/hookinbox-test-useradd.lock' or die "lock: $!\n";
	flock $lock, Fcntl::LOCK_EX() or die "flock: $!\n";
	if (!getpwnam($PG_USER)) {
		system('useradd', '--system', '--no-create-home', '--shell', '/usr/sbin/nologin', $PG_USER);
	}
	close $lock;
	getpwnam($PG_USER) or die "could not create user $PG_USER\n";
}

1;
