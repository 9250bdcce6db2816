# SPDX-License-Identifier: ISC
# What one unauthenticated request can cost the responder, per provider:
# the largest body (1 MB) with the signature header full of well-formed
# but wrong entries (64 where the scheme allows several, counting
# a timestamp entry), a current
# timestamp, two secrets per endpoint (a rotation).  The figures are the
# responder's own "ms" of each rejected request (median of 5), printed for
# docs/security.md.  Standard Webhooks v1a: an Ed25519 check hashes the whole
# body again per signature, so only the first few are checked; 64 entries
# cost 26 times one before that bound, and now no more than a few times.
use strict;
use warnings;
use Test::More;
use HookTest;
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(time);

my $tmp = File::Temp::tempdir(CLEANUP => 1);
my @ed_pub;
for my $i (0, 1) {
	system("openssl genpkey -algorithm ed25519 -out $tmp/ed$i.pem 2>/dev/null") == 0 or BAIL_OUT('openssl genpkey');
	push @ed_pub, 'whpk_' . encode_base64(substr(`openssl pkey -in $tmp/ed$i.pem -pubout -outform DER`, -32), '');
}
my $std = 'whsec_' . encode_base64('k' x 24, '');
my %ep = (
	stripe => { provider => 'stripe', secrets => ['whsec_a_0123456789', 'whsec_b_0123456789'] },
	github => { provider => 'github', secrets => ['gh-a-0123456789', 'gh-b-0123456789'] },
	gitlab => { provider => 'gitlab', secrets => ['gl-a-0123456789', 'gl-b-0123456789'] },
	shopify => { provider => 'shopify', secrets => ['shp-a-0123456789', 'shp-b-0123456789'] },
	slack => { provider => 'slack', secrets => ['sl-a-0123456789', 'sl-b-0123456789'] },
	paddle => { provider => 'paddle', secrets => ['pdl-a-0123456789', 'pdl-b-0123456789'] },
	square => { provider => 'square', secrets => ['sq-a-0123456789', 'sq-b-0123456789'],
		public_url => 'https://hooks.example.com/square' },
	twilio => { provider => 'twilio', secrets => ['tw-a-0123456789', 'tw-b-0123456789'],
		public_url => 'https://hooks.example.com/twilio' },
	standard => { provider => 'standard', secrets => [$std, $std] },
	svix => { provider => 'svix', secrets => [$std, $std] },
	'standard-ed' => { provider => 'standard', secrets => [@ed_pub] },
	acme => { provider => 'hmac', header => 'X-Acme-Signature', algorithm => 'sha512', encoding => 'hex',
		id_header => 'X-Acme-Delivery', secrets => ['acme-a-0123456789', 'acme-b-0123456789'] },
);
my $t = HookTest->new(endpoints => \%ep, procs => 1);

my $MB = 1024 * 1024;
my $json = '{"a":"' . ('x' x ($MB - 8)) . '"}';
my $form = join('&', map { sprintf('p%03d=%s', $_, 'v' x 1040) } 1 .. 1000);
my $hex = 'ab' x 32;
my $b64 = encode_base64('z' x 32, '');
# an Ed25519 signature whose S is below the group order (else refused before hashing)
my $b64_64 = encode_base64(('z' x 63) . "\0", '');
sub many { my ($n, $sep, $e) = @_; return join($sep, ($e) x $n) }

# the worst unsigned request for each endpoint: [endpoint, label, body, headers]
sub cases {
	my $now = int(time);
	my %sh = ('webhook-id' => 'msg_x', 'webhook-timestamp' => $now);
	return (
		['stripe', '63 v1', $json, { 'Stripe-Signature' => "t=$now," . many(63, ',', "v1=$hex") }],
		['github', 'one', $json, { 'X-Hub-Signature-256' => "sha256=$hex", 'X-GitHub-Delivery' => 'd',
			'X-GitHub-Event' => 'push' }],
		['gitlab', 'one', $json, { 'X-Gitlab-Token' => 'wrong', 'X-Gitlab-Event-UUID' => 'u' }],
		['shopify', 'one', $json, { 'X-Shopify-Hmac-Sha256' => $b64, 'X-Shopify-Webhook-Id' => 'w' }],
		['slack', 'one', $json, { 'X-Slack-Signature' => "v0=$hex", 'X-Slack-Request-Timestamp' => $now }],
		['paddle', '63 h1', $json, { 'Paddle-Signature' => "ts=$now;" . many(63, ';', "h1=$hex") }],
		['square', 'one', $json, { 'x-square-hmacsha256-signature' => $b64 }],
		['twilio', 'form, 1000 params', $form, { 'X-Twilio-Signature' => encode_base64('z' x 20, ''),
			'Content-Type' => 'application/x-www-form-urlencoded', 'I-Twilio-Idempotency-Token' => 'i' }],
		['standard', '64 v1', $json, { %sh, 'webhook-signature' => many(64, ' ', "v1,$b64") }],
		['svix', '64 v1', $json, { 'svix-id' => 'msg_x', 'svix-timestamp' => $now,
			'svix-signature' => many(64, ' ', "v1,$b64") }],
		['standard-ed', 'one v1a', $json, { %sh, 'webhook-signature' => "v1a,$b64_64" }],
		['standard-ed', '64 v1a', $json, { %sh, 'webhook-signature' => many(64, ' ', "v1a,$b64_64") }],
		['acme', 'one', $json, { 'X-Acme-Signature' => 'ab' x 64, 'X-Acme-Delivery' => 'd' }],
	);
}

# the responder's ms of the last request line for endpoint
sub last_ms {
	my ($ep) = @_;
	my @l = grep { /event=request / && / endpoint=\Q$ep\E / } split /\n/, $t->responder_log;
	return $l[-1] =~ / ms=([0-9.]+)/ ? $1 : undef;
}

my %median;
for my $c (cases()) {
	my ($ep, $label) = @$c;
	my @ms;
	for my $round (1 .. 5) {
		my ($e, undef, $body, $h) = @{ (grep { $_->[0] eq $ep && $_->[1] eq $label } cases())[0] };
		my $r = $t->post($e, $body, $h);
		is($r->{status}, 401, "$ep ($label): unsigned request refused") if $round == 1;
		push @ms, last_ms($ep);
	}
	@ms = sort { $a <=> $b } @ms;
	$median{"$ep|$label"} = $ms[2];
	diag(sprintf("%-12s %-22s 1 MB body: %7.2f ms (median of 5)", $ep, $label, $ms[2]));
}
is($t->sql('select count(*) from hookinbox.inbox'), 0, 'nothing stored');
my ($one, $many) = @median{'standard-ed|one v1a', 'standard-ed|64 v1a'};
cmp_ok($many, '<', 8 * $one, "64 v1a entries cost less than 8 times one ($many ms against $one ms)");
done_testing();
