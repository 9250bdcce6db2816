# SPDX-License-Identifier: ISC
# Model::Providers - the endpoints of the model's stack and how each
# provider signs a delivery, as its documentation (and tests/t/30) says.
#
# endpoint name => { provider, secret, config keys, sign => sub (secret, body, %o)
# returning (headers, query string or undef) }
package Model::Providers;

use strict;
use warnings;
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex hmac_sha1 sha256_hex);
use MIME::Base64 qw(encode_base64);
use HookTest qw(stripe_sig github_sig);
use HookTest::Sign qw(form_decode form_encode twilio_sig);

our $TWILIO_URL = 'https://hooks.example.test/in/tw';
our $HUBSPOT_URL = 'https://hooks.example.test/in/hs';
# tp's signed content (docs/providers.md, "provider = hmac with a
# template"): the delivery id header, the timestamp and the body
our $TP_TEMPLATE = '{header:X-Tp-Delivery}.{timestamp}.{body}';

our %EP = (
	# a rotation under way: the new secret (rotating) configured first,
	# Stripe still signing with the old one (secret)
	st => { provider => 'stripe', secret => 'whsec_model_stripe_0a1b2c3d4e5f', account => 'acct_model',
		rotating => 'whsec_model_stripe_next_5a6b7c8d9e0f', environment => 'live',
		sign => sub {
			my ($s, $b, %o) = @_;
			return { 'Stripe-Signature' => stripe_sig($s, $b, $o{now}) };
		} },
	# a second endpoint of the same Stripe account: Stripe sends each event
	# to both, and each stores and routes its own (route ev)
	st2 => { provider => 'stripe', secret => 'whsec_model_stripe2_9f8e7d6c5b4a', account => 'acct_model',
		environment => 'live',
		sign => sub {
			my ($s, $b, %o) = @_;
			return { 'Stripe-Signature' => stripe_sig($s, $b, $o{now}) };
		} },
	gh => { provider => 'github', secret => 'gh-model-secret-0123456789ab',
		sign => sub {
			my ($s, $b, %o) = @_;
			return { 'X-Hub-Signature-256' => github_sig($s, $b), 'X-GitHub-Delivery' => $o{id},
				'X-GitHub-Event' => ($o{type} // 'ping') =~ s/\..*//r };
		} },
	sh => { provider => 'shopify', secret => 'shpss_model_0123456789abcdef',
		sign => sub {
			my ($s, $b, %o) = @_;
			return { 'X-Shopify-Hmac-Sha256' => encode_base64(hmac_sha256($b, $s), ''),
				'X-Shopify-Webhook-Id' => $o{id}, 'X-Shopify-Topic' => $o{type},
				'X-Shopify-Triggered-At' => '2026-05-01T12:00:00.250Z' };
		} },
	tw => { provider => 'twilio', secret => 'twilio-model-token-0123456789', public_url => $TWILIO_URL,
		sign => sub {
			my ($s, $b, %o) = @_;
			return { 'I-Twilio-Idempotency-Token' => $o{id},
				'X-Twilio-Signature' => twilio_sig($s, $TWILIO_URL, $b) };
		} },
	ac => { provider => 'hmac', secret => 'acme-model-secret-0123456789', header => 'X-Acme-Signature',
		algorithm => 'sha256', encoding => 'hex', prefix => 'sha256=', id_field => 'id',
		type_field => 'type', object_field => 'obj',
		sign => sub {
			my ($s, $b, %o) = @_;
			return { 'X-Acme-Signature' => 'sha256=' . hmac_sha256_hex($b, $s) };
		} },
	# generic hmac with a template that signs the delivery id header: the
	# id is signed, so no body dedup (two events may share a body) and a
	# captured request under another id is refused.  signed_id: the id the
	# signature was made for, when the header says another (a forgery)
	tp => { provider => 'hmac', secret => 'tp-model-secret-0123456789', header => 'X-Tp-Signature',
		prefix => 'v1=', id_header => 'X-Tp-Delivery', type_field => 'type', object_field => 'obj',
		signed_content => $TP_TEMPLATE, timestamp_header => 'X-Tp-Timestamp',
		sign => sub {
			my ($s, $b, %o) = @_;
			my $ts = int($o{now} // time);
			my $sid = $o{signed_id} // $o{id};
			return { 'X-Tp-Signature' => 'v1=' . hmac_sha256_hex("$sid.$ts.$b", $s),
				'X-Tp-Timestamp' => $ts, 'X-Tp-Delivery' => $o{id} };
		} },
	# a provider batch (fcgi/batchin.c): HubSpot's v3 signature over the
	# method, public_url, the body and a millisecond timestamp; each event of
	# the JSON array its own row under subscriptionId:eventId, the answer
	# the intake ids in order
	hs => { provider => 'hubspot', secret => 'hubspot-model-secret-0123456789', public_url => $HUBSPOT_URL,
		sign => sub {
			my ($s, $b, %o) = @_;
			my %h = HookTest::Sign::hubspot_headers($s, $HUBSPOT_URL, $b, int(($o{now} // time) * 1000));
			return \%h;
		} },
);

# HookTest->new's endpoints => {...}
sub endpoints {
	my %e;
	for my $n (keys %EP) {
		my %c = %{ $EP{$n} };
		delete $c{sign};
		$c{secrets} = [(defined $c{rotating} ? delete $c{rotating} : ()), delete $c{secret}];
		$e{$n} = \%c;
	}
	return \%e;
}

# headers and query for a delivery; bad => sign with a wrong secret, or
# (Stripe) forge => how a captured or forged request differs from a valid
# one: 'stale' or 'future' (the right secret, a timestamp 400 s outside
# the 300 s window), 'truncated' (the right MAC cut to its first 16
# bytes), 'empty' (v1= with no MAC)
sub sign {
	my ($ep, $body, %o) = @_;
	my $e = $EP{$ep} or die "no endpoint $ep";
	my $forge = $o{forge} // '';
	my $secret = $o{bad} && !$forge ? $e->{secret} . '-wrong' : $e->{secret};
	my $now = $o{now} // time;
	$o{now} = $now - 400 if $forge eq 'stale';
	$o{now} = $now + 400 if $forge eq 'future';
	my ($h, $q) = $e->{sign}->($secret, $body, %o);
	if ($forge eq 'truncated' || $forge eq 'empty') {
		die "forge $forge: Stripe only" unless $e->{provider} eq 'stripe';
		$h->{'Stripe-Signature'} =~ s/v1=([0-9a-f]{32})[0-9a-f]{32}/$forge eq 'empty' ? 'v1=' : "v1=$1"/e;
	}
	HookTest::record_secret($secret) if $o{bad};
	$h->{'Content-Type'} = $body =~ /^\s*[\{\[]/ ? 'application/json' : 'application/x-www-form-urlencoded';
	delete $h->{$_} for grep { !defined $h->{$_} } keys %$h;
	return ($h, $q);
}

1;
