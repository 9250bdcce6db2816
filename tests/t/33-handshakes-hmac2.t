# SPDX-License-Identifier: ISC
# The handshakes and refusals of Dropbox, X (Twitter), Trello, Mandrill,
# Asana, Twitch EventSub, Xero, DocuSign and Braintree (and Okta's and
# Meta's verification GETs) through lighttpd and
# the responder: each check of the endpoint is answered exactly as the
# provider checks it (GET challenge, CRC, HEAD, X-Hook-Secret echo, Twitch's
# challenge, Xero's empty answers) and stores nothing, whatever it carries;
# refused deliveries store nothing; signed deliveries are stored under the
# keys docs/providers.md gives, and a retry (or a re-encoded form) is their
# duplicate.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Sign;
use Digest::SHA qw(hmac_sha256 sha256_hex);
use MIME::Base64 qw(encode_base64);
use JSON::PP;

my %s = map { $_ => "$_-secret-0123456789" } qw(dropbox twitter trello mandrill asana twitch xero docusign braintree);
HookTest::record_secret(values %s, 'okta-hook-authorization-0123');
my $trello_url = 'https://hooks.example.com/in/trello';
my $mandrill_url = 'https://hooks.example.com/in/mandrill?k=1';
my $t = HookTest->new(procs => 1, endpoints => {
	(map { $_ => { provider => $_, secrets => [$s{$_}] } } qw(dropbox twitter asana twitch xero braintree)),
	trello => { provider => 'trello', secrets => [$s{trello}], public_url => $trello_url },
	mandrill => { provider => 'mandrill', secrets => [$s{mandrill}], public_url => $mandrill_url },
	docusign => { provider => 'docusign', secrets => ['docusign-old-key-0123456789', $s{docusign}] },
	okta => { provider => 'okta', secrets => ['okta-hook-authorization-0123'] },
	meta => { provider => 'meta', secrets => ['meta-app-secret-0123456789'] },
});
my $json = { 'Content-Type' => 'application/json' };
my $form = { 'Content-Type' => 'application/x-www-form-urlencoded' };

