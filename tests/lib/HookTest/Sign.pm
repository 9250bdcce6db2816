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
use Digest::SHA qw(hmac_sha256_hex hmac_sha256 hmac_sha1 hmac_sha1_hex sha1);
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

# ---- the providers of tests/data/hmac2-vectors.mjs; each returns the headers (a list of
# pairs), Braintree the form body

# a form value, percent-encoded as a browser does (space as '+')
sub form_escape {
	my ($v) = @_;
	$v =~ s/([^A-Za-z0-9_.~ -])/sprintf('%%%02X', ord $1)/ge;
	$v =~ tr/ /+/;
	return $v;
}

# Braintree: "bt_signature=<public>|<hex HMAC-SHA1 keyed with SHA-1(private key)>&bt_payload=…"
sub braintree_body {
	my ($private, $payload_b64, $public) = @_;
	my $sig = ($public // 'pubkey') . '|' . hmac_sha1_hex($payload_b64, sha1($private));
	return 'bt_signature=' . form_escape($sig) . '&bt_payload=' . form_escape($payload_b64);
}

# Trello: base64 HMAC-SHA1 of the body followed by the callback URL
sub trello_sig {
	my ($secret, $body, $url) = @_;
	return ('X-Trello-Webhook' => MIME::Base64::encode_base64(hmac_sha1($body . $url, $secret), ''));
}

# Mandrill: base64 HMAC-SHA1 of the URL and each POST name and value, sorted by name
sub mandrill_sig {
	my ($secret, $url, %params) = @_;
	my $data = $url . join('', map { $_ . $params{$_} } sort keys %params);
	return ('X-Mandrill-Signature' => MIME::Base64::encode_base64(hmac_sha1($data, $secret), ''));
}

# X (Twitter) Account Activity: sha256=<base64 HMAC-SHA256 of the body>
sub twitter_sig {
	my ($secret, $body) = @_;
	return ('x-twitter-webhooks-signature' => 'sha256=' . MIME::Base64::encode_base64(hmac_sha256($body, $secret), ''));
}

sub dropbox_sig {
	my ($secret, $body) = @_;
	return ('X-Dropbox-Signature' => hmac_sha256_hex($body, $secret));
}

sub asana_sig {
	my ($secret, $body) = @_;
	return ('X-Hook-Signature' => hmac_sha256_hex($body, $secret));
}

sub xero_sig {
	my ($secret, $body) = @_;
	return ('x-xero-signature' => MIME::Base64::encode_base64(hmac_sha256($body, $secret), ''));
}

# DocuSign: X-DocuSign-Signature-<n>, one per Connect key
sub docusign_sig {
	my ($body, @secrets) = @_;
	my $n = 0;
	return map { ('X-DocuSign-Signature-' . ++$n => MIME::Base64::encode_base64(hmac_sha256($body, $_), '')) } @secrets;
}

# Twitch EventSub: sha256=<hex HMAC-SHA256 of message id, timestamp, body>
sub twitch_sig {
	my ($secret, $id, $body, %o) = @_;
	my @t = gmtime(int($o{time} // time()));
	my $ts = sprintf('%04d-%02d-%02dT%02d:%02d:%02d.123456789Z', $t[5] + 1900, $t[4] + 1, @t[3, 2, 1, 0]);
	return ('Twitch-Eventsub-Message-Id' => $id, 'Twitch-Eventsub-Message-Timestamp' => $ts,
		'Twitch-Eventsub-Message-Type' => $o{type} // 'notification',
		'Twitch-Eventsub-Message-Signature' => 'sha256=' . hmac_sha256_hex($id . $ts . $body, $secret));
}

1;
