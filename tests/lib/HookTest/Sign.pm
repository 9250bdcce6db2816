# SPDX-License-Identifier: ISC
# HookTest::Sign - signing test deliveries as the providers do, and the
# list of every secret and signature the suite used (record_secret), which
# t/99-secrets.t looks for in every log and database dump the suite left.
#
# HookTest re-exports these names (HookTest::stripe_sig, ...; stripe_sig,
# github_sig and standard_sig also through "use HookTest qw(...)").
package HookTest::Sign;

use strict;
use warnings;
use Digest::SHA qw(hmac_sha256_hex hmac_sha256);
use File::Path ();
use HookTest::Proc;
use MIME::Base64 ();

sub record_secret {
	my (@v) = @_;
	my $d = HookTest::Proc::top() . '/tests/tmp';
	File::Path::make_path($d);
	open my $fh, '>>', "$d/secrets.list" or die $!;
	print $fh map { "$_\n" } grep { defined && length($_) >= 8 } @v;
	close $fh;
}

sub stripe_sig {
	my ($secret, $body, $t) = @_;
	$t //= time();
	$t = int($t);
	return "t=$t,v1=" . hmac_sha256_hex("$t.$body", $secret);
}

sub github_sig {
	my ($secret, $body) = @_;
	return 'sha256=' . hmac_sha256_hex($body, $secret);
}

# Standard Webhooks: secret "whsec_<base64>"; returns the header hash
sub standard_sig {
	my ($secret, $id, $body, $t) = @_;
	$t = int($t // time());
	my $key = $secret =~ /^whsec_(.*)$/ ? MIME::Base64::decode_base64($1) : $secret;
	my $sig = MIME::Base64::encode_base64(hmac_sha256("$id.$t.$body", $key), '');
	return ('webhook-id' => $id, 'webhook-timestamp' => $t, 'webhook-signature' => "v1,$sig");
}

1;
