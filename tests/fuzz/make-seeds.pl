#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# make-seeds.pl - (re)write the seed corpora in tests/fuzz/corpus/<harness>/
#
#   perl tests/fuzz/make-seeds.pl
#
# The request seeds are signed with the harness's secrets (fuzz_request.c)
# at its fixed time (FUZZ_NOW), so that the fuzzer starts from requests
# that verify and extract, and mutates from there.
use strict;
use warnings;
use Digest::SHA qw(hmac_sha256_hex hmac_sha256 hmac_sha1 hmac_sha512_hex hmac_sha256_base64);
use MIME::Base64 qw(encode_base64 decode_base64);
use File::Path qw(make_path);
use File::Basename qw(dirname);

my $dir = dirname(__FILE__) . '/corpus';
my $whsec = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM=';
my $plain = 'fuzz-secret-0123456789';
my $now = 1700000000;

sub put {
	my ($h, $name, $data) = @_;
	make_path("$dir/$h");
	open my $fh, '>:raw', "$dir/$h/$name" or die $!;
	print $fh $data;
	close $fh;
}

sub req {
	my ($ep, $headers, $body) = @_;
	return "$ep\n" . join('', map { "$_->[0]: $_->[1]\n" } @$headers) . "\n" . $body;
}

my $stripe = '{"id":"evt_1","object":"event","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1"}}}';
my $gh = '{"action":"opened","pull_request":{"id":42},"number":1}';
my $std = '{"type":"user.created","timestamp":"2024-01-01T00:00:00.123Z","data":{"id":"u_1"}}';
my $shop = '{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/1","updated_at":"2024-01-01T00:00:00-05:00"}';
my $slack = '{"type":"event_callback","event_id":"Ev1","event_time":1700000000,"event":{"type":"app_mention"}}';
my $slack_ch = '{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}';
my $slack_form = 'command=%2Fweather&text=94070&trigger_id=13345224609.738474920.8088930838d88f008e0';
my $paddle = '{"event_id":"evt_01","event_type":"transaction.paid","occurred_at":"2024-01-01T00:00:00.000000Z","data":{"id":"txn_1"}}';
my $twilio = 'MessageSid=SM123&MessageStatus=delivered&To=%2B15551234567&Body=hello+world&Body=again';
my $gitlab = '{"object_kind":"issue","object_attributes":{"id":301}}';
my $hmac = '{"type":"order.created","created":"2024-01-01T00:00:00Z","data":{"id":"o_1","object":{"id":"obj_1"}}}';
my $hmacb = '{"data":{"id":77},"meta":{"at":1700000000}}';

