# SPDX-License-Identifier: ISC
# The batch class (adyen, sendgrid, hubspot) and mailgun through lighttpd,
# the responder and PostgreSQL: each event of a verified batch is its own
# inbox row under its own delivery key, with its own bytes; a redelivered
# batch stores nothing new, a partial overlap only its new events; one bad
# event (unsigned, badly signed, without an id) refuses the whole batch
# and stores nothing; the answer is the provider's ("[accepted]") or the
# intake ids.  Mailgun's token is its delivery key: a replayed token stores
# nothing, whatever event data comes with it.  The database down, a batch
# is answered 503 and nothing of it is stored; in group-commit mode too it
# is one statement.  Then hookinbox-send plays each of them.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Sign;
use JSON::PP;
use File::Temp qw(tempdir);

my $top = HookTest::top();
my $tmp = tempdir(CLEANUP => 1);
my @adyen_keys = ('44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
	'0A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F9');
my (@sg_pem, @sg_pub, @sg_priv);
for my $i (0, 1) {
	my ($pem, $pub, $priv) = HookTest::Sign::ec_keypair($tmp, "sg$i");
	push @sg_pem, $pem;
	push @sg_pub, $pub;
	push @sg_priv, $priv;
}
my $HUBSPOT_URL = 'https://hooks.example.test/in/hubspot';
my @hubspot_secrets = ('hubspot-client-secret-old-0123', 'hubspot-client-secret-new-3210');
my @mailgun_keys = ('key-mailgun-signing-old-0123456', 'key-mailgun-signing-new-6543210');

my $t = HookTest->new(procs => 2, endpoints => {
	adyen => { provider => 'adyen', secrets => \@adyen_keys },
	sendgrid => { provider => 'sendgrid', secrets => \@sg_pub },
	hubspot => { provider => 'hubspot', secrets => \@hubspot_secrets, public_url => $HUBSPOT_URL },
	mailgun => { provider => 'mailgun', secrets => \@mailgun_keys },
});

sub rows {
	my ($ep) = @_;
	return $t->sql("select count(*) from hookinbox.inbox where endpoint = '$ep'");
}

sub keys_of {
	my ($ep) = @_;
	return $t->sql("select string_agg(event_id, ' ' order by event_id) from hookinbox.inbox where endpoint = '$ep'");
}

# ---------------------------------------------------------------- adyen

sub adyen_fields {
	my ($n, %o) = @_;
	return (pspReference => "88310000000000$n", merchantAccountCode => 'TestMerchant',
		merchantReference => "order-$n", value => 1000 + $n, currency => 'EUR',
		eventCode => 'AUTHORISATION', success => 'true', %o);
}

