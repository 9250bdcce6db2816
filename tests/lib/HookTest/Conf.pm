# SPDX-License-Identifier: ISC
# HookTest::Conf - the hookinbox.conf and secret files of a test, from
# HookTest->new's options (HookTest's write_config and write_secret call
# these).  Each section is written once, with its keys sorted.
package HookTest::Conf;

use strict;
use warnings;
use File::Path ();
use HookTest::Sign;

# a secret file $dir/secrets/$name (0600, written whole then renamed) holding
# @secrets one a line; returns its path
sub write_secret {
	my ($dir, $name, @secrets) = @_;
	my $path = "$dir/secrets/$name";
	File::Path::make_path("$dir/secrets");
	HookTest::Sign::record_secret(@secrets);
	open my $fh, '>', "$path.tmp" or die $!;
	print $fh map { "$_\n" } @secrets;
	close $fh;
	chmod 0600, "$path.tmp";
	rename "$path.tmp", $path or die $!;
	return $path;
}

# The text of the configuration for options $o (see HookTest->new):
# $conninfo->(role) is the database's conninfo for a role, $secret->(name,
# @secrets) writes a secret file and returns its path.
sub text {
	my ($o, $conninfo, $secret) = @_;
	my $c = "; written by tests/lib/HookTest.pm\n[database]\nconninfo = "
		. $conninfo->($o->{intake_role} // 'hookinbox_intake') . "\n";
	$c .= "[intake]\n" . join('', map { "$_ = $o->{intake}{$_}\n" } sort keys %{ $o->{intake} // {} });
	if ($o->{worker} || $o->{worker_role}) {
		$c .= "[worker]\n";
		$c .= "conninfo = " . $conninfo->($o->{worker_role}) . "\n" if $o->{worker_role};
		$c .= join('', map { "$_ = $o->{worker}{$_}\n" } sort keys %{ $o->{worker} // {} });
	}
	for my $name (sort keys %{ $o->{endpoints} // {} }) {
		my %e = %{ $o->{endpoints}{$name} };
		my $secrets = delete $e{secrets} // ['test-secret'];
		$e{secret_file} //= $secret->("ep-$name", @$secrets);
		$c .= "[endpoint $name]\n" . join('', map { "$_ = $e{$_}\n" } sort keys %e);
	}
	for my $name (sort keys %{ $o->{routes} // {} }) {
		my %r = %{ $o->{routes}{$name} };
		if (my $s = delete $r{secrets}) {
			$r{secret_file} = $secret->("route-$name", @$s);
		}
		$c .= "[route $name]\n" . join('', map { "$_ = $r{$_}\n" } sort keys %r);
	}
	$c .= $o->{extra_config} // '';
	return $c;
}

1;