my $stdkey = decode_base64('MDEyMzQ1Njc4OWFiY2RlZjAxMjM=');
my @v;
push @v, ['stripe', req('stripe', [['Stripe-Signature', "t=$now,v1=" . hmac_sha256_hex("$now.$stripe", $whsec) . ",v0=abc"], ['Content-Type', 'application/json']], $stripe)];
push @v, ['stripe-2', req('stripe', [['Stripe-Signature', "t=$now,v1=00,v1=" . hmac_sha256_hex("$now.$stripe", $plain)]], $stripe)];
push @v, ['github', req('github', [['X-Hub-Signature-256', 'sha256=' . hmac_sha256_hex($gh, $plain)], ['X-GitHub-Event', 'pull_request'], ['X-GitHub-Delivery', 'd-1']], $gh)];
my $ghform = 'payload=' . '%7B%22action%22%3A%22closed%22%2C%22issue%22%3A%7B%22id%22%3A7%7D%7D';
push @v, ['github-form', req('github', [['X-Hub-Signature-256', 'sha256=' . hmac_sha256_hex($ghform, $plain)], ['X-GitHub-Event', 'issues'], ['X-GitHub-Delivery', 'd-2'], ['Content-Type', 'application/x-www-form-urlencoded']], $ghform)];
push @v, ['standard', req('standard', [['webhook-id', 'msg_1'], ['webhook-timestamp', $now], ['webhook-signature', 'v1,' . encode_base64(hmac_sha256("msg_1.$now.$std", $stdkey), '') . ' v1a,AAAA']], $std)];
push @v, ['svix', req('svix', [['svix-id', 'msg_2'], ['svix-timestamp', $now], ['svix-signature', 'v1,' . encode_base64(hmac_sha256("msg_2.$now.$std", $stdkey), '')]], $std)];
push @v, ['shopify', req('shopify', [['X-Shopify-Hmac-Sha256', encode_base64(hmac_sha256($shop, $plain), '')], ['X-Shopify-Topic', 'orders/create'], ['X-Shopify-Webhook-Id', 'w-1'], ['X-Shopify-Triggered-At', '2024-01-01T00:00:00.5+02:00']], $shop)];
for ([slack => $slack, 'application/json'], ['slack-challenge' => $slack_ch, 'application/json'], ['slack-form' => $slack_form, 'application/x-www-form-urlencoded']) {
	my ($n, $b, $ct) = @$_;
	push @v, [$n, req('slack', [['X-Slack-Signature', 'v0=' . hmac_sha256_hex("v0:$now:$b", $plain)], ['X-Slack-Request-Timestamp', $now], ['Content-Type', $ct]], $b)];
}
push @v, ['paddle', req('paddle', [['Paddle-Signature', "ts=$now;h1=" . hmac_sha256_hex("$now:$paddle", $plain)]], $paddle)];
{
	my @p = map { [split /=/, $_, 2] } split /&/, $twilio;
	my $dec = sub { my $s = shift; $s =~ tr/+/ /; $s =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge; $s };
	my @kv = sort { $a->[0] cmp $b->[0] or $a->[1] cmp $b->[1] } map { [$dec->($_->[0]), $dec->($_->[1])] } @p;
	my $url = 'https://hooks.example.com/hooks/twilio';
	my $sig = encode_base64(hmac_sha1($url . join('', map { $_->[0] . $_->[1] } @kv), $plain), '');
	push @v, ['twilio', req('twilio', [['X-Twilio-Signature', $sig], ['Content-Type', 'application/x-www-form-urlencoded']], $twilio)];
	my $jb = '{"id":"tw_1","type":"message.sent"}';
	my $bh = Digest::SHA::sha256_hex($jb);
	my $q = "bodySHA256=$bh";
	$sig = encode_base64(hmac_sha1("$url?$q", $plain), '');
	push @v, ['twilio-json', req('twilio', [['?', $q], ['X-Twilio-Signature', $sig], ['I-Twilio-Idempotency-Token', 'tok-1']], $jb)];
	push @v, ['twilio-port', req('twilio-port', [['?', 'a=1&b'], ['X-Twilio-Signature', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=']], 'CallSid=CA1&CallStatus=ringing')];
}
{
	my $sq = '{"merchant_id":"ML1","type":"payment.updated","event_id":"sq-1","created_at":"2024-01-01T00:00:00.123456789Z","data":{"type":"payment","id":"pay_1"}}';
	my $sig = encode_base64(hmac_sha256('https://hooks.example.com/hooks/square' . $sq, $plain), '');
	push @v, ['square', req('square', [['X-Square-HmacSha256-Signature', $sig], ['Content-Type', 'application/json']], $sq)];
}
push @v, ['gitlab', req('gitlab', [['X-Gitlab-Token', $plain], ['X-Gitlab-Event', 'Issue Hook'], ['X-Gitlab-Event-UUID', 'uuid-1']], $gitlab)];
push @v, ['hmac', req('hmac', [['X-Signature', 'sha256=' . hmac_sha256_hex($hmac, $plain)], ['X-Event-Id', 'e-1']], $hmac)];
push @v, ['hmac-b64', req('hmac-b64', [['X-Signature', encode_base64(hmac_sha1($hmacb, $plain), '')], ['X-Event', 'thing.done']], $hmacb)];
push @v, ['hmac-512', req('hmac-512', [['X-Signature', hmac_sha512_hex('{}', $plain)], ['X-Event-Id', 'e-512']], '{}')];
# signed_content templates: a signed delivery id and timestamp; the URL with a query, a header, ms
push @v, ['hmac-tpl', req('hmac-tpl', [['X-Signature', 'v1=' . hmac_sha256_hex("e-tpl.$now.$hmac", $plain)], ['X-Event-Id', 'e-tpl'], ['X-Timestamp', $now]], $hmac)];
{
	my ($ms, $b) = ($now * 1000, '{"id":"u-1"}');
	my $sig = encode_base64(Digest::SHA::hmac_sha512("POST&https://hooks.example.com/hooks/hmac-url?a=1&acme&$ms&{$b}", $plain), '');
	push @v, ['hmac-url', req('hmac-url', [['X-Signature', $sig], ['X-Tenant', 'acme'], ['X-Timestamp', $ms], ['?', 'a=1']], $b)];
}
# the providers that are rows of shared classes, and the handshakes
{
	my $ms = $now * 1000;
	my $adyen_key = pack 'H*', '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
	my $rz = '{"entity":"event","event":"payment.captured","created_at":1700000000}';
	my $ad = '{"data":{"id":"BA1"},"type":"balancePlatform.balanceAccount.updated","timestamp":"2024-01-01T00:00:00+02:00"}';
	my $pd = '{"event":{"id":"5ac6","event_type":"incident.triggered","occurred_at":"2024-01-01T00:00:00Z","data":{"id":"P1"}}}';
	my $li = "{\"action\":\"create\",\"data\":{\"id\":\"i1\"},\"webhookTimestamp\":$ms}";
	my $mux = '{"type":"video.asset.ready","object":{"id":"a1"},"id":"m1","created_at":"2024-01-01T00:00:00Z"}';
	my $wos = '{"id":"event_1","event":"user.created","data":{"id":"u1"}}';
	my $zm = '{"event":"meeting.started","event_ts":1700000000000,"payload":{"object":{"id":"1"}}}';
	my $zmv = '{"event":"endpoint.url_validation","payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"}}';
	my $dc = '{"id":"119","type":2,"data":{"id":"118","name":"hello"}}';
	my $ping = '{"id":"120","type":1}';
	my $tx = '{"data":{"id":"t1","event_type":"message.sent","occurred_at":"2024-01-01T00:00:00Z","payload":{"id":"p1"}}}';
	push @v, ['razorpay', req('razorpay', [['X-Razorpay-Signature', hmac_sha256_hex($rz, $plain)], ['X-Razorpay-Event-Id', 'ev-1']], $rz)];
	push @v, ['adyen_platform', req('adyen_platform', [['HmacSignature', encode_base64(hmac_sha256($ad, $adyen_key), '')]], $ad)];
	push @v, ['pagerduty', req('pagerduty', [['X-PagerDuty-Signature', 'v1=00, v1=' . hmac_sha256_hex($pd, $plain)]], $pd)];
	push @v, ['linear', req('linear', [['Linear-Signature', hmac_sha256_hex($li, $plain)], ['Linear-Delivery', 'd-1'], ['Linear-Event', 'Issue']], $li)];
	push @v, ['mux', req('mux', [['Mux-Signature', "t=$now,v1=" . hmac_sha256_hex("$now.$mux", $plain)]], $mux)];
	push @v, ['workos', req('workos', [['WorkOS-Signature', "t=$ms, v1=" . hmac_sha256_hex("$ms.$wos", $plain)]], $wos)];
	push @v, ['zoom', req('zoom', [['x-zm-signature', 'v0=' . hmac_sha256_hex("v0:$now:$zm", $plain)], ['x-zm-request-timestamp', $now]], $zm)];
	push @v, ['zoom-validation', req('zoom', [['x-zm-signature', 'v0=' . hmac_sha256_hex("v0:$now:$zmv", $plain)], ['x-zm-request-timestamp', $now]], $zmv)];
	# Ed25519 with the seeds 0x11 x 32 (discord, hex) and 0x33 x 32 (telnyx, base64)
	my $ed = sub {
		my ($seed, $msg) = @_;
		my $tmp = "/tmp/hookinbox-seed-$$";
		open my $k, '>:raw', "$tmp.der" or die $!;
		print $k pack('H*', '302e020100300506032b657004220420') . $seed;
		close $k;
		open my $m, '>:raw', "$tmp.msg" or die $!;
		print $m $msg;
		close $m;
		my $sig = `openssl pkeyutl -sign -keyform DER -inkey $tmp.der -rawin -in $tmp.msg`;
		unlink "$tmp.der", "$tmp.msg";
		die 'openssl pkeyutl -sign failed' if $? != 0 || length $sig != 64;
		return $sig;
	};
	for ([discord => $dc], ['discord-ping' => $ping]) {
		my ($n, $b) = @$_;
		push @v, [$n, req('discord', [['X-Signature-Ed25519', unpack('H*', $ed->("\x11" x 32, "$now$b"))], ['X-Signature-Timestamp', $now]], $b)];
	}
	{
		my $bx = '{"type":"webhook_event","trigger":"FILE.UPLOADED","source":{"id":"1"}}';
		my $bts = '2023-11-14T22:13:20Z';
		push @v, ['box', req('box', [['box-signature-primary', encode_base64(hmac_sha256($bx . $bts, $plain), '')], ['box-delivery-timestamp', $bts], ['box-delivery-id', 'bd-1']], $bx)];
	}
	my $wf = '{"triggerType":"form_submission","payload":{"id":"w1"}}';
	push @v, ['webflow', req('webflow', [['x-webflow-signature', hmac_sha256_hex("$ms:$wf", $plain)], ['x-webflow-timestamp', $ms]], $wf)];
	push @v, ['gocardless', req('gocardless', [['Webhook-Signature', hmac_sha256_hex('{"events":[{"id":"EV1","action":"confirmed"}]}', $plain)]], '{"events":[{"id":"EV1","action":"confirmed"}]}')];
	push @v, ['meta', req('meta', [['X-Hub-Signature-256', 'sha256=' . hmac_sha256_hex('{"object":"page","entry":[{"id":"1","time":1700000000}]}', $plain)]], '{"object":"page","entry":[{"id":"1","time":1700000000}]}')];
	push @v, ['clerk', req('clerk', [['svix-id', 'msg_3'], ['svix-timestamp', $now], ['svix-signature', 'v1,' . encode_base64(hmac_sha256("msg_3.$now.{\"type\":\"user.created\",\"object\":\"event\",\"timestamp\":1700000000000,\"data\":{\"id\":\"user_1\"}}", $stdkey), '')]], '{"type":"user.created","object":"event","timestamp":1700000000000,"data":{"id":"user_1"}}')];
	push @v, ['resend', req('resend', [['svix-id', 'msg_4'], ['svix-timestamp', $now], ['svix-signature', 'v1,' . encode_base64(hmac_sha256("msg_4.$now.{\"type\":\"email.sent\",\"created_at\":\"2024-01-01T00:00:00.000Z\",\"data\":{\"email_id\":\"e1\"}}", $stdkey), '')]], '{"type":"email.sent","created_at":"2024-01-01T00:00:00.000Z","data":{"email_id":"e1"}}')];
	push @v, ['okta', req('okta', [['Authorization', $plain]], '{"eventType":"com.okta.event_hook","eventId":"b5a1","eventTime":"2023-11-14T22:13:20.000Z","data":{"events":[]}}')];
	{
		my $zd = '{"type":"zen:event-type:ticket.created","time":"2023-11-14T22:13:20Z","detail":{"id":"1"}}';
		my $zts = '2023-11-14T22:13:20Z';
		push @v, ['zendesk', req('zendesk', [['X-Zendesk-Webhook-Signature', encode_base64(hmac_sha256($zts . $zd, $plain), '')], ['X-Zendesk-Webhook-Signature-Timestamp', $zts], ['x-zendesk-webhook-invocation-id', 'zi-1']], $zd)];
	}
	push @v, ['postmark', req('postmark', [['Authorization', 'Basic ' . encode_base64('fuzz-user:fuzz-password', '')]], '{"RecordType":"Delivery","MessageID":"m1"}')];
	push @v, ['chargebee', req('chargebee', [['Authorization', 'Basic ' . encode_base64('fuzz-user:fuzz-password', '')]], '{"id":"ev_1","event_type":"customer_created","occurred_at":1700000000}')];
	# the one-row providers of the body-MAC and t=,v1= classes
	my $b64 = sub { encode_base64($_[0], '') };
	my @rows = (
		[intercom => '{"type":"notification_event","id":"notif_1","topic":"conversation.user.created","created_at":1700000000,"data":{"item":{"id":"c1"}}}',
			sub { [['X-Hub-Signature', 'sha1=' . Digest::SHA::hmac_sha1_hex($_[0], $plain)]] }],
		[bitbucket => '{"push":{"changes":[]},"repository":{"full_name":"a/b"}}',
			sub { [['X-Hub-Signature', 'sha256=' . hmac_sha256_hex($_[0], $plain)], ['X-Request-UUID', 'r-1'], ['X-Event-Key', 'repo:push']] }],
		[typeform => '{"event_id":"01HF","event_type":"form_response","form_response":{"form_id":"f1","submitted_at":"2023-11-14T22:13:20Z"}}',
			sub { [['Typeform-Signature', 'sha256=' . $b64->(hmac_sha256($_[0], $plain))]] }],
		[calendly => '{"event":"invitee.created","created_at":"2023-11-14T22:13:20.000000Z","payload":{"uri":"https://api.calendly.com/scheduled_events/e1/invitees/i1"}}',
			sub { [['Calendly-Webhook-Signature', "t=$now,v1=" . hmac_sha256_hex("$now.$_[0]", $plain)]] }],
		[woocommerce => '{"id":42,"status":"processing"}',
			sub { [['X-WC-Webhook-Signature', $b64->(hmac_sha256($_[0], $plain))], ['X-WC-Webhook-Delivery-ID', '7'], ['X-WC-Webhook-Topic', 'order.created']] }],
		[sentry => '{"action":"created","data":{"issue":{"id":"1"}}}',
			sub { [['Sentry-Hook-Signature', hmac_sha256_hex($_[0], $plain)], ['Request-ID', 'r-1'], ['Sentry-Hook-Resource', 'issue']] }],
		[vercel => '{"id":"evt_1","type":"deployment.created","createdAt":1700000000000}',
			sub { [['x-vercel-signature', Digest::SHA::hmac_sha1_hex($_[0], $plain)]] }],
		[checkout => '{"id":"evt_1","type":"payment_approved","created_on":"2023-11-14T22:13:20Z","data":{"id":"pay_1"}}',
			sub { [['Cko-Signature', hmac_sha256_hex($_[0], $plain)]] }],
		[lemonsqueezy => '{"meta":{"event_name":"order_created"},"data":{"id":"1","type":"orders"}}',
			sub { [['X-Signature', hmac_sha256_hex($_[0], $plain)], ['X-Event-Name', 'order_created']] }],
		[notion => '{"id":"n1","type":"page.created","timestamp":"2023-11-14T22:13:20.000Z","entity":{"id":"p1"}}',
			sub { [['X-Notion-Signature', 'sha256=' . hmac_sha256_hex($_[0], $plain)]] }],
	);
	push @v, [$_->[0], req($_->[0], $_->[2]->($_->[1]), $_->[1])] for @rows;
	push @v, ['telnyx', req('telnyx', [['telnyx-signature-ed25519', encode_base64($ed->("\x33" x 32, "$now|$tx"), '')], ['telnyx-timestamp', $now]], $tx)];
}
# the batch class and Mailgun; SendGrid's signatures are made with the
# private half of fuzz_request.c's P-256 key (a test key, nothing else)
{
	my $adyen_hex = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
	my $item = sub {
		my ($n, $key) = @_;
		my %f = (pspReference => "88310000000000$n", originalReference => '', merchantAccountCode => 'M',
			merchantReference => "r$n", value => 1000 + $n, currency => 'EUR', eventCode => 'AUTHORISATION', success => 'true');
		my $sig = encode_base64(hmac_sha256(join(':', @f{qw(pspReference originalReference merchantAccountCode
			merchantReference value currency eventCode success)}), pack('H*', $key)), '');
		return qq({"NotificationRequestItem":{"additionalData":{"hmacSignature":"$sig"},"amount":{"currency":"EUR","value":$f{value}},)
			. qq("eventCode":"AUTHORISATION","eventDate":"2023-11-14T22:13:20+01:00","merchantAccountCode":"M",)
			. qq("merchantReference":"r$n","originalReference":"","pspReference":"$f{pspReference}","success":"true"}});
	};
	my $ady = '{"live":"false","notificationItems":[' . $item->(1, $adyen_hex) . ',' . $item->(2, $adyen_hex) . ']}';
	push @v, ['adyen', req('adyen', [['Content-Type', 'application/json']], $ady)];
	push @v, ['adyen-bad-item', req('adyen', [], '{"notificationItems":[' . $item->(1, $adyen_hex) . ',{"NotificationRequestItem":{"amount":{}}}]}')];
	my $pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqrMdSjCL0iKYfm6Z\n"
		. "JGTjYMQ8SMamfOmlofJxsKpm/LOhRANCAARzzp2KVqIcNsCy5IHpPj4WOZdQENtr\n"
		. "gnoHvsmKUkxZOWqsrX2VQx/W6FCL/83hYdwliIw1sV0JTSzji96dtfhI\n-----END PRIVATE KEY-----\n";
	my $sg = '[{"email":"a@example.com","timestamp":1700000000,"event":"delivered","sg_event_id":"e1","sg_message_id":"m1"},{"event":"open","sg_event_id":"e2"}]';
	my $tmp = "/tmp/hookinbox-seed-$$";
	open my $k, '>', "$tmp.pem" or die $!;
	print $k $pem;
	close $k;
	open my $m, '>:raw', "$tmp.msg" or die $!;
	print $m "$now$sg";
	close $m;
	my $sig = `openssl dgst -sha256 -sign $tmp.pem $tmp.msg`;
	unlink "$tmp.pem", "$tmp.msg";
	die 'openssl dgst -sign failed' if $? != 0;
	push @v, ['sendgrid', req('sendgrid', [['X-Twilio-Email-Event-Webhook-Signature', encode_base64($sig, '')], ['X-Twilio-Email-Event-Webhook-Timestamp', $now]], $sg)];
	my $hs = '[{"eventId":1,"subscriptionId":7,"occurredAt":1700000000000,"subscriptionType":"contact.creation","objectId":123},{"eventId":2,"subscriptionId":7}]';
	my $ms = $now * 1000;
	push @v, ['hubspot', req('hubspot', [['?', 'a=1%3A2'], ['X-HubSpot-Signature-v3', encode_base64(hmac_sha256("POSThttps://hooks.example.com/hooks/hubspot?a=1%3A2$hs$ms", $plain), '')], ['X-HubSpot-Request-Timestamp', $ms]], $hs)];
	my $tok = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123';
	my $mg = qq({"signature":{"timestamp":"$now","token":"$tok","signature":") . hmac_sha256_hex("$now$tok", $plain)
		. qq("},"event-data":{"event":"delivered","message":{"headers":{"message-id":"m\@example.org"}}}});
	push @v, ['mailgun', req('mailgun', [], $mg)];
	my $spki = decode_base64('MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEc86dilaiHDbAsuSB6T4+FjmXUBDba4J6B77JilJMWTlqrK19lUMf1uhQi//N4WHcJYiMNbFdCU0s44venbX4SA==');
	put('ecdsa', 'spki-sig', chr(length $spki) . $spki . $sig);
	put('ecdsa', 'spki-short', chr(length $spki) . substr($spki, 0, 40));
	my $p8 = decode_base64('MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqrMdSjCL0iKYfm6ZJGTjYMQ8SMamfOmlofJxsKpm/LOhRANCAARzzp2KVqIcNsCy5IHpPj4WOZdQENtrgnoHvsmKUkxZOWqsrX2VQx/W6FCL/83hYdwliIw1sV0JTSzji96dtfhI');
	put('ecdsa', 'pkcs8', chr(length $p8) . $p8 . "\x30\x06\x02\x01\x01\x02\x01\x01");
}

# the providers of tests/data/hmac2-vectors.mjs, and their handshakes
{
	my $u = 'https://hooks.example.com/hooks/';
	my $tr = '{"action":{"id":"a1","type":"updateCard","date":"2023-11-14T22:13:20.000Z"},"model":{"id":"m1"}}';
	push @v, ['trello', req('trello', [['X-Trello-Webhook', encode_base64(hmac_sha1($tr . "${u}trello", $plain), '')]], $tr)];
	my $ev = '[{"event":"send","_id":"e1","ts":1700000000},{"event":"open","_id":"e2","ts":1700000001}]';
	(my $evq = $ev) =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge;
	push @v, ['mandrill', req('mandrill', [['X-Mandrill-Signature', encode_base64(hmac_sha1("${u}mandrillmandrill_events$ev", $plain), '')], ['Content-Type', 'application/x-www-form-urlencoded']], "mandrill_events=$evq")];
	my $tw = '{"for_user_id":"1","tweet_create_events":[{"id_str":"2"}]}';
	push @v, ['twitter', req('twitter', [['x-twitter-webhooks-signature', 'sha256=' . encode_base64(hmac_sha256($tw, $plain), '')]], $tw)];
	push @v, ['twitter-crc', req('twitter', [['?', 'crc_token=abc%20def']], '')];
	my $db = '{"list_folder":{"accounts":["dbid:1"]},"delta":{"users":[1]}}';
	push @v, ['dropbox', req('dropbox', [['X-Dropbox-Signature', hmac_sha256_hex($db, $plain)]], $db)];
	push @v, ['dropbox-challenge', req('dropbox', [['?', 'challenge=xyz&challenge=2']], '')];
	push @v, ['meta-challenge', req('meta', [['?', 'hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=t']], '')];
	my $as = '{"events":[{"action":"changed","resource":{"gid":"1"}}]}';
	push @v, ['asana', req('asana', [['X-Hook-Signature', hmac_sha256_hex($as, $plain)]], $as)];
	push @v, ['asana-handshake', req('asana', [['X-Hook-Secret', 'b537207f20cbfa02357cf448134da559']], '')];
	my $xe = '{"events":[{"resourceId":"r1","eventType":"UPDATE"}],"firstEventSequence":1,"lastEventSequence":1,"entropy":"X"}';
	push @v, ['xero', req('xero', [['x-xero-signature', encode_base64(hmac_sha256($xe, $plain), '')]], $xe)];
	my $xi = '{"events":[],"firstEventSequence":0,"lastEventSequence":0,"entropy":"S0m3"}';
	push @v, ['xero-intent', req('xero', [['x-xero-signature', encode_base64(hmac_sha256($xi, $plain), '')]], $xi)];
	my $ds = '{"event":"envelope-sent","generatedDateTime":"2023-11-14T22:13:20.0000000Z","data":{"envelopeId":"e-1"}}';
	push @v, ['docusign', req('docusign', [['X-DocuSign-Signature-1', 'AAAA'], ['X-DocuSign-Signature-2', encode_base64(hmac_sha256($ds, $plain), '')]], $ds)];
	my $tts = '2023-11-14T22:13:20.123456789Z';
	for (['twitch', 'notification', '{"subscription":{"id":"s1","type":"channel.follow"},"event":{}}'],
	     ['twitch-verification', 'webhook_callback_verification', '{"challenge":"pogchamp","subscription":{"id":"s1"}}'],
	     ['twitch-revocation', 'revocation', '{"subscription":{"id":"s1","status":"authorization_revoked"}}']) {
		my ($n, $type, $b) = @$_;
		push @v, [$n, req('twitch', [['Twitch-Eventsub-Message-Id', 'm-1'], ['Twitch-Eventsub-Message-Timestamp', $tts], ['Twitch-Eventsub-Message-Type', $type], ['Twitch-Eventsub-Message-Signature', 'sha256=' . hmac_sha256_hex("m-1$tts$b", $plain)]], $b)];
	}
	my $xml = qq{<?xml version="1.0"?>\n<notification><!-- c --><timestamp type="datetime">2023-11-14T22:13:20Z</timestamp><kind>check</kind><subject><kind>x</kind><e/></subject></notification>};
	my $pl = encode_base64($xml);
	(my $plq = $pl) =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge;
	my $sig = 'pk|' . unpack('H*', hmac_sha1($pl, Digest::SHA::sha1($plain)));
	push @v, ['braintree', req('braintree', [['Content-Type', 'application/x-www-form-urlencoded']], "bt_signature=pk%7C00%26" . ($sig =~ s/\|/%7C/r) . "&bt_payload=$plq")];
	put('xml', 'braintree', $xml);
	put('xml', 'nested', '<a><b><c>1</c></b><kind>k</kind><timestamp/><x a=">" b=\'<\'>t</x></a>');
	put('xml', 'broken', '<a><kind>un&amp;safe</kind><kind>never closed');
}
# the asymmetric providers: well-formed tokens and messages (the signatures
# are not the keys', so the fuzzer starts from the parsers: JWS, x5c, the
# SNS canonical string, certificate URLs)
{
	my $b64u = sub { my $s = encode_base64($_[0], ''); $s =~ tr{+/}{-_}; $s =~ s/=+$//; $s };
	my $jws = sub { join '.', $b64u->($_[0]), $b64u->($_[1]), $b64u->("\x5a" x $_[2]) };
	my $pb = '{"webhook_type":"TRANSACTIONS","webhook_code":"DEFAULT_UPDATE","item_id":"it1"}';
	push @v, ['plaid', req('plaid', [['Plaid-Verification', $jws->('{"alg":"ES256","kid":"fuzz-ec","typ":"JWT"}',
		'{"iat":' . $now . ',"request_body_sha256":"' . Digest::SHA::sha256_hex($pb) . '"}', 64)]], $pb)];
	my $ps = '{"message":{"data":"aGk=","messageId":"m1","publishTime":"2023-11-14T22:13:20Z"},"subscription":"projects/p/subscriptions/s"}';
	push @v, ['pubsub', req('pubsub', [['Authorization', 'Bearer ' . $jws->('{"alg":"RS256","kid":"fuzz-rsa","typ":"JWT"}',
		'{"aud":"https://fuzz.example/ps","iss":"https://accounts.google.com","email":"fuzz-secret-0123456789","email_verified":true,"iat":' . $now . ',"exp":' . ($now + 3600) . '}', 256)]], $ps)];
	my $pp = '{"id":"WH-1","event_type":"PAYMENT.SALE.COMPLETED","resource":{"id":"r1"}}';
	push @v, ['paypal', req('paypal', [['PAYPAL-TRANSMISSION-ID', 't1'], ['PAYPAL-TRANSMISSION-TIME', '2023-11-14T22:13:20Z'],
		['PAYPAL-TRANSMISSION-SIG', encode_base64("\x5a" x 256, '')], ['PAYPAL-AUTH-ALGO', 'SHA256withRSA'],
		['PAYPAL-CERT-URL', 'https://api.paypal.com/v1/notifications/certs/CERT-1']], $pp)];
	push @v, ['sns', req('sns', [['x-amz-sns-message-type', 'Notification']],
		'{"Type":"Notification","MessageId":"m1","TopicArn":"fuzz-secret-0123456789","Subject":"s","Message":"hi\\nthere","Timestamp":"2023-11-14T22:13:20.000Z","SignatureVersion":"2","Signature":"' . encode_base64("\x5a" x 256, '') . '","SigningCertURL":"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123abcd.pem"}')];
	my $der = encode_base64("0\x82\x01\x00" . ("\x00" x 16), '');
	push @v, ['apple', req('apple', [], '{"signedPayload":"' . $jws->('{"alg":"ES256","x5c":["' . $der . '","' . $der . '","' . $der . '"]}',
		'{"notificationType":"DID_RENEW","notificationUUID":"u1","data":{"bundleId":"fuzz-secret-0123456789"}}', 64) . '"}')];
}
# an App Store-shaped x5c of real certificates (root, intermediate, leaf with
# Apple's marker extensions; made anew each run), so that the fuzzer mutates
# DER certificates and their extensions, not only the JWS around them
{
	my $b64u = sub { my $s = encode_base64($_[0], ''); $s =~ tr{+/}{-_}; $s =~ s/=+$//; $s };
	my $d = "/tmp/hookinbox-seed-x5c-$$";
	make_path($d);
	my $sh = sub { system("$_[0] 2>/dev/null") == 0 or die "$_[0] failed" };
	open my $e, '>', "$d/int.ext" or die $!;
	print $e "basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n1.2.840.113635.100.6.2.1=ASN1:NULL\n";
	open $e, '>', "$d/leaf.ext" or die $!;
	print $e "1.2.840.113635.100.6.11.1=ASN1:NULL\n";
	close $e;
	my $ec = '-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes';
	$sh->("openssl req -x509 $ec -keyout $d/root.key -out $d/root.pem -days 3650 -subj /CN=seed-root");
	$sh->("openssl req $ec -keyout $d/int.key -out $d/int.csr -subj /CN=seed-int");
	$sh->("openssl x509 -req -in $d/int.csr -CA $d/root.pem -CAkey $d/root.key -set_serial 2 -extfile $d/int.ext -days 3650 -out $d/int.pem");
	$sh->("openssl req $ec -keyout $d/leaf.key -out $d/leaf.csr -subj /CN=seed-leaf");
	$sh->("openssl x509 -req -in $d/leaf.csr -CA $d/int.pem -CAkey $d/int.key -set_serial 3 -extfile $d/leaf.ext -days 3650 -out $d/leaf.pem");
	my @x5c = map { encode_base64(`openssl x509 -in $d/$_.pem -outform DER`, '') } qw(leaf int root);
	system('rm', '-rf', $d);
	my $h = '{"alg":"ES256","x5c":[' . join(',', map { qq("$_") } @x5c) . ']}';
	my $p = '{"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"u2","signedDate":1700000000000,"data":{"bundleId":"fuzz-secret-0123456789"}}';
	push @v, ['apple-x5c', req('apple', [['Content-Type', 'application/json']],
		'{"signedPayload":"' . join('.', $b64u->($h), $b64u->($p), $b64u->("\x5a" x 64)) . '"}')];
}
push @v, ['graph', req('graph', [], '{"value":[{"subscriptionId":"s1","clientState":"fuzz-secret-0123456789","changeType":"created","resourceData":{"id":"r1"}},{"clientState":"fuzz-secret-0123456789","lifecycleEvent":"reauthorizationRequired"}]}')];
push @v, ['graph-validation', req('graph', [['?', 'validationToken=Validation%3a+Testing+client']], '')];
# hostile shapes
push @v, ['deep', req('stripe', [['Stripe-Signature', "t=$now,v1=00"]], '{"id":"x","a":' . ('[' x 200) . (']' x 200) . '}')];
push @v, ['utf8', req('github', [['X-GitHub-Delivery', "\xc3\x28\xed\xa0\x80"], ['X-GitHub-Event', "push\x7f"]], "{\"k\":\"\xff\xfe\"}")];
push @v, ['entries', req('stripe', [['Stripe-Signature', "t=$now," . join(',', ('v1=00') x 100)]], '{}')];
push @v, ['nul', req('paddle', [['Paddle-Signature', "ts=1;h1=zz;ts=2"]], "{\"event_id\":\"a\x00b\"}\x00")];
push @v, ['future', req('slack', [['X-Slack-Signature', 'v0=' . ('0' x 64)], ['X-Slack-Request-Timestamp', '999999999999']], '{}')];
for my $x (@v) {
	put('verify', $x->[0], $x->[1]);
	put('envelope', $x->[0], $x->[1]);
}

# content length
my %cl = (zero => '0', small => '42', max18 => '999999999999999999', over18 => '9999999999999999999',
	sign => '+5', neg => '-1', space => ' 12', hex => '0x10', empty => '', lead0 => '000123', nul => "12\x003");
put('content_length', $_, $cl{$_}) for keys %cl;

# form bodies
my %form = (simple => 'a=1&b=2', plus => 'text=hello+world&x=%41%42', badpct => 'a=%zz&b=%4&c=%',
	nul => 'k%00=v%00&&&=&k', dups => 'b=2&a=1&b=2&a=0&a=1', payload => $ghform, slack => $slack_form,
	twilio => $twilio, mandrill => 'mandrill_events=%5B%7B%22event%22%3A%22send%22%7D%5D',
	braintree => 'bt_signature=pk%7Cab&bt_payload=PG5vdGlmaWNhdGlvbi8%2B%0A');
put('form', $_, $form{$_}) for keys %form;

# configurations
put('conf', 'full', <<"CONF");
; a configuration using every key
[database]
conninfo = host=/run/postgresql dbname=hookinbox user=hookinbox_intake
[intake]
max_body = 1048576
tolerance = 300
threads = 4
[log]
format = json
[worker]
concurrency = 8
batch = 50
lease = 120
backoff_base = 2
backoff_cap = 600
retry_window = 3600
metrics_file = metrics.prom
[endpoint stripe-live]
provider = stripe
secret_file = secrets
account = acct_123
environment = live
max_body = 4096
[endpoint acme]
provider = hmac
secret_file = secrets
header = X-Acme-Signature
algorithm = sha512
encoding = base64
prefix = sha512=
id_field = data.id
type_header = X-Acme-Event
object_field = data.object.id
version_field = created
[endpoint tw]
provider = twilio
secret_file = secrets
public_url = https://example.com/hooks/tw
[route billing]
endpoints = stripe-live, acme
events = invoice.* charge.*
url = https://billing.internal/hook
secret_file = secrets
timeout = 30
max_attempts = 20
order = object
key = object-type
[route audit]
endpoint = tw
handler = sql:audit.record
CONF
put('conf', 'minimal', "[database]\nconninfo = dbname=x\n");
put('conf', 'bad-mode', "[database]\nconninfo = dbname=x\n[endpoint e]\nprovider = github\nsecret_file = open\n");
put('conf', 'empty-secret', "[database]\nconninfo = dbname=x\n[endpoint e]\nprovider = gitlab\nsecret_file = empty\n");
put('conf', 'errors', "[database]\nconninfo = x\n[endpoint bad name]\nprovider = nope\n[route r]\nhandler = sql:Bad\n");
put('conf', 'syntax', "[database\nconninfo\n  [intake]  \nmax_body = -1\nthreads = 999999999999999999999\n");
put('conf', 'twice', "[database]\nconninfo = x\n[endpoint a]\nprovider = github\nsecret_file = secrets\n[endpoint a]\nprovider = github\n");
put('conf', 'longline', "[database]\nconninfo = " . ('x' x 5000) . "\n[" . ('s' x 300) . "]\n");
