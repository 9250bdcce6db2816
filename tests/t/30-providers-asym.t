# SPDX-License-Identifier: ISC
# The asymmetric providers through lighttpd + the responder + PostgreSQL,
# with keys and certificate authorities the test makes (node:crypto,
# openssl): a delivery hookinbox-send signs is stored under the delivery
# key docs/providers.md promises and a redelivery is the same row; a wrong
# key, a tampered body, a stale token, a token for another audience or
# service account and a token whose alg is not the scheme's are refused
# with nothing stored.
use strict;
use warnings;
use Test::More;
use HookTest;
use JSON::PP;
use Digest::SHA qw(sha256_hex hmac_sha256);
use MIME::Base64 qw(encode_base64 decode_base64);
use File::Temp qw(tempdir);

my $top = HookTest::top();
my $send = "$top/contrib/hookinbox-send";
-x $send or BAIL_OUT("$send is not built (make)");
my $tmp = tempdir(CLEANUP => 1);

# key pairs: the private key as base64 PKCS#8 DER (what hookinbox-send
# reads), the public one as a JWK
sub keypair {
	my ($type, $kid) = @_;
	my $js = $type eq 'ec'
		? "generateKeyPairSync('ec',{namedCurve:'P-256'})"
		: "generateKeyPairSync('rsa',{modulusLength:2048})";
	my $out = `node -e "const {generateKeyPairSync}=require('node:crypto');const k=$js;console.log(JSON.stringify({der:k.privateKey.export({type:'pkcs8',format:'der'}).toString('base64'),jwk:k.publicKey.export({format:'jwk'})}))"`;
	my $k = decode_json($out) or BAIL_OUT('node key generation');
	$k->{jwk}{kid} = $kid;
	$k->{jwk_line} = JSON::PP->new->canonical->encode($k->{jwk});
	return $k;
}
my ($plaid1, $plaid2, $plaid_bad) = map { keypair('ec', $_) } qw(pk-1 pk-2 pk-1);
my ($g1, $g_bad) = map { keypair('rsa', $_) } qw(g-1 g-1);
my $email = 'pusher@proj.iam.gserviceaccount.com';

# Google's JWKS as the operator's cron keeps it
open my $fh, '>', "$tmp/google.jwks" or die $!;
print $fh JSON::PP->new->pretty->encode({ keys => [$g1->{jwk}] });
close $fh;

my $t = HookTest->new(endpoints => {
	plaid => { provider => 'plaid', secrets => [$plaid1->{jwk_line}, $plaid2->{jwk_line}] },
	pubsub => { provider => 'pubsub', secrets => ['other@proj.iam.gserviceaccount.com', $email],
		key_file => "$tmp/google.jwks", audience => 'https://unset.example/' },
}, procs => 1);
# Pub/Sub's audience is by default the push URL: here the responder's own
$t->{o}{endpoints}{pubsub}{audience} = $t->url('pubsub');
$t->write_config;
$t->httpd->restart;

sub secret_file {
	my ($name, $line) = @_;
	my $f = "$tmp/secret-$name";
	open my $fh, '>', $f or die $!;
	print $fh "$line\n";
	close $fh;
	chmod 0600, $f;
	HookTest::record_secret($line);
	return $f;
}

my $n = 0;
sub payload {
	my ($text) = @_;
	my $f = "$tmp/payload-" . ++$n;
	open my $fh, '>', $f or die $!;
	print $fh $text;
	close $fh;
	return $f;
}

