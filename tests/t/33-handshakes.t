# SPDX-License-Identifier: ISC
# Handshakes through lighttpd and the responder: Discord's PING and Zoom's
# endpoint.url_validation are answered as the provider checks them, only
# when signed (a bad signature is 401, as Discord's endpoint check
# requires), and store nothing; they are counted with the other requests
# that store nothing.  A signed Discord interaction and Zoom event are
# stored; a Zoom retry of the same bytes is a duplicate (the body's hash is
# its delivery key).
use strict;
use warnings;
use Test::More;
use HookTest;
use Digest::SHA qw(hmac_sha256_hex);
use File::Temp qw(tempdir);
use JSON::PP;

my $tmp = tempdir(CLEANUP => 1);
system("openssl genpkey -algorithm ed25519 -out $tmp/d.pem 2>/dev/null") == 0 or BAIL_OUT('openssl genpkey ed25519');
my $pub = unpack 'H*', substr(`openssl pkey -in $tmp/d.pem -pubout -outform DER`, -32);
my $zoom_secret = 'zoom-secret-token-0123456789';
HookTest::record_secret($zoom_secret, 'zoom-old-secret-token-abcd');

my $t = HookTest->new(procs => 1, endpoints => {
	discord => { provider => 'discord', secrets => [$pub] },
	zoom => { provider => 'zoom', secrets => ['zoom-old-secret-token-abcd', $zoom_secret] },
});

sub rows { $t->sql('select count(*) from hookinbox.inbox') }

sub discord_post {
	my ($body, %o) = @_;
	my $ts = time;
	open my $fh, '>', "$tmp/msg" or die $!;
	print $fh "$ts$body";
	close $fh;
	my $sig = unpack 'H*', `openssl pkeyutl -sign -inkey $tmp/d.pem -rawin -in $tmp/msg`;
	$sig =~ tr/0-9a-f/1-9a-f0/ if $o{bad};
	return $t->post('discord', $body, { 'Content-Type' => 'application/json',
		'X-Signature-Ed25519' => $sig, 'X-Signature-Timestamp' => $ts });
}

sub zoom_post {
	my ($body, %o) = @_;
	my $ts = time;
	my $sig = 'v0=' . hmac_sha256_hex("v0:$ts:$body", $o{secret} // $zoom_secret);
	return $t->post('zoom', $body, { 'Content-Type' => 'application/json',
		'x-zm-signature' => $sig, 'x-zm-request-timestamp' => $ts });
}

my $before = rows();
my $ping = '{"application_id":"1190000000000000000","id":"1190000000000000002","token":"dG9rZW4","type":1,"version":1}';
my $r = discord_post($ping);
is($r->{status}, 200, 'discord PING: 200');
is($r->{content}, qq({"type":1}\n), 'discord PING: answered {"type":1}');
$r = discord_post($ping, bad => 1);
is($r->{status}, 401, 'discord PING with a bad signature: 401');
$r = $t->post('discord', $ping, { 'Content-Type' => 'application/json' });
is($r->{status}, 401, 'discord PING without signature headers: 401');
is(rows(), $before, 'discord PING: nothing stored');

my $cmd = '{"application_id":"1190000000000000000","data":{"id":"1190000000000000001","name":"hello","type":1},"id":"1190000000000000003","type":2,"version":1}';
$r = discord_post($cmd);
is($r->{status}, 200, 'discord command: stored');
is($t->sql("select event_id||'|'||event_type||'|'||object_id from hookinbox.inbox where id = " . int($r->{json}{id})),
	'1190000000000000003|hello|1190000000000000001', 'discord command: interaction id, command name, command id');

my $uv = '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}';
$r = zoom_post($uv);
is($r->{status}, 200, 'zoom url_validation: 200');
is_deeply($r->{json}, { plainToken => 'qgg8vlvZRS6UYooatFL8Aw',
	encryptedToken => hmac_sha256_hex('qgg8vlvZRS6UYooatFL8Aw', $zoom_secret) },
	'zoom url_validation: plainToken and its HMAC with the secret that verified it (the second)');
$r = zoom_post($uv, secret => 'not-the-secret-token-0000');
is($r->{status}, 401, 'zoom url_validation with a wrong secret: 401');
$r = zoom_post('{"event":"endpoint.url_validation","payload":{}}');
is($r->{status}, 400, 'zoom url_validation without plainToken: 400');

my $ev = '{"event":"meeting.started","event_ts":1714723200000,"payload":{"account_id":"AAAA","object":{"id":"85746065432"}}}';
$r = zoom_post($ev);
is($r->{status}, 200, 'zoom event: stored');
my $id = $r->{json}{id};
$r = zoom_post($ev);
ok($r->{json}{duplicate} && $r->{json}{id} == $id, 'zoom retry of the same bytes: the first id, a duplicate');
is(rows(), $before + 2, 'two rows: the discord command and the zoom event');

like($t->responder_log, qr/endpoint=zoom outcome=handshake status=200/, 'the log says a handshake was answered');
$t->httpd->stop;
is($t->sql(q{select coalesce(sum(count), 0) from hookinbox.rejection where reason = 'handshake answered'}), 2,
	'two handshakes counted (discord, zoom)');
done_testing();
