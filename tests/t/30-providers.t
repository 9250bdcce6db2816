# SPDX-License-Identifier: ISC
# Every provider through lighttpd + the responder + PostgreSQL: a valid
# delivery is stored with the envelope docs/providers.md promises, a
# redelivery (signed with the endpoint's other secret) is the same row, a
# wrong secret and stale or future timestamps are refused with nothing
# stored, and for providers that do not sign their delivery id a replayed
# body under a fresh id is a duplicate.  Then the providers' official SDKs
# (tests/sdk, from the npm registry) sign deliveries that the responder must
# accept.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig github_sig standard_sig);
use HookTest::Sign qw(form_encode twilio_sig);
use JSON::PP;
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex hmac_sha1 hmac_sha512 sha256_hex);
use MIME::Base64 qw(encode_base64 decode_base64);
use File::Temp qw(tempdir);
use lib HookTest::top() . '/tests/sdk';
use SDK;

my $PUBLIC = 'https://hooks.example.test/in/tw';	# Twilio's URL, as behind a proxy
my $SQUARE_URL = 'https://hooks.example.test/in/square?src=sq';	# Square's notification URL, as registered
my $std_key = 'whsec_' . encode_base64('standard-key-0123456789', '');
my $std_key2 = 'whsec_' . encode_base64('standard-key-abcdefghij', '');
my $svix_key = 'whsec_' . encode_base64('svix-key-0123456789abcd', '');
my $svix_key2 = 'whsec_' . encode_base64('svix-key-abcdefghijklmn', '');

# Ed25519 keys for Standard Webhooks v1a, made with the openssl command
my $tmp = tempdir(CLEANUP => 1);
my (@ed_priv, @ed_pub);
for my $i (0, 1) {
	system("openssl genpkey -algorithm ed25519 -out $tmp/ed$i.pem 2>/dev/null") == 0 or BAIL_OUT('openssl genpkey ed25519');
	push @ed_priv, "$tmp/ed$i.pem";
	push @ed_pub, 'whpk_' . encode_base64(substr(`openssl pkey -in $tmp/ed$i.pem -pubout -outform DER`, -32), '');
}

