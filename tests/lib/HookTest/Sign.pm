# SPDX-License-Identifier: ISC
# HookTest::Sign - signing test deliveries as the providers do, and the
# list of every secret and signature the suite used (record_secret), which
# t/99-secrets.t looks for in every log and database dump the suite left.
#
# HookTest re-exports these names (HookTest::stripe_sig, ...; stripe_sig,
# github_sig and standard_sig also through "use HookTest qw(...)"); the
# form and Twilio helpers are imported from here:
#   use HookTest::Sign qw(form_decode form_encode twilio_sig);
package HookTest::Sign;

use strict;
use warnings;
use Digest::SHA qw(hmac_sha256_hex hmac_sha256 hmac_sha1);
use Exporter 'import';
use File::Path ();
use HookTest::Proc;
use MIME::Base64 ();

our @EXPORT_OK = qw(record_secret stripe_sig github_sig standard_sig form_decode form_encode twilio_sig);

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

# an application/x-www-form-urlencoded body as its [name, value] pairs, in order
sub form_decode {
	my ($s) = @_;
	my @p;
	for my $kv (split /&/, $s) {
		my ($k, $v) = split /=/, $kv, 2;
		for ($k, $v) { $_ //= ''; tr/+/ /; s/%([0-9A-Fa-f]{2})/chr(hex $1)/ge }
		push @p, [$k, $v];
	}
	return @p;
}

# name => value pairs as a form body, every byte but [A-Za-z0-9_.~-] escaped
sub form_encode {
	my (@kv) = @_;
	my @out;
	while (my ($k, $v) = splice @kv, 0, 2) {
		for ($k, $v) { s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge }
		push @out, "$k=$v";
	}
	return join '&', @out;
}

# Twilio's X-Twilio-Signature: base64 HMAC-SHA1 of the URL, then (for a
# form body) each parameter's name and value, sorted by name then value,
# an exact repeat once (as providers/twilio.c and twilio-node)
sub twilio_sig {
	my ($token, $url, $body) = @_;
	my $data = $url;
	if (defined $body) {
		my %seen;
		my @p = grep { !$seen{"$_->[0]\0$_->[1]"}++ } form_decode($body);
		$data .= join '', map { $_->[0] . $_->[1] } sort { $a->[0] cmp $b->[0] || $a->[1] cmp $b->[1] } @p;
	}
	return MIME::Base64::encode_base64(hmac_sha1($data, $token), '');
}

1;
