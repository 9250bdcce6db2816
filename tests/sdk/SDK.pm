# SPDX-License-Identifier: ISC
# SDK - the providers' official Node.js SDKs, for the cross-check tests
#
#   use lib "$top/tests/sdk";
#   use SDK;
#   my $why = SDK::install();          # undef when ready, else why not (for skip)
#   my $res = SDK::run('sign', [ { provider => 'stripe', secret => ..., body => ... } ]);
#
# install() runs `npm ci` in tests/sdk once (under a lock, so tests running
# in parallel share one install) from the committed package-lock.json, and
# does nothing when node_modules already matches it.  run() feeds the cases
# to tests/sdk/sdk.mjs as JSON and returns its JSON answer.
package SDK;

use strict;
use warnings;
use Fcntl qw(:flock);
use File::Temp qw(tempfile);
use JSON::PP;
use HookTest ();

sub dir { return HookTest::top() . '/tests/sdk' }

sub have {
	my ($prog) = @_;
	for my $d (split /:/, $ENV{PATH} // '') {
		return "$d/$prog" if -x "$d/$prog";
	}
	return;
}

# undef when the SDKs are installed and usable; otherwise the reason
sub install {
	my $d = dir();
	have('node') or return 'node is not installed (tools/install-deps installs nodejs)';
	have('npm') or return 'npm is not installed (it ships with nodejs)';
	my $v = `node -e 'process.stdout.write(process.versions.node)' 2>/dev/null`;
	return "node $v is too old (18 or newer)" unless $v =~ /^(\d+)/ && $1 >= 18;
	open my $lock, '>', "$d/.install.lock" or return "cannot write $d/.install.lock: $!";
	flock $lock, LOCK_EX or return "cannot lock $d/.install.lock: $!";
	my $stamp = "$d/node_modules/.package-lock.json";
	if (!-e $stamp || -M $stamp > -M "$d/package-lock.json") {
		my $out = `cd '$d' && npm ci --no-audit --no-fund --loglevel=error 2>&1`;
		if ($? != 0) {
			$out =~ s/\s+$//;
			return "npm ci failed in tests/sdk: " . substr($out, -600);
		}
	}
	my $check = `cd '$d' && echo '[]' | node sdk.mjs sign 2>&1`;
	return "tests/sdk/sdk.mjs does not load: $check" if $? != 0;
	close $lock;
	return undef;
}

# run sdk.mjs sign|verify|fields over the cases; dies when it fails
sub run {
	my ($mode, $cases) = @_;
	my $d = dir();
	my ($fh, $in) = tempfile(UNLINK => 1);
	print $fh encode_json($cases);
	close $fh;
	# numbers' source text in JSON.parse (node 20 needs the flag; later ones have it)
	my $flags = `node --harmony-json-parse-with-source -e 0 2>&1` eq '' ? '--harmony-json-parse-with-source' : '';
	my $out = `cd '$d' && node $flags sdk.mjs $mode < '$in' 2>&1`;
	die "sdk.mjs $mode failed ($?): $out" if $? != 0;
	return decode_json($out);
}

1;