my %secrets = (
	stripe => ['whsec_stripe_old_0a1b2c3d4e', 'whsec_stripe_new_5f6a7b8c9d'],
	github => ['gh-secret-old-0123456789', 'gh-secret-new-9876543210'],
	standard => [$std_key, $std_key2],
	'standard-ed' => [@ed_pub],
	svix => [$svix_key, $svix_key2],
	acme => ['acme-secret-old-0123456', 'acme-secret-new-6543210'],
	acme2 => ['acme2-secret-old-abcdef', 'acme2-secret-new-fedcba'],
	shopify => ['shpss_old_0123456789abcdef', 'shpss_new_fedcba9876543210'],
	slack => ['slack-signing-old-0123456789', 'slack-signing-new-9876543210'],
	paddle => ['pdl_ntfset_old_0123456789', 'pdl_ntfset_new_9876543210'],
	twilio => ['twilio-auth-token-old-0123', 'twilio-auth-token-new-3210'],
	gitlab => ['gitlab-token-old-0123456789', 'gitlab-token-new-9876543210'],
	square => ['sq-sigkey-old-0123456789ab', 'sq-sigkey-new-ba9876543210'],
);
my %extra = (
	acme => { provider => 'hmac', header => 'X-Acme-Signature', algorithm => 'sha256', encoding => 'hex',
		prefix => 'sha256=', id_header => 'X-Acme-Delivery', type_field => 'type',
		object_field => 'data.object.id', version_field => 'created' },
	acme2 => { provider => 'hmac', header => 'X-Acme2-Sig', algorithm => 'sha512', encoding => 'base64',
		id_field => 'event.id', type_header => 'X-Acme2-Event', version_field => 'event.at' },
	twilio => { public_url => $PUBLIC },
	square => { public_url => $SQUARE_URL },
	'standard-ed' => { provider => 'standard' },
);
my %endpoints = map {
	my $n = $_;
	($n => { provider => $n, secrets => $secrets{$n}, %{ $extra{$n} // {} } })
} keys %secrets;

my $t = HookTest->new(endpoints => \%endpoints, procs => 2);

sub rows { $t->sql('select count(*) from hookinbox.inbox') }

sub row {
	my ($id) = @_;
	return $t->sql("select event_id||'|'||coalesce(event_type,'')||'|'||coalesce(object_id,'')||'|'"
		. "||coalesce(event_version::text,'') from hookinbox.inbox where id = " . int($id));
}

# ---------------------------------------------------------------- signers, as each provider documents

sub ed25519_sig {
	my ($pem, $msg) = @_;
	open my $fh, '>', "$tmp/msg" or die $!;
	print $fh $msg;
	close $fh;
	my $sig = `openssl pkeyutl -sign -inkey $pem -rawin -in $tmp/msg`;
	die 'openssl pkeyutl -sign failed' if $? != 0;
	return encode_base64($sig, '');
}

# each returns (headers, query string or undef); o: id, type, ts, ct
my %sign = (
	stripe => sub {
		my ($s, $b, %o) = @_;
		return { 'Stripe-Signature' => stripe_sig($s, $b, $o{ts}) };
	},
	github => sub {
		my ($s, $b, %o) = @_;
		return { 'X-Hub-Signature-256' => github_sig($s, $b), 'X-GitHub-Delivery' => $o{id},
			'X-GitHub-Event' => $o{type} };
	},
	standard => sub {
		my ($s, $b, %o) = @_;
		return { standard_sig($s, $o{id}, $b, $o{ts}) };
	},
	'standard-ed' => sub {
		my ($pem, $b, %o) = @_;
		my $ts = int($o{ts} // time);
		return { 'webhook-id' => $o{id}, 'webhook-timestamp' => $ts,
			'webhook-signature' => 'v1a,' . ed25519_sig($pem, "$o{id}.$ts.$b") };
	},
	svix => sub {
		my ($s, $b, %o) = @_;
		my %h = standard_sig($s, $o{id}, $b, $o{ts});
		return { map { (s/^webhook-/svix-/r => $h{$_}) } keys %h };
	},
	acme => sub {
		my ($s, $b, %o) = @_;
		return { 'X-Acme-Signature' => 'sha256=' . hmac_sha256_hex($b, $s), 'X-Acme-Delivery' => $o{id} };
	},
	acme2 => sub {
		my ($s, $b, %o) = @_;
		return { 'X-Acme2-Sig' => encode_base64(hmac_sha512($b, $s), ''), 'X-Acme2-Event' => $o{type} };
	},
	shopify => sub {
		my ($s, $b, %o) = @_;
		return { 'X-Shopify-Hmac-Sha256' => encode_base64(hmac_sha256($b, $s), ''),
			'X-Shopify-Webhook-Id' => $o{id}, 'X-Shopify-Topic' => $o{type},
			'X-Shopify-Triggered-At' => '2024-05-01T12:00:00.250Z' };
	},
	slack => sub {
		my ($s, $b, %o) = @_;
		my $ts = int($o{ts} // time);
		return { 'X-Slack-Request-Timestamp' => $ts, 'X-Slack-Signature' => 'v0=' . hmac_sha256_hex("v0:$ts:$b", $s) };
	},
	paddle => sub {
		my ($s, $b, %o) = @_;
		my $ts = int($o{ts} // time);
		return { 'Paddle-Signature' => "ts=$ts;h1=" . hmac_sha256_hex("$ts:$b", $s) };
	},
	twilio => sub {
		my ($s, $b, %o) = @_;
		my %h;
		$h{'I-Twilio-Idempotency-Token'} = $o{id} if defined $o{id};
		if ($b =~ /^\s*\{/) {
			my $q = 'bodySHA256=' . sha256_hex($b);
			$h{'X-Twilio-Signature'} = twilio_sig($s, ($o{url} // $PUBLIC) . "?$q");
			return (\%h, $q);
		}
		$h{'X-Twilio-Signature'} = twilio_sig($s, $o{url} // $PUBLIC, $b);
		return \%h;
	},
	gitlab => sub {
		my ($s, $b, %o) = @_;
		return { 'X-Gitlab-Token' => $s, 'X-Gitlab-Event-UUID' => $o{id}, 'X-Gitlab-Event' => $o{type} };
	},
	# base64 HMAC-SHA256 of the notification URL followed by the body (Square's WebhooksHelper)
	square => sub {
		my ($s, $b, %o) = @_;
		return { 'x-square-hmacsha256-signature' => encode_base64(hmac_sha256(($o{url} // $SQUARE_URL) . $b, $s), '') };
	},
);

sub send_to {
	my ($ep, $body, %o) = @_;
	my $secret = $o{secret} // $secrets{$ep}[$o{key} // 0];
	$secret = $ed_priv[$o{key} // 0] if $ep eq 'standard-ed' && !defined $o{secret};
	my ($h, $q) = $sign{$ep}->($secret, $body, %o);
	$h->{'Content-Type'} = $o{ct} // ($body =~ /^\s*[{\[]/ ? 'application/json' : 'application/x-www-form-urlencoded');
	$h->{$_} = $o{headers}{$_} for keys %{ $o{headers} // {} };
	delete $h->{$_} for grep { !defined $h->{$_} } keys %$h;
	my $url = $t->url($ep) . (defined $q ? "?$q" : '');
	return $t->post($ep, $body, $h, url => $url);
}

# ---------------------------------------------------------------- the cases

my @cases = (
	{ ep => 'stripe', ts => 1,
	  body => encode_json({ id => 'evt_30_1', object => 'event', type => 'invoice.paid', created => 1700000001,
		data => { object => { id => 'in_30', object => 'invoice' } } }),
	  expect => 'evt_30_1|invoice.paid|in_30|1700000001' },
	{ ep => 'github', fresh_id => 1, id => 'gh-d-30-1', type => 'pull_request',
	  body => '{"action":"opened","number":7,"pull_request":{"id":4242,"number":7}}',
	  expect => 'gh-d-30-1|pull_request.opened|4242|' },
	{ ep => 'github', name => 'github issues (plural event, singular object)', fresh_id => 1, id => 'gh-d-30-2',
	  type => 'issues', body => '{"action":"closed","issue":{"id":77}}',
	  expect => 'gh-d-30-2|issues.closed|77|' },
	{ ep => 'standard', ts => 1, id => 'msg_30_std',
	  body => '{"type":"invoice.paid","timestamp":"2024-01-01T00:00:00.5Z","data":{"id":"inv_30"}}',
	  expect => 'msg_30_std|invoice.paid|inv_30|1704067200500000' },
	{ ep => 'standard-ed', name => 'standard v1a (Ed25519, whpk_ keys)', ts => 1, id => 'msg_30_ed',
	  body => '{"type":"user.created","timestamp":"2024-01-01T00:00:00Z","data":{"id":"u_30"}}',
	  expect => 'msg_30_ed|user.created|u_30|1704067200000000' },
	{ ep => 'svix', ts => 1, id => 'msg_30_svix',
	  body => '{"type":"payment.succeeded","timestamp":"2024-02-01T00:00:00Z","data":{"id":"pay_30"}}',
	  expect => 'msg_30_svix|payment.succeeded|pay_30|1706745600000000' },
	{ ep => 'acme', name => 'hmac (sha256, hex, prefix, id_header, type_field)', id => 'acme-30-1',
	  body => '{"type":"order.shipped","created":1700000100,"data":{"object":{"id":"ord_30"}}}',
	  expect => 'acme-30-1|order.shipped|ord_30|1700000100' },
	{ ep => 'acme2', name => 'hmac (sha512, base64, id_field, type_header)', type => 'ticket.opened',
	  body => '{"event":{"id":"acme2-30-1","at":"2024-03-01T00:00:00+01:00"}}',
	  expect => 'acme2-30-1|ticket.opened||1709247600000000' },
	{ ep => 'shopify', fresh_id => 1, id => 'shop-wh-30-1', type => 'orders/create',
	  body => '{"id":820982911946154500,"admin_graphql_api_id":"gid://shopify/Order/820982911946154500","updated_at":"2024-05-01T11:00:00Z"}',
	  expect => 'shop-wh-30-1|orders/create|gid://shopify/Order/820982911946154500|1714564800250000' },
	{ ep => 'slack', ts => 1, redeliver_headers => { 'X-Slack-Retry-Num' => 1, 'X-Slack-Retry-Reason' => 'http_timeout' },
	  body => '{"token":"x","team_id":"T1","type":"event_callback","event_id":"Ev30ABC","event_time":1700000200,"event":{"type":"app_mention","text":"hi"}}',
	  expect => 'Ev30ABC|app_mention||1700000200' },
	{ ep => 'slack', name => 'slack slash command (form, trigger_id)', ts => 1,
	  body => form_encode(token => 'x', team_id => 'T1', command => '/deploy', text => 'prod now',
		trigger_id => '13345224609.738474920.8088930838d88f008e0', response_url => 'https://hooks.slack.test/c/1'),
	  expect => '13345224609.738474920.8088930838d88f008e0|/deploy||' },
	{ ep => 'slack', name => 'slack interactivity (form payload, trigger_id)', ts => 1,
	  body => form_encode(payload => '{"type":"block_actions","trigger_id":"9911.2233.abc","user":{"id":"U1"}}'),
	  expect => '9911.2233.abc|block_actions||' },
	{ ep => 'paddle', ts => 1,
	  body => '{"event_id":"evt_01h30paddle","event_type":"transaction.completed","occurred_at":"2024-04-01T10:00:00.123456Z","data":{"id":"txn_30"}}',
	  expect => 'evt_01h30paddle|transaction.completed|txn_30|1711965600123456' },
	{ ep => 'twilio', name => 'twilio form (public_url, idempotency token)', id => 'tw-idem-30-1',
	  body => form_encode(MessageSid => 'SM30aaaa', MessageStatus => 'delivered', AccountSid => 'AC1', To => '+15550001'),
	  expect => 'tw-idem-30-1|twilio.delivered|SM30aaaa|' },
	{ ep => 'twilio', name => 'twilio form without the token (sid:status)',
	  body => form_encode(SmsSid => 'SM30bbbb', SmsStatus => 'sent', AccountSid => 'AC1'),
	  expect => 'SM30bbbb:sent|twilio.sent|SM30bbbb|' },
	{ ep => 'twilio', name => 'twilio JSON (bodySHA256)', id => 'tw-idem-30-2',
	  body => '{"type":"com.twilio.messaging.message.delivered","data":{"sid":"SM30cccc"}}',
	  expect => 'tw-idem-30-2|com.twilio.messaging.message.delivered||' },
	{ ep => 'gitlab', fresh_id => 1, id => '7c0a2b3e-30-1', type => 'Merge Request Hook',
	  body => '{"object_kind":"merge_request","object_attributes":{"id":99,"iid":1,"action":"open"}}',
	  expect => '7c0a2b3e-30-1|Merge Request Hook|99|' },
	{ ep => 'square', name => 'square (notification URL + body, event_id in the body)',
	  body => '{"merchant_id":"ML30SQ","type":"payment.updated","event_id":"sq-ev-30-1","created_at":"2024-07-01T10:00:00.123456789Z","data":{"type":"payment","id":"pay_sq_30","object":{"payment":{"id":"pay_sq_30","status":"COMPLETED"}}}}',
	  expect => 'sq-ev-30-1|payment.updated|pay_sq_30|1719828000123456' },
);

for my $c (@cases) {
	my $name = $c->{name} // $c->{ep};
	my %o = (id => $c->{id}, type => $c->{type});
	my $before = rows();

	my $r = send_to($c->{ep}, $c->{body}, %o);
	is($r->{status}, 200, "$name: valid delivery 200") or diag($r->{content});
	is($r->{json}{duplicate}, JSON::PP::false, "$name: not a duplicate");
	my $id = $r->{json}{id} // 0;
	is(rows(), $before + 1, "$name: one row");
	is(row($id), $c->{expect}, "$name: event_id|type|object|version");

	# a redelivery, as the provider retries it: new signature (and timestamp), the other secret
	$r = send_to($c->{ep}, $c->{body}, %o, key => 1, headers => $c->{redeliver_headers});
	is($r->{status}, 200, "$name: redelivery with the second secret 200") or diag($r->{content});
	is($r->{json}{id}, $id, "$name: redelivery is the same id");
	is($r->{json}{duplicate}, JSON::PP::true, "$name: redelivery is a duplicate");

	# wrong secret: refused, nothing stored
	my $other = $c->{ep} eq 'standard-ed' ? undef : 'wrong-secret-' . ('x' x 16);
	my $mutated = $c->{body} =~ s/30/31/r;
	if ($c->{ep} eq 'standard-ed') {
		system("openssl genpkey -algorithm ed25519 -out $tmp/wrong.pem 2>/dev/null");
		$other = "$tmp/wrong.pem";
	} elsif ($c->{ep} =~ /^(standard|svix)$/) {
		$other = 'whsec_' . encode_base64('not-the-key-0123456789', '');
	}
	$r = send_to($c->{ep}, $mutated, %o, id => defined $o{id} ? "$o{id}-w" : undef, secret => $other);
	is($r->{status}, 401, "$name: wrong secret 401");

	if ($c->{ts}) {
		$r = send_to($c->{ep}, $mutated, %o, ts => time - 3600);
		is($r->{status}, 401, "$name: stale timestamp 401");
		$r = send_to($c->{ep}, $mutated, %o, ts => time + 3600);
		is($r->{status}, 401, "$name: future timestamp 401");
	}
	if ($c->{fresh_id}) {
		# the delivery id is not signed: a replay of the body under a fresh id is the same event
		$r = send_to($c->{ep}, $c->{body}, %o, id => "$o{id}-replayed");
		is($r->{status}, 200, "$name: replay under a fresh delivery id 200");
		is($r->{json}{id}, $id, "$name: replay under a fresh delivery id is the first id");
		is($r->{json}{duplicate}, JSON::PP::true, "$name: replay under a fresh delivery id is a duplicate");
	}
	is(rows(), $before + 1, "$name: still one row");
}

# ---------------------------------------------------------------- provider details

# Slack's url_verification is answered with its challenge and stores nothing
{
	my $before = rows();
	my $b = '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}';
	my $r = send_to('slack', $b);
	is($r->{status}, 200, 'slack url_verification: 200');
	is_deeply($r->{json}, { challenge => '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
		'slack url_verification: answered with its challenge and nothing else');
	$r = send_to('slack', $b, secret => 'wrong-secret-xxxxxxxx');
	is($r->{status}, 401, 'slack url_verification with a wrong secret: 401');
	is(rows(), $before, 'slack url_verification: nothing stored');
}

# Shopify: X-Shopify-Event-Id, where present, is the delivery key
{
	my $b = '{"id":31,"updated_at":"2024-05-01T11:00:00Z"}';
	my $r = send_to('shopify', $b, id => 'shop-wh-31', type => 'products/update',
		headers => { 'X-Shopify-Event-Id' => 'shop-ev-31', 'X-Shopify-Triggered-At' => undef });
	is($r->{status}, 200, 'shopify with X-Shopify-Event-Id: 200');
	is(row($r->{json}{id}), 'shop-ev-31|products/update|31|1714561200000000',
		'shopify: event id header preferred, numeric id as object, updated_at as version');
}

# Paddle's SDK allows 5 seconds, and so do we
{
	my $b = '{"event_id":"evt_paddle_window","event_type":"subscription.created","data":{"id":"sub_1"}}';
	is(send_to('paddle', $b, ts => time - 30)->{status}, 401, 'paddle: 30 seconds old is stale (5-second window)');
	is(send_to('paddle', $b, ts => time + 30)->{status}, 401, 'paddle: 30 seconds ahead is refused');
	is(send_to('paddle', $b, ts => time - 2)->{status}, 200, 'paddle: 2 seconds old is accepted');
}

# Twilio signs the public URL: a signature for another URL is refused
{
	my $b = form_encode(MessageSid => 'SM32', MessageStatus => 'queued');
	my $r = send_to('twilio', $b, id => 'tw-32', url => 'https://elsewhere.example.test/in/tw');
	is($r->{status}, 401, 'twilio: signed for another URL is refused');
	$r = send_to('twilio', $b, id => 'tw-32', url => 'https://hooks.example.test:443/in/tw');
	is($r->{status}, 200, 'twilio: the public URL with its default port added is accepted (as the SDK does)');
	# JSON with a body hash that does not match the body
	my $j = '{"type":"x","data":{}}';
	my $q = 'bodySHA256=' . sha256_hex('{"type":"y"}');
	my $h = { 'X-Twilio-Signature' => twilio_sig($secrets{twilio}[0], "$PUBLIC?$q"), 'Content-Type' => 'application/json',
		'I-Twilio-Idempotency-Token' => 'tw-33' };
	$r = $t->post('twilio', $j, $h, url => $t->url('twilio') . "?$q");
	is($r->{status}, 401, 'twilio JSON: bodySHA256 of another body is refused');
}

# Twilio's idempotency token and a generic hmac id_header are not signed
# either, and neither scheme has a timestamp: a captured body replayed under
# a fresh id is answered as a duplicate of the first (dedup on the body).
{
	my $b = form_encode(MessageSid => 'SM35', MessageStatus => 'delivered');
	my $first = send_to('twilio', $b, id => 'tw-35');
	my $again = send_to('twilio', $b, id => 'tw-35-replayed');
	my $ab = '{"type":"acme.replay","created":1700000500}';
	my $afirst = send_to('acme', $ab, id => 'acme-35');
	my $aagain = send_to('acme', $ab, id => 'acme-35-replayed');
	is($again->{json}{id}, $first->{json}{id}, 'twilio: replay under a fresh idempotency token is a duplicate');
	is($aagain->{json}{id}, $afirst->{json}{id}, 'hmac id_header: replay under a fresh id is a duplicate');
}

# Square signs its notification URL exactly as registered, and the event id
# inside the signed body: no timestamp, no body dedup needed, nothing else
# (another URL, the request URL, a new event_id under an old signature) passes
{
	my $before = rows();
	my $b = '{"merchant_id":"ML36","type":"refund.created","event_id":"sq-ev-36","created_at":"2024-07-02T00:00:00Z","data":{"type":"refund","id":"rf_36"}}';
	my $r = send_to('square', $b, url => $t->url('square'));
	is($r->{status}, 401, 'square: signed for the request URL, not the notification URL: 401');
	$r = send_to('square', $b, url => $SQUARE_URL =~ s/\?src=sq$//r);
	is($r->{status}, 401, 'square: signed for the notification URL without its query: 401');
	$r = send_to('square', $b, url => $SQUARE_URL =~ s{test/}{test:443/}r);
	is($r->{status}, 401, 'square: signed for the URL with its default port added: 401 (no port toggling)');
	$r = send_to('square', $b, headers => { 'x-square-hmacsha256-signature' => undef });
	is($r->{status}, 401, 'square: no signature header: 401');
	$r = send_to('square', $b, headers => { 'x-square-hmacsha256-signature' => 'not base64!' });
	is($r->{status}, 400, 'square: a signature header that is not base64: 400');
	# the signature of one event presented with another event_id (a replay under a fresh id)
	my $sig = $sign{square}->($secrets{square}[0], $b)->{'x-square-hmacsha256-signature'};
	$r = $t->post('square', $b =~ s/sq-ev-36/sq-ev-36-replayed/r,
		{ 'x-square-hmacsha256-signature' => $sig, 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'square: an old signature over a fresh event_id: 401');
	is(rows(), $before, 'square: none of these stored anything');

	$r = send_to('square', $b, headers => { 'Square-Environment' => 'Production', 'Square-Retry-Number' => '2',
		'Square-Retry-Reason' => 'http_timeout', 'Square-Initial-Delivery-Timestamp' => '2024-07-02T00:00:01Z' });
	is($r->{status}, 200, 'square: 200') or diag($r->{content});
	my $id = int($r->{json}{id} // 0);
	is(row($id), 'sq-ev-36|refund.created|rf_36|1719878400000000', 'square: event_id|type|object|version');
	is($t->sql("select body_dedup::text || '|' || coalesce(headers->>'Square-Environment', '') || '|'"
		. " || coalesce(headers->>'Square-Retry-Number', '') || '|' || coalesce(headers->>'Square-Retry-Reason', '')"
		. " from hookinbox.inbox where id = $id"),
		'false|Production|2|http_timeout', 'square: signed id (no body dedup), its delivery headers kept');
	is($t->sql("select count(*) from hookinbox.inbox where headers ? 'x-square-hmacsha256-signature'"
		. " or headers ? 'X-Square-HmacSha256-Signature'"), 0, 'square: the signature is never kept');
	# no event_id: refused after the signature, nothing stored
	$before = rows();
	$r = send_to('square', '{"merchant_id":"ML36","type":"x.y","data":{"id":"z"}}');
	is($r->{status}, 400, 'square: a signed notification without event_id: 400');
	is(rows(), $before, 'square: and nothing stored');
}

# GitLab's token is compared whole: a prefix of it is refused
{
	my $b = '{"object_kind":"push"}';
	my $r = send_to('gitlab', $b, id => 'gl-34', type => 'Push Hook', secret => substr($secrets{gitlab}[0], 0, 10));
	is($r->{status}, 401, 'gitlab: a prefix of the token is refused');
	$r = send_to('gitlab', $b, id => 'gl-34', type => 'Push Hook', headers => { 'X-Gitlab-Token' => undef });
	is($r->{status}, 401, 'gitlab: no token is refused');
}

# which secret matched is logged by index, never the secret
{
	my $log = $t->responder_log;
	like($log, qr/endpoint=stripe outcome=accepted status=200 id=\d+ secret=0/, 'log: first delivery matched secret 0');
	like($log, qr/endpoint=stripe outcome=duplicate status=200 id=\d+ secret=1/, 'log: redelivery matched secret 1');
	for my $ep (sort keys %secrets) {
		next if $ep eq 'standard-ed';
		my $leak = grep { index($log, $_) >= 0 } @{ $secrets{$ep} };
		ok(!$leak, "log: no $ep secret");
	}
}

# ---------------------------------------------------------------- the official SDKs sign, the responder verifies

subtest 'official SDKs sign deliveries the responder accepts' => sub {
	my $why = SDK::install();
	plan skip_all => "SDK cross-check skipped: $why" if defined $why;
	my @sdk = (
		{ provider => 'stripe', ep => 'stripe', body => encode_json({ id => 'evt_sdk_1', type => 'charge.succeeded',
			created => 1700000300, data => { object => { id => 'ch_sdk' } } }),
		  expect => 'evt_sdk_1|charge.succeeded|ch_sdk|1700000300' },
		{ provider => 'github', ep => 'github', id => 'gh-sdk-1', type => 'release',
		  body => '{"action":"published","release":{"id":5150}}', expect => 'gh-sdk-1|release.published|5150|' },
		{ provider => 'standard', ep => 'standard', id => 'msg_sdk_std',
		  body => '{"type":"a.b","timestamp":"2024-01-01T00:00:01Z","data":{"id":"d_sdk"}}',
		  expect => 'msg_sdk_std|a.b|d_sdk|1704067201000000' },
		{ provider => 'svix', ep => 'svix', id => 'msg_sdk_svix', body => '{"type":"c.d","data":{"id":"s_sdk"}}',
		  expect => 'msg_sdk_svix|c.d|s_sdk|' },
		{ provider => 'shopify', ep => 'shopify', id => 'shop-sdk-1', type => 'carts/update',
		  body => '{"id":"cart_sdk","updated_at":"2024-06-01T00:00:00Z"}', expect => 'shop-sdk-1|carts/update|cart_sdk|1717200000000000' },
		{ provider => 'slack', ep => 'slack',
		  body => '{"type":"event_callback","event_id":"EvSDK1","event_time":1700000400,"event":{"type":"message"}}',
		  expect => 'EvSDK1|message||1700000400' },
		{ provider => 'paddle', ep => 'paddle',
		  body => '{"event_id":"evt_sdk_paddle","event_type":"customer.created","data":{"id":"ctm_sdk"}}',
		  expect => 'evt_sdk_paddle|customer.created|ctm_sdk|' },
		{ provider => 'twilio', ep => 'twilio', id => 'tw-sdk-1', url => $PUBLIC,
		  body => form_encode(CallSid => 'CAsdk1', CallStatus => 'completed', From => '+1 555 0100', Digits => '1#'),
		  expect => 'tw-sdk-1|twilio.completed|CAsdk1|' },
		{ provider => 'twilio', ep => 'twilio', id => 'tw-sdk-2', url => $PUBLIC,
		  body => '{"type":"sdk.json","data":{"x":1}}', expect => 'tw-sdk-2|sdk.json||' },
	);
	my @cases = map {
		my $c = $_;
		{ provider => $c->{provider}, secret => $secrets{ $c->{ep} }[1], body => $c->{body}, id => $c->{id},
		  type => $c->{type}, url => $c->{url} }
	} @sdk;
	# the same deliveries signed by the SDK with a secret the endpoint does not have
	my @wrong = map { { %$_, secret => $_->{provider} =~ /^(standard|svix)$/
		? 'whsec_' . encode_base64('sdk-wrong-key-0123456', '') : 'sdk-wrong-secret-0123' } } @cases;
	my $signed = SDK::run('sign', [@cases, @wrong]);
	for my $i (0 .. $#sdk) {
		my $c = $sdk[$i];
		my $name = "SDK $c->{provider}" . ($signed->[$i]{how} eq 'sdk' ? '' : ' (documented HMAC, SDK has no signer)');
		my @pair = ($signed->[$i + @sdk], $signed->[$i]);
		# Paddle allows 5 seconds: sign again just before posting
		@pair = reverse @{ SDK::run('sign', [ $cases[$i], $wrong[$i] ]) } if $c->{provider} eq 'paddle';
		for my $pass ('wrong', 'right') {
			my $s = $pass eq 'right' ? $pair[1] : $pair[0];
			my %h = (%{ $s->{headers} }, 'Content-Type' => $c->{body} =~ /^\{/ ? 'application/json' : 'application/x-www-form-urlencoded');
			delete $h{$_} for grep { !defined $h{$_} } keys %h;
			my $url = $t->url($c->{ep});
			$url .= $1 if defined $s->{url} && $s->{url} =~ /(\?.*)$/;
			my $r = $t->post($c->{ep}, $c->{body}, \%h, url => $url);
			if ($pass eq 'wrong') {
				is($r->{status}, 401, "$name: signed with another secret 401");
				next;
			}
			is($r->{status}, 200, "$name: accepted") or diag($r->{content});
			is($r->{json}{duplicate}, JSON::PP::false, "$name: new");
			is(row($r->{json}{id} // 0), $c->{expect}, "$name: envelope");
		}
	}
};

done_testing();