sub adyen_body {
	my (@items) = @_;
	return qq({"live":"false","notificationItems":[) . join(',', @items) . ']}';
}

subtest 'adyen: one row per item, answered [accepted]' => sub {
	my @items = map { HookTest::Sign::adyen_item($adyen_keys[0], undef, adyen_fields($_)) } 1 .. 3;
	my $r = $t->post('adyen', adyen_body(@items), { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'a batch of 3 items: 200');
	is($r->{content}, '[accepted]', 'the answer is exactly [accepted]');
	is(rows('adyen'), 3, 'three rows');
	is(keys_of('adyen'), join(' ', map { "AUTHORISATION:88310000000000$_:true" } 1 .. 3),
		'each under eventCode:pspReference:success');
	(my $inner = $items[1]) =~ s/^\{"NotificationRequestItem"://;
	$inner =~ s/\}$//;
	is($t->sql("select convert_from(body, 'UTF8') from hookinbox.inbox where event_id = 'AUTHORISATION:883100000000002:true'"),
		$inner, "an item's row holds the item's exact bytes");
	is($t->sql("select event_type || '|' || object_id from hookinbox.inbox where event_id = 'AUTHORISATION:883100000000002:true'"),
		'AUTHORISATION|883100000000002', 'type and object id');

	$r = $t->post('adyen', adyen_body(@items), { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'the same batch again: 200');
	is($r->{content}, '[accepted]', 'answered [accepted]');
	is(rows('adyen'), 3, 'a redelivered batch stores nothing');

	# items 2 and 3 again with a new one, signed with the other key (rotation)
	my @overlap = map { HookTest::Sign::adyen_item($adyen_keys[1], undef, adyen_fields($_)) } 2 .. 4;
	$r = $t->post('adyen', adyen_body(@overlap), { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'a partial overlap: 200');
	is(rows('adyen'), 4, 'only the new item is stored');

	# a capture of item 1: the payment is its originalReference
	my @cap = (HookTest::Sign::adyen_item($adyen_keys[0], undef, adyen_fields(9, eventCode => 'CAPTURE',
		originalReference => '883100000000001')));
	$r = $t->post('adyen', adyen_body(@cap), { 'Content-Type' => 'application/json' });
	is($t->sql("select object_id from hookinbox.inbox where event_id = 'CAPTURE:883100000000009:true'"),
		'883100000000001', "a modification's object is its originalReference");
};

subtest 'adyen: one bad item refuses the batch, nothing stored' => sub {
	my $before = rows('adyen');
	my $good = HookTest::Sign::adyen_item($adyen_keys[0], undef, adyen_fields(20));
	my $forged = HookTest::Sign::adyen_item($adyen_keys[0], HookTest::Sign::adyen_item_sig($adyen_keys[0], adyen_fields(21, value => 1)),
		adyen_fields(21));
	my $unsigned = HookTest::Sign::adyen_item($adyen_keys[0], '', adyen_fields(22));
	my $r = $t->post('adyen', adyen_body($good, $forged), { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'an item whose signed amount was changed: 401');
	$r = $t->post('adyen', adyen_body($good, $unsigned), { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'an item without hmacSignature: 401');
	$r = $t->post('adyen', adyen_body(), { 'Content-Type' => 'application/json' });
	is($r->{status}, 400, 'no items: 400');
	$r = $t->post('adyen', '{"live":"false"}', { 'Content-Type' => 'application/json' });
	is($r->{status}, 400, 'not a batch: 400');
	is(rows('adyen'), $before, 'nothing stored');
};

# ---------------------------------------------------------------- sendgrid

sub sg_event {
	my ($n) = @_;
	return qq({"email":"a$n\@example.com","timestamp":1714723200,"smtp-id":"<$n\@ismtpd>","event":"delivered",)
		. qq("sg_event_id":"sg-ev-$n","sg_message_id":"sg-msg-$n"});
}

subtest 'sendgrid: one row per event, the intake ids answered' => sub {
	my $body = '[' . join(',', map { sg_event($_) } 1 .. 3) . ']';
	my $r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($sg_pem[0], $body) });
	is($r->{status}, 200, 'a batch of 3 events: 200');
	my @ev = @{ $r->{json}{events} // [] };
	is(scalar(@ev), 3, 'three ids answered');
	ok(!grep({ $_->{duplicate} } @ev), 'none a duplicate');
	is(rows('sendgrid'), 3, 'three rows');
	is($t->sql("select string_agg(id::text, ' ' order by event_id) from hookinbox.inbox where endpoint = 'sendgrid'"),
		join(' ', map { $_->{id} } @ev), 'the answered ids are the rows, in order');
	is($t->sql("select event_type || '|' || object_id || '|' || event_version || '|' || convert_from(body, 'UTF8') from hookinbox.inbox where event_id = 'sg-ev-2'"),
		'delivered|sg-msg-2|1714723200|' . sg_event(2), "the event's envelope and its exact bytes");

	$r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($sg_pem[1], $body) });
	is($r->{status}, 200, 'redelivered (signed with the other key): 200');
	is_deeply([map { $_->{duplicate} ? 1 : 0 } @{ $r->{json}{events} }], [1, 1, 1], 'every event a duplicate');
	is_deeply([map { $_->{id} } @{ $r->{json}{events} }], [map { $_->{id} } @ev], 'of the same rows');
	is(rows('sendgrid'), 3, 'nothing new stored');

	my $overlap = '[' . join(',', map { sg_event($_) } 3, 4) . ']';
	$r = $t->post('sendgrid', $overlap, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($sg_pem[0], $overlap) });
	is_deeply([map { $_->{duplicate} ? 1 : 0 } @{ $r->{json}{events} }], [1, 0], 'a partial overlap: the old event a duplicate, the new one stored');
	is(rows('sendgrid'), 4, 'one new row');

	my $twice = '[' . join(',', map { sg_event($_) } 5, 5) . ']';
	$r = $t->post('sendgrid', $twice, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($sg_pem[0], $twice) });
	my @tw = @{ $r->{json}{events} // [] };
	ok(@tw == 2 && !$tw[0]{duplicate} && $tw[1]{duplicate} && $tw[0]{id} == $tw[1]{id},
		'the same event twice in one batch: one row, the second answered as its duplicate');
	is(rows('sendgrid'), 5, 'one row for it');
};

subtest 'sendgrid: refusals store nothing' => sub {
	my $before = rows('sendgrid');
	my $body = '[' . sg_event(10) . ',{"event":"open","email":"x@example.com"}]';
	my $r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($sg_pem[0], $body) });
	is($r->{status}, 400, 'an event without sg_event_id: 400');
	is($r->{json}{error}, 'no event id', 'saying why');
	$body = '[' . sg_event(11) . ']';
	my %h = HookTest::Sign::sendgrid_headers($sg_pem[0], $body);
	$r = $t->post('sendgrid', $body . ' ', { 'Content-Type' => 'application/json', %h });
	is($r->{status}, 401, 'a tampered body: 401');
	my ($other) = (HookTest::Sign::ec_keypair($tmp, 'sgx'))[0];
	$r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($other, $body) });
	is($r->{status}, 401, 'another key: 401');
	$r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'unsigned: 401');
	$r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', %h, 'X-Twilio-Email-Event-Webhook-Signature' => 'bm90IGEgc2ln' });
	is($r->{status}, 401, 'not a DER signature: 401');
	is(rows('sendgrid'), $before, 'nothing stored');
};