# sign and post with hookinbox-send; (status, answer)
sub sender {
	my ($provider, $secret, $url, $body, @flags) = @_;
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, "--provider=$provider",
		"--secret-file=$secret", "--url=$url", @flags, payload($body);
	my $out = `$cmd 2>$tmp/stderr`;
	my (undef, $status, $answer) = split / /, (split /\n/, $out)[0] // '', 3;
	return ($status // 0, $answer // '');
}

sub rows { $t->sql('select count(*) from hookinbox.inbox') }
sub row_of { $t->sql("select count(*) from hookinbox.inbox where event_id = '$_[0]'") }

# ---- plaid: ES256 JWT over the body's digest, keys one JWK a line
{
	my $s1 = secret_file('plaid1', "pk-1 $plaid1->{der}");
	my $s2 = secret_file('plaid2', "pk-2 $plaid2->{der}");
	my $sbad = secret_file('plaid-bad', "pk-1 $plaid_bad->{der}");
	my $url = $t->url('plaid');
	my $body = '{"webhook_type":"TRANSACTIONS","webhook_code":"SYNC_UPDATES_AVAILABLE","item_id":"wz666MBjYWTp2PDzzggYhM6oWWmBb","environment":"sandbox"}';
	my $id = 'sha256:' . sha256_hex($body);
	my ($st, $ans) = sender('plaid', $s1, $url, $body);
	is($st, 200, 'plaid: a delivery signed with key pk-1 is accepted') or diag($ans);
	is(row_of($id), 1, 'plaid: stored under the body hash');
	is($t->sql("select coalesce(event_type,'')||'|'||coalesce(object_id,'') from hookinbox.inbox where event_id = '$id'"),
		'SYNC_UPDATES_AVAILABLE|wz666MBjYWTp2PDzzggYhM6oWWmBb', 'plaid: type and object from the body');
	($st) = sender('plaid', $s2, $url, $body);
	is($st, 200, 'plaid: the same body signed with the rotated key pk-2 is accepted');
	is(row_of($id), 1, 'plaid: and is the same row');
	my $before = rows();
	my $body2 = $body =~ s/sandbox/production/r;
	($st) = sender('plaid', $sbad, $url, $body2);
	is($st, 401, 'plaid: a key that is not Plaid\'s (same kid) is refused');
	($st) = sender('plaid', $s1, $url, $body2, '--timestamp-offset=-400');
	is($st, 401, 'plaid: a token issued over 5 minutes ago is refused');
	($st) = sender('plaid', $s1, $url, $body2, '--timestamp-offset=400');
	is($st, 401, 'plaid: a token issued 400 s ahead is refused');
	my $r = $t->post('plaid', $body2, { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'plaid: no Plaid-Verification header is refused');
	# the token of one body on another: the digest claim does not match
	my $jwt = node_jws('ES256', $plaid1->{der}, { alg => 'ES256', kid => 'pk-1', typ => 'JWT' },
		{ iat => time, request_body_sha256 => sha256_hex($body) });
	$r = $t->post('plaid', $body, { 'Content-Type' => 'application/json', 'Plaid-Verification' => $jwt });
	is($r->{status}, 200, 'plaid: a token node:crypto signs is accepted');
	$r = $t->post('plaid', $body2, { 'Content-Type' => 'application/json', 'Plaid-Verification' => $jwt });
	is($r->{status}, 401, 'plaid: a token for another body is refused');
	# alg confusion: HS256 keyed with the public key's text
	my $h = b64u('{"alg":"HS256","kid":"pk-1","typ":"JWT"}');
	my $p = b64u(encode_json({ iat => time, request_body_sha256 => sha256_hex($body2) }));
	my $forged = "$h.$p." . b64u(hmac_sha256("$h.$p", $plaid1->{jwk_line}));
	$r = $t->post('plaid', $body2, { 'Content-Type' => 'application/json', 'Plaid-Verification' => $forged });
	is($r->{status}, 401, 'plaid: an HS256 token is refused (the alg is the scheme\'s)');
	$r = $t->post('plaid', $body2, { 'Content-Type' => 'application/json', 'Plaid-Verification' => 'a.b' });
	is($r->{status}, 400, 'plaid: a token that is not a JWS is malformed');
	is(rows(), $before, 'plaid: nothing stored for any refusal');
}

sub b64u { my $s = encode_base64($_[0], ''); $s =~ tr{+/}{-_}; $s =~ s/=+$//; return $s }

# a compact JWS signed by node:crypto (ES256 as r || s)
sub node_jws {
	my ($alg, $der, $header, $payload) = @_;
	my $in = payload(encode_json({ alg => $alg, der => $der, h => encode_json($header), p => encode_json($payload) }));
	my $jws = `node -e "const c=require('node:crypto');const i=JSON.parse(require('fs').readFileSync('$in'));const u=(b)=>Buffer.from(b).toString('base64url');const s=u(i.h)+'.'+u(i.p);const k=c.createPrivateKey({key:Buffer.from(i.der,'base64'),format:'der',type:'pkcs8'});console.log(s+'.'+c.sign('sha256',Buffer.from(s),{key:k,dsaEncoding:'ieee-p1363'}).toString('base64url'))"`;
	chomp $jws;
	return $jws;
}

# ---- pubsub: RS256 OIDC token, audience and service account
{
	my $url = $t->url('pubsub');
	my $s = secret_file('g1', "g-1 $email $g1->{der}");
	my $sother = secret_file('g1-other', "g-1 intruder\@evil.iam.gserviceaccount.com $g1->{der}");
	my $sbad = secret_file('g-bad', "g-1 $email $g_bad->{der}");
	my $body = '{"message":{"attributes":{"k":"v"},"data":"SGVsbG8gQ2xvdWQgUHViL1N1YiE=","messageId":"2070443601311540","message_id":"2070443601311540","publishTime":"2021-02-26T19:13:55.749Z","publish_time":"2021-02-26T19:13:55.749Z"},"subscription":"projects/myproject/subscriptions/mysubscription"}';
	my ($st, $ans) = sender('pubsub', $s, $url, $body);
	is($st, 200, 'pubsub: a push with a Google-signed token for the audience is accepted') or diag($ans);
	is(row_of('2070443601311540'), 1, 'pubsub: stored under message.messageId');
	($st) = sender('pubsub', $s, $url, $body);
	is($st, 200, 'pubsub: a redelivery is answered 200');
	is(row_of('2070443601311540'), 1, 'pubsub: and is the same row');
	my $before = rows();
	my $body2 = $body =~ s/2070443601311540/2070443601311541/gr;
	($st) = sender('pubsub', $sbad, $url, $body2);
	is($st, 401, 'pubsub: a token signed with a key that is not Google\'s is refused');
	($st) = sender('pubsub', $sother, $url, $body2);
	is($st, 401, 'pubsub: a token for a service account not in secret_file is refused');
	($st) = sender('pubsub', $s, "$url?x=1", $body2);
	is($st, 401, 'pubsub: a token for another audience is refused');
	($st) = sender('pubsub', $s, $url, $body2, '--timestamp-offset=-4000');
	is($st, 401, 'pubsub: an expired token is refused');
	my $r = $t->post('pubsub', $body2, { 'Content-Type' => 'application/json' });
	is($r->{status}, 401, 'pubsub: no Authorization header is refused');
	my $h = b64u('{"alg":"none","kid":"g-1"}');
	my $p = b64u(encode_json({ aud => $url, iss => 'https://accounts.google.com', email => $email,
		email_verified => JSON::PP::true, iat => time, exp => time + 3600 }));
	$r = $t->post('pubsub', $body2, { 'Content-Type' => 'application/json', Authorization => "Bearer $h.$p.AA" });
	is($r->{status}, 401, 'pubsub: an alg "none" token is refused');
	is(rows(), $before, 'pubsub: nothing stored for any refusal');
}

done_testing();
