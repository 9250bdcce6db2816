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
use Digest::SHA qw(hmac_sha256_hex hmac_sha256 hmac_sha1 hmac_sha1_hex sha1);
use Exporter 'import';
use File::Path ();
use HookTest::Proc;
use MIME::Base64 ();
use File::Temp ();

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

# ---- the batch class and Mailgun (tests/t/30-providers-batch.t)

# Adyen: the base64 HMAC-SHA256, keyed with the hex key's bytes, of an
# item's colon-joined signed fields (the library's HmacValidator)
sub adyen_item_sig {
	my ($hexkey, %f) = @_;
	my $data = join ':', map { $f{$_} // '' } qw(pspReference originalReference
		merchantAccountCode merchantReference value currency eventCode success);
	return MIME::Base64::encode_base64(hmac_sha256($data, pack('H*', $hexkey)), '');
}

# an Adyen NotificationRequestItem's JSON for the fields %f, signed with $hexkey
# ($sig overrides the signature; '' leaves additionalData out)
sub adyen_item {
	my ($hexkey, $sig, %f) = @_;
	$sig //= adyen_item_sig($hexkey, %f);
	my $ad = $sig eq '' ? '' : qq("additionalData":{"hmacSignature":"$sig"},);
	return qq({"NotificationRequestItem":{$ad"amount":{"currency":"$f{currency}","value":$f{value}},)
		. qq("eventCode":"$f{eventCode}","eventDate":"2024-05-03T10:00:00+02:00",)
		. qq("merchantAccountCode":"$f{merchantAccountCode}","merchantReference":"$f{merchantReference}",)
		. qq("originalReference":"@{[ $f{originalReference} // '' ]}","pspReference":"$f{pspReference}",)
		. qq("reason":"","success":"$f{success}"}});
}

# SendGrid: a P-256 key pair made with the openssl command in $dir: (PEM
# private key file, verification key as SendGrid shows it: base64 DER SPKI,
# private key as hookinbox-send takes it: base64 DER PKCS#8)
sub ec_keypair {
	my ($dir, $name) = @_;
	my $pem = "$dir/$name.pem";
	system("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $pem 2>/dev/null") == 0
		or die 'openssl genpkey EC';
	my $pub = MIME::Base64::encode_base64(`openssl pkey -in $pem -pubout -outform DER`, '');
	my $priv = MIME::Base64::encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $pem -outform DER`, '');
	return ($pem, $pub, $priv);
}

# the SendGrid headers for $body signed at $ts with the PEM key $pem
sub sendgrid_headers {
	my ($pem, $body, $ts) = @_;
	$ts //= time();
	my $dir = File::Temp::tempdir(CLEANUP => 1);
	open my $fh, '>', "$dir/m" or die $!;
	print $fh $ts . $body;
	close $fh;
	my $sig = `openssl dgst -sha256 -sign $pem $dir/m`;
	return ('X-Twilio-Email-Event-Webhook-Signature' => MIME::Base64::encode_base64($sig, ''),
		'X-Twilio-Email-Event-Webhook-Timestamp' => $ts);
}

# HubSpot v3: headers for a POST of $body to $uri at $ms (milliseconds)
sub hubspot_headers {
	my ($secret, $uri, $body, $ms) = @_;
	$ms //= time() * 1000;
	return ('X-HubSpot-Signature-v3' => MIME::Base64::encode_base64(hmac_sha256("POST$uri$body$ms", $secret), ''),
		'X-HubSpot-Request-Timestamp' => $ms, 'X-HubSpot-Signature-Version' => 'v3');
}

# Mailgun: a body carrying $event_data (JSON text) signed with $token at $ts
sub mailgun_body {
	my ($key, $token, $event_data, $ts) = @_;
	$ts //= time();
	my $sig = hmac_sha256_hex("$ts$token", $key);
	return qq({"signature":{"timestamp":"$ts","token":"$token","signature":"$sig"},"event-data":$event_data});
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