# ---------------------------------------------------------------- hubspot

sub hs_event {
	my ($n, $sub) = @_;
	$sub //= 77;
	return qq({"eventId":$n,"subscriptionId":$sub,"portalId":62515,"appId":54321,"occurredAt":1714723200000,)
		. qq("subscriptionType":"contact.propertyChange","attemptNumber":0,"objectId":1246965,"propertyName":"email","changeSource":"CRM"});
}

subtest 'hubspot: one row per event, public_url and the query signed' => sub {
	my $body = '[' . join(',', hs_event(1001), hs_event(1002), hs_event(1001, 78)) . ']';
	my $path = '/hubspot?portal=62515';
	my $url = $t->httpd->url . $path;
	my $r = $t->post(undef, $body, { 'Content-Type' => 'application/json',
		HookTest::Sign::hubspot_headers($hubspot_secrets[0], "$HUBSPOT_URL?portal=62515", $body) }, url => $url);
	is($r->{status}, 200, 'a batch of 3 events: 200');
	is(scalar(@{ $r->{json}{events} // [] }), 3, 'three ids answered');
	is(keys_of('hubspot'), '77:1001 77:1002 78:1001', 'each under subscriptionId:eventId');
	is($t->sql("select event_type || '|' || object_id || '|' || event_version from hookinbox.inbox where event_id = '77:1002'"),
		'contact.propertyChange|1246965|1714723200000', 'type, object and version');
	$r = $t->post(undef, $body, { 'Content-Type' => 'application/json',
		HookTest::Sign::hubspot_headers($hubspot_secrets[1], "$HUBSPOT_URL?portal=62515", $body) }, url => $url);
	is($r->{status}, 200, 'redelivered with the other secret: 200');
	is(rows('hubspot'), 3, 'nothing new stored');
	$r = $t->post(undef, $body, { 'Content-Type' => 'application/json',
		HookTest::Sign::hubspot_headers($hubspot_secrets[0], $HUBSPOT_URL, $body) }, url => $url);
	is($r->{status}, 401, 'signed without the query: 401');
	$r = $t->post(undef, $body, { 'Content-Type' => 'application/json',
		HookTest::Sign::hubspot_headers($hubspot_secrets[0], "$HUBSPOT_URL?portal=62515", $body, (time() - 400) * 1000) }, url => $url);
	is($r->{status}, 401, 'a timestamp 400 s old: 401');
	$r = $t->post(undef, $body, { 'Content-Type' => 'application/json',
		HookTest::Sign::hubspot_headers($hubspot_secrets[0], "$HUBSPOT_URL?portal=62515", $body, (time() + 400) * 1000) }, url => $url);
	is($r->{status}, 401, 'a timestamp 400 s ahead: 401');
	is(rows('hubspot'), 3, 'nothing stored');
};

# ---------------------------------------------------------------- mailgun

subtest 'mailgun: the token is the delivery key' => sub {
	my $ev = '{"id":"CPgfbmQMTCKtHW6uIWtuVe","event":"delivered","timestamp":1521472262.908181,"message":{"headers":{"message-id":"20130503182626.18666.16540@example.mailgun.org"}}}';
	my $token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0';
	my $body = HookTest::Sign::mailgun_body($mailgun_keys[0], $token, $ev);
	my $r = $t->post('mailgun', $body, { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'a signed event: 200');
	is($t->sql("select event_id || '|' || event_type || '|' || object_id from hookinbox.inbox where endpoint = 'mailgun'"),
		"$token|delivered|20130503182626.18666.16540\@example.mailgun.org", 'stored under its token');
	(my $forged = $body) =~ s/"delivered"/"failed"/;
	$r = $t->post('mailgun', $forged, { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'the token replayed with other event data: 200');
	ok($r->{json}{duplicate}, 'answered as a duplicate');
	is(rows('mailgun'), 1, 'and not stored');
	$r = $t->post('mailgun', HookTest::Sign::mailgun_body($mailgun_keys[1], 'b' x 50, $ev), { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'a new token, signed with the other key: stored');
	$r = $t->post('mailgun', HookTest::Sign::mailgun_body('key-wrong-0123456789', 'c' x 50, $ev), { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'another key: 401');
	$r = $t->post('mailgun', qq({"event-data":$ev}), { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'no signature: 401');
	$r = $t->post('mailgun', qq({"signature":{"timestamp":"x","token":"t","signature":"00"},"event-data":$ev}), { 'Content-Type' => 'application/json' });
	is($r->{status}, 400, 'a malformed signature: 400');
	is(rows('mailgun'), 2, 'two rows in all');
};

# ---------------------------------------------------------------- storage down, group commit

subtest 'a batch is stored whole or not at all' => sub {
	my $body = '[' . join(',', map { sg_event($_) } 30 .. 32) . ']';
	my %h = HookTest::Sign::sendgrid_headers($sg_pem[0], $body);
	my $before = rows('sendgrid');
	$t->pg->stop;
	my $r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', %h });
	$t->pg->start;
	is($r->{status}, 503, 'the database down: 503, the provider retries the batch');
	is(rows('sendgrid'), $before, 'nothing stored');
	$r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', %h });
	is($r->{status}, 200, 'the retry: 200');
	is(rows('sendgrid'), $before + 3, 'every event stored');

	# group commit: a provider batch passes by the group's batches, in one statement of its own
	$t->{o}{intake} = { threads => 4 };
	# and for hookinbox-send below: HubSpot signs the URL requested, here the responder's own
	$t->{o}{endpoints}{hubspot}{public_url} = $t->url('hubspot');
	$t->write_config;
	$t->httpd->restart;
	$body = '[' . join(',', map { sg_event($_) } 32 .. 35) . ']';
	$r = $t->post('sendgrid', $body, { 'Content-Type' => 'application/json', HookTest::Sign::sendgrid_headers($sg_pem[0], $body) });
	is($r->{status}, 200, 'with [intake] threads = 4: 200');
	is_deeply([map { $_->{duplicate} ? 1 : 0 } @{ $r->{json}{events} }], [1, 0, 0, 0], 'one old event, three new');
	is(rows('sendgrid'), $before + 6, 'three more rows');
};

# ---------------------------------------------------------------- hookinbox-send

subtest 'hookinbox-send plays each provider' => sub {
	my $send = "$top/obj/test/hookinbox-send";
	my %secret = (adyen => $adyen_keys[1], sendgrid => $sg_priv[1], hubspot => $hubspot_secrets[1], mailgun => $mailgun_keys[1]);
	my %payload = (
		adyen => adyen_body(map { HookTest::Sign::adyen_item($adyen_keys[0], '', adyen_fields($_)) } 50, 51),
		sendgrid => '[' . join(',', map { sg_event($_) } 50, 51) . ']',
		hubspot => '[' . hs_event(5050) . ']',
		mailgun => '{"event":"opened","message":{"headers":{"message-id":"send@example.org"}}}',
	);
	HookTest::record_secret(values %secret);
	for my $p (sort keys %secret) {
		my $f = "$tmp/secret-$p";
		open my $fh, '>', $f or die $!;
		print $fh "$secret{$p}\n";
		close $fh;
		chmod 0600, $f;
		open $fh, '>', "$tmp/payload-$p" or die $!;
		print $fh $payload{$p};
		close $fh;
		my $before = rows($p);
		my $url = $t->url($p);
		my $out = `$send --provider $p --secret-file $f --url $url $tmp/payload-$p 2>&1`;
		is($? >> 8, 0, "$p: hookinbox-send exit 0") or diag($out);
		like($out, qr/^1 200 /, "$p: 200");
		is(rows($p), $before + ($p eq 'adyen' || $p eq 'sendgrid' ? 2 : 1), "$p: its events stored");
	}
};

done_testing();