sub rows { $t->sql('select count(*) from hookinbox.inbox') }
sub row { my ($id) = @_; $t->sql("select event_id||'|'||coalesce(event_type,'-')||'|'||coalesce(object_id,'-') from hookinbox.inbox where id = " . int($id)) }
sub get { my ($ep, $q, %o) = @_; $t->post(undef, '', {}, method => $o{method} // 'GET', url => $t->url($ep) . ($q // '')) }
sub send_signed { my ($ep, $body, $ct, @h) = @_; $t->post($ep, $body, { %$ct, @h }) }

my $before = rows();

# ---- Dropbox: GET ?challenge= echoed as text/plain, nosniff
my $r = get('dropbox', '?challenge=ab%2Bc1-x');
is($r->{status}, 200, 'dropbox challenge: 200');
is($r->{content}, 'ab+c1-x', 'dropbox challenge: echoed decoded');
like($r->{headers}{'content-type'}, qr{^text/plain}, 'dropbox challenge: text/plain');
is($r->{headers}{'x-content-type-options'}, 'nosniff', 'dropbox challenge: nosniff');
is(get('dropbox')->{status}, 400, 'dropbox GET without challenge: 400');
is(get('dropbox', '?challenge=' . ('a' x 300))->{status}, 400, 'dropbox challenge over 255 bytes: 400');
my $dbx = '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345678]}}';
$r = send_signed('dropbox', $dbx, $json, HookTest::Sign::dropbox_sig($s{dropbox}, $dbx));
is($r->{status}, 200, 'dropbox notification: stored');
is(row($r->{json}{id}), 'sha256:' . sha256_hex($dbx) . '|-|-', 'dropbox: keyed by the body hash');
my $dbx_id = $r->{json}{id};
$r = send_signed('dropbox', $dbx, $json, HookTest::Sign::dropbox_sig($s{dropbox}, $dbx));
ok($r->{json}{duplicate} && $r->{json}{id} == $dbx_id, 'dropbox retry: a duplicate');
is(send_signed('dropbox', $dbx, $json, HookTest::Sign::dropbox_sig('wrong-secret-000', $dbx))->{status}, 401, 'dropbox bad signature: 401');

# ---- X (Twitter): GET ?crc_token= answered with its HMAC
$r = get('twitter', '?crc_token=Y3JjLXRva2Vu');
is($r->{status}, 200, 'twitter CRC: 200');
is_deeply(eval { decode_json($r->{content}) },
	{ response_token => 'sha256=' . encode_base64(hmac_sha256('Y3JjLXRva2Vu', $s{twitter}), '') },
	'twitter CRC: response_token is sha256=<base64 HMAC-SHA256 of crc_token>');
is(get('twitter', '?other=1')->{status}, 400, 'twitter GET without crc_token: 400');
my $tw = '{"for_user_id":"2244994945","favorite_events":[{"id":"a7ba59eab0bfcba386f7acedac279542","created_at":"Mon Mar 26 16:33:26 +0000 2018"}]}';
$r = send_signed('twitter', $tw, $json, HookTest::Sign::twitter_sig($s{twitter}, $tw));
is($r->{status}, 200, 'twitter activity: stored');
is(send_signed('twitter', $tw, $json, 'x-twitter-webhooks-signature' => 'sha256=' . encode_base64(hmac_sha256($tw, 'nope-secret'), ''))->{status}, 401,
	'twitter bad signature: 401');

# ---- Trello: HEAD 200, POST signed over body + callbackURL
$r = get('trello', '', method => 'HEAD');
is($r->{status}, 200, 'trello HEAD: 200');
is($r->{content} // '', '', 'trello HEAD: no body');
is(get('trello')->{status}, 405, 'trello GET: 405');
my $tr = '{"action":{"id":"5f8a2b3c4d5e6f7a8b9c0d1e","type":"updateCard","date":"2024-05-03T08:00:00.000Z","data":{}},"model":{"id":"5f8a2b3c4d5e6f7a8b9c0000","name":"Board"}}';
$r = send_signed('trello', $tr, $json, HookTest::Sign::trello_sig($s{trello}, $tr, $trello_url));
is($r->{status}, 200, 'trello action: stored');
is(row($r->{json}{id}), '5f8a2b3c4d5e6f7a8b9c0d1e|updateCard|5f8a2b3c4d5e6f7a8b9c0000', 'trello: action id, type, model id');
is(send_signed('trello', $tr, $json, HookTest::Sign::trello_sig($s{trello}, $tr, 'https://elsewhere.example/x'))->{status}, 401,
	'trello signed for another callbackURL: 401');

# ---- Mandrill: HEAD 200; the URL and sorted form parameters signed
is(get('mandrill', '', method => 'HEAD')->{status}, 200, 'mandrill HEAD: 200');
my $events = '[{"event":"send","_id":"exampleaaaaaaaaaaaaaaaaaaaaaaaaa","ts":1714723200,"msg":{"email":"a@example.com"}},{"event":"send","_id":"examplebbbbbbbbbbbbbbbbbbbbbbbbb","ts":1714723201}]';
my $mbody = 'mandrill_events=' . HookTest::Sign::form_escape($events);
$r = send_signed('mandrill', $mbody, $form, HookTest::Sign::mandrill_sig($s{mandrill}, $mandrill_url, mandrill_events => $events));
is($r->{status}, 200, 'mandrill batch: stored');
is(row($r->{json}{id}), 'sha256:' . sha256_hex($events) . '|send|-', 'mandrill: one row keyed by the decoded events\' hash, their common event');
my $m_id = $r->{json}{id};
(my $reenc = $mbody) =~ s/send/%73end/;
$r = send_signed('mandrill', $reenc, $form, HookTest::Sign::mandrill_sig($s{mandrill}, $mandrill_url, mandrill_events => $events));
ok($r->{json}{duplicate} && $r->{json}{id} == $m_id, 'mandrill: the same events encoded otherwise are a duplicate');
is(send_signed('mandrill', $mbody, $form, HookTest::Sign::mandrill_sig($s{mandrill}, 'https://hooks.example.com/in/mandrill', mandrill_events => $events))->{status},
	401, 'mandrill signed for another URL: 401');

# ---- Asana: the X-Hook-Secret handshake echoed, never stored, never a key
my $rows_before_asana = rows();
$r = $t->post('asana', '', { 'X-Hook-Secret' => 'b537207f20cbfa02357cf448134da559' });
is($r->{status}, 200, 'asana handshake: 200');
is($r->{headers}{'x-hook-secret'}, 'b537207f20cbfa02357cf448134da559', 'asana handshake: X-Hook-Secret echoed');
my $as = '{"events":[{"action":"changed","resource":{"gid":"1234","resource_type":"task"},"created_at":"2024-05-03T08:00:00.000Z"}]}';
$r = $t->post('asana', $as, { %$json, 'X-Hook-Secret' => 'attacker-chosen-secret' });
is($r->{status}, 200, 'asana handshake with a body: answered');
is(rows(), $rows_before_asana, 'asana handshakes: nothing stored, whatever they carry');
is(send_signed('asana', $as, $json, HookTest::Sign::asana_sig('attacker-chosen-secret', $as))->{status}, 401,
	'asana: a body signed with a handshake\'s secret is refused (secret_file holds the key)');
is($t->post('asana', "x\r\nSet-Cookie: a=b", { 'X-Hook-Secret' => "a\tb" })->{status}, 400, 'asana: a secret with a control character is not echoed');
$r = send_signed('asana', $as, $json, HookTest::Sign::asana_sig($s{asana}, $as));
is($r->{status}, 200, 'asana events: stored');

# ---- Twitch EventSub
my $ver = '{"challenge":"pogchamp-kappa-360noscope-vohiyo","subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","status":"webhook_callback_verification_pending","type":"channel.follow","version":"2"}}';
$r = send_signed('twitch', $ver, $json, HookTest::Sign::twitch_sig($s{twitch}, 'e76c6bd4-55c9-4987-8304-da1588d8988b', $ver, type => 'webhook_callback_verification'));
is($r->{status}, 200, 'twitch verification: 200');
is($r->{content}, 'pogchamp-kappa-360noscope-vohiyo', 'twitch verification: the challenge, exactly');
like($r->{headers}{'content-type'}, qr{^text/plain}, 'twitch verification: text/plain');
is(send_signed('twitch', $ver, $json, HookTest::Sign::twitch_sig('wrong-secret', 'e76c6bd4-55c9-4987-8304-da1588d8988b', $ver, type => 'webhook_callback_verification'))->{status},
	401, 'twitch verification with a bad signature: 401');
my $tn = '{"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","type":"channel.follow","version":"2"},"event":{"user_id":"1337","broadcaster_user_id":"12826","followed_at":"2024-05-03T08:00:00.000Z"}}';
$r = send_signed('twitch', $tn, $json, HookTest::Sign::twitch_sig($s{twitch}, 'befa7b53-d79d-478f-86b9-120f112b044e', $tn));
is($r->{status}, 200, 'twitch notification: stored');
is(row($r->{json}{id}), 'befa7b53-d79d-478f-86b9-120f112b044e|channel.follow|f1c2a387-161a-49f9-a165-0f21d7a4e1c4', 'twitch: message id, subscription type and id');
my $tw_id = $r->{json}{id};
$r = send_signed('twitch', $tn, $json, HookTest::Sign::twitch_sig($s{twitch}, 'befa7b53-d79d-478f-86b9-120f112b044e', $tn));
ok($r->{json}{duplicate} && $r->{json}{id} == $tw_id, 'twitch retry (same message id): a duplicate');
is(send_signed('twitch', $tn, $json, HookTest::Sign::twitch_sig($s{twitch}, 'c0ffee00-d79d-478f-86b9-120f112b044e', $tn, time => time - 660))->{status},
	401, 'twitch: 11 minutes old: 401');
$r = send_signed('twitch', $tn, $json, HookTest::Sign::twitch_sig($s{twitch}, '84c1e79a-2a4b-4c13-ba0b-4312293e9308', $tn, type => 'revocation'));
like(row($r->{json}{id}), qr/\|revocation\|/, 'twitch revocation: stored, type revocation');

# ---- Xero: intent to receive, every answer empty
my $itr = '{"events":[],"firstEventSequence":0,"lastEventSequence":0,"entropy":"S0m3r4Nd0mt3xt"}';
$r = send_signed('xero', $itr, $json, HookTest::Sign::xero_sig($s{xero}, $itr));
is($r->{status} . '|' . $r->{content}, '200|', 'xero intent to receive, correctly signed: 200, empty body');
$r = send_signed('xero', $itr, $json, HookTest::Sign::xero_sig('incorrect-key', $itr));
is($r->{status} . '|' . $r->{content}, '401|', 'xero intent to receive, incorrectly signed: 401, empty body');
$r = send_signed('xero', $itr, $json, 'x-xero-signature' => 'not base64!');
is($r->{status} . '|' . $r->{content}, '401|', 'xero malformed signature: 401, empty body');
my $xe = '{"events":[{"resourceUrl":"https://api.xero.com/api.xro/2.0/Contacts/717f2bfc","resourceId":"717f2bfc-c6d4-41fd-b238-3f2f0c0cf777","eventDateUtc":"2024-05-03T08:00:00.000","eventType":"UPDATE","eventCategory":"CONTACT","tenantId":"c2cc9b6e-9458-4c7d-93cc-f02b81b0594f","tenantType":"ORGANISATION"}],"firstEventSequence":7,"lastEventSequence":7,"entropy":"TSGDFTKKHFZAKRSMMFXL"}';
$r = send_signed('xero', $xe, $json, HookTest::Sign::xero_sig($s{xero}, $xe));
is($r->{status} . '|' . $r->{content}, '200|', 'xero event: 200, empty body');
is($t->sql(q{select count(*) from hookinbox.inbox where provider = 'xero'}), 1, 'xero: the event stored, the intent to receive not');

# ---- DocuSign: any numbered header, any key
my $ds = '{"event":"envelope-completed","apiVersion":"v2.1","uri":"/restapi/v2.1/accounts/a/envelopes/e","retryCount":0,"configurationId":10418,"generatedDateTime":"2024-05-03T08:00:00.0000000Z","data":{"accountId":"8d2a0a3b-0000","userId":"5b6c-0000","envelopeId":"93be49ab-afa0-4adf-933c-f752070d71ec"}}';
$r = send_signed('docusign', $ds, $json, HookTest::Sign::docusign_sig($ds, 'another-connect-key-1234', $s{docusign}));
is($r->{status}, 200, 'docusign: the second header matches the second secret');
is(row($r->{json}{id}), '93be49ab-afa0-4adf-933c-f752070d71ec:envelope-completed:2024-05-03T08:00:00.0000000Z|envelope-completed|93be49ab-afa0-4adf-933c-f752070d71ec',
	'docusign: envelope id, event and generation time');
is(send_signed('docusign', $ds, $json, HookTest::Sign::docusign_sig($ds, 'another-connect-key-1234'))->{status}, 401, 'docusign: no key of ours: 401');
is($t->post('docusign', $ds, $json)->{status}, 401, 'docusign: no signature header: 401');

# ---- Braintree
my $xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<notification>\n  <timestamp type=\"datetime\">2024-05-03T08:00:00Z</timestamp>\n  <kind>subscription_went_past_due</kind>\n  <subject>\n    <subscription>\n      <id>sub_1</id>\n      <kind>not-this</kind>\n    </subscription>\n  </subject>\n</notification>\n";
my $payload = encode_base64($xml);    # in lines, as Braintree sends it
$r = $t->post('braintree', HookTest::Sign::braintree_body($s{braintree}, $payload), $form);
is($r->{status}, 200, 'braintree: stored');
is(row($r->{json}{id}), 'sha256:' . sha256_hex($payload) . '|subscription_went_past_due|-', 'braintree: keyed by bt_payload, type its kind');
is($t->sql('select event_version from hookinbox.inbox where id = ' . int($r->{json}{id})), 1714723200000000, 'braintree: version its timestamp');
is($t->post('braintree', HookTest::Sign::braintree_body('not-the-private-key', $payload), $form)->{status}, 401, 'braintree bad signature: 401');
is($t->post('braintree', HookTest::Sign::braintree_body($s{braintree}, $payload . '!'), $form)->{status}, 400, 'braintree payload not base64: 400');
is($t->post('braintree', 'bt_payload=' . HookTest::Sign::form_escape($payload), $form)->{status}, 401, 'braintree without bt_signature: 401');

# ---- Okta: the one-time verification GET, with the hook's Authorization
$r = $t->post('okta', '', { 'X-Okta-Verification-Challenge' => 'm3KhYWnpw3r7wKjL1ZPyYlLkbK8ZSbs-2', Authorization => 'okta-hook-authorization-0123' }, method => 'GET');
is($r->{status}, 200, 'okta verification: 200');
is_deeply(eval { decode_json($r->{content}) }, { verification => 'm3KhYWnpw3r7wKjL1ZPyYlLkbK8ZSbs-2' }, 'okta verification: the challenge answered');
is($t->post('okta', '', { 'X-Okta-Verification-Challenge' => 'x', Authorization => 'not-ours-0000' }, method => 'GET')->{status}, 400,
	'okta verification with another Authorization: refused');

# ---- Meta: the subscription's GET hub.challenge
$r = get('meta', '?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock');
is($r->{status} . '|' . $r->{content}, '200|1158201444', 'meta verification: the challenge, exactly');
like($r->{headers}{'content-type'}, qr{^text/plain}, 'meta verification: text/plain');
is(get('meta', '?hub.challenge=1158201444')->{status}, 400, 'meta GET without hub.mode=subscribe: 400');

is(rows(), $before + 10, 'ten rows: the deliveries, never a handshake or a refusal');
$t->httpd->stop;
is($t->sql(q{select coalesce(sum(count), 0) from hookinbox.rejection where reason = 'handshake answered'}), 10,
	'ten handshakes counted');
done_testing();
