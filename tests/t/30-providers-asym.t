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
use IO::Socket::INET;
use POSIX ();
use lib HookTest::top() . '/tests/sdk';
use SDK;

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

# a certificate authority, a signing certificate it issued, and one from a CA nobody trusts
sub sh { system(@_) == 0 or BAIL_OUT("@_") }
for my $ca (qw(ca rogue)) {
	sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout $tmp/$ca.key -out $tmp/$ca.pem -days 30 -subj '/CN=Test $ca' 2>/dev/null");
	sh("openssl req -newkey rsa:2048 -nodes -keyout $tmp/$ca-leaf.key -out $tmp/$ca-leaf.csr -subj /CN=signer 2>/dev/null");
	sh("openssl x509 -req -in $tmp/$ca-leaf.csr -CA $tmp/$ca.pem -CAkey $tmp/$ca.key -CAcreateserial -out $tmp/$ca-leaf.pem -days 30 2>/dev/null");
}
# and a signing certificate issued by an intermediate that names itself in its
# "CA Issuers" URL, as the providers' are (they serve the leaf alone)
{
	open my $fh, '>', "$tmp/ext-ca" or die $!;
	print $fh "basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n";
	open $fh, '>', "$tmp/ext-aia" or die $!;
	print $fh "authorityInfoAccess=caIssuers;URI:http://crt.issuer.example/int.cer\n";
	close $fh;
	sh("openssl req -newkey rsa:2048 -nodes -keyout $tmp/int.key -out $tmp/int.csr -subj /CN=intermediate 2>/dev/null");
	sh("openssl x509 -req -in $tmp/int.csr -CA $tmp/ca.pem -CAkey $tmp/ca.key -CAcreateserial -extfile $tmp/ext-ca -out $tmp/int.pem -days 30 2>/dev/null");
	sh("openssl x509 -in $tmp/int.pem -outform DER -out $tmp/int.cer");
	sh("openssl req -newkey rsa:2048 -nodes -keyout $tmp/chained.key -out $tmp/chained.csr -subj /CN=signer 2>/dev/null");
	sh("openssl x509 -req -in $tmp/chained.csr -CA $tmp/int.pem -CAkey $tmp/int.key -CAcreateserial -extfile $tmp/ext-aia -out $tmp/chained.pem -days 30 2>/dev/null");
}
my %leaf_der = map { ($_ => encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/$_-leaf.key -outform DER`, '')) } qw(ca rogue);
mkdir "$tmp/certs" or die $!;
chmod 0777, "$tmp/certs";	# the responder notes the certificates it wants there

# an App Store-like chain: root, intermediate and EC leaf with Apple's marker extensions
{
	open my $fh, '>', "$tmp/ext-int" or die $!;
	print $fh "basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n1.2.840.113635.100.6.2.1=ASN1:NULL\n";
	open $fh, '>', "$tmp/ext-leaf" or die $!;
	print $fh "1.2.840.113635.100.6.11.1=ASN1:NULL\n";
	open $fh, '>', "$tmp/ext-plain" or die $!;
	print $fh "basicConstraints=critical,CA:false\n";
	close $fh;
	sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $tmp/aroot.key -out $tmp/aroot.pem -days 30 -subj '/CN=Test Apple Root' 2>/dev/null");
	sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $tmp/aint.key -out $tmp/aint.csr -subj '/CN=Test WWDR' 2>/dev/null");
	sh("openssl x509 -req -in $tmp/aint.csr -CA $tmp/aroot.pem -CAkey $tmp/aroot.key -CAcreateserial -extfile $tmp/ext-int -out $tmp/aint.pem -days 30 2>/dev/null");
	for my $leaf (qw(aleaf aplain)) {
		sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $tmp/$leaf.key -out $tmp/$leaf.csr -subj '/CN=Test Signer' 2>/dev/null");
		sh("openssl x509 -req -in $tmp/$leaf.csr -CA $tmp/aint.pem -CAkey $tmp/aint.key -CAcreateserial -extfile $tmp/ext-" . ($leaf eq 'aleaf' ? 'leaf' : 'plain') . " -out $tmp/$leaf.pem -days 30 2>/dev/null");
	}
	# and one of the same shape under a root nobody configured
	sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $tmp/broot.key -out $tmp/broot.pem -days 30 -subj '/CN=Test Apple Root' 2>/dev/null");
	sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $tmp/bint.key -out $tmp/bint.csr -subj '/CN=Test WWDR' 2>/dev/null");
	sh("openssl x509 -req -in $tmp/bint.csr -CA $tmp/broot.pem -CAkey $tmp/broot.key -CAcreateserial -extfile $tmp/ext-int -out $tmp/bint.pem -days 30 2>/dev/null");
	sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $tmp/bleaf.key -out $tmp/bleaf.csr -subj '/CN=Test Signer' 2>/dev/null");
	sh("openssl x509 -req -in $tmp/bleaf.csr -CA $tmp/bint.pem -CAkey $tmp/bint.key -CAcreateserial -extfile $tmp/ext-leaf -out $tmp/bleaf.pem -days 30 2>/dev/null");
}
sub der_b64 { my $d = `openssl x509 -in $_[0] -outform DER`; return encode_base64($d, '') }

my $t = HookTest->new(endpoints => {
	apple => { provider => 'apple', secrets => ['com.example.app'], ca_file => "$tmp/aroot.pem" },
	graph => { provider => 'graph', secrets => ['graph-client-state-0123'] },
	paypal => { provider => 'paypal', secrets => ['1JE4291016473214C', '8PT597110X687430LKGECATA'],
		ca_file => "$tmp/ca.pem", cert_cache => "$tmp/certs" },
	sns => { provider => 'sns', secrets => ['arn:aws:sns:us-west-2:123456789012:MyTopic'],
		ca_file => "$tmp/ca.pem", cert_cache => "$tmp/certs" },
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
sub payload { HookTest::write_file("$tmp/payload-" . ++$n, $_[0]) }

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

	# Google rotates its keys: the timer rewrites key_file, the responder reloads it
	my $g2 = keypair('rsa', 'g-2');
	my $s2 = secret_file('g2', "g-2 $email $g2->{der}");
	open my $fh, '>', "$tmp/google.jwks.new" or die $!;
	print $fh JSON::PP->new->pretty->encode({ keys => [$g2->{jwk}] });
	close $fh;
	rename "$tmp/google.jwks.new", "$tmp/google.jwks" or die $!;
	my $body3 = $body =~ s/2070443601311540/2070443601311542/gr;
	my $got = 0;
	for (1 .. 30) {
		($got) = sender('pubsub', $s2, $url, $body3);
		last if $got == 200;
		select(undef, undef, undef, 0.5);
	}
	is($got, 200, 'pubsub: a token of the new key is accepted once key_file changed');
	($st) = sender('pubsub', $s, $url, $body2);
	is($st, 401, 'pubsub: and one of the removed key is refused');
}

# ---- the certificate class: a cache filled off the request path
sub cache_cert {
	my ($url, $pem) = @_;
	my $f = "$tmp/certs/" . sha256_hex($url) . '.pem';
	sh("cp $pem $f");
	return $f;
}

sub wanted {
	open my $fh, '<', "$tmp/certs/wanted" or return '';
	local $/;
	return <$fh>;
}

{
	my $url = $t->url('paypal');
	my $cert = 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
	my $s = secret_file('pp', "$cert 8PT597110X687430LKGECATA $leaf_der{ca}");
	my $body = '{"id":"WH-2WR32451HC0233532-67976317FL4543714","create_time":"2014-10-23T17:23:52Z","resource_type":"sale","event_type":"PAYMENT.SALE.COMPLETED","resource":{"id":"80021663DE681814L","state":"completed"}}';
	my $before = rows();
	my ($st) = sender('paypal', $s, $url, $body);
	is($st, 503, 'paypal: a certificate not in the cache is 503 (PayPal retries)');
	like(wanted(), qr/^\Q$cert\E$/m, 'paypal: its URL is noted for the fetcher');
	is(rows(), $before, 'paypal: nothing stored on a cache miss');

	# the fetcher, with curl played by a script that serves the leaf
	open my $fh, '>', "$tmp/fake-curl" or die $!;
	# the URL is the last argument: the intermediate's, the chained leaf's, else the plain leaf
	print $fh "#!/bin/sh\nwhile [ \$# -gt 1 ]; do [ \"\$1\" = -o ] && out=\$2; shift; done\n"
		. "case \$1 in *int.cer) f=$tmp/int.cer;; *CERT-chained) f=$tmp/chained.pem;; *) f=$tmp/ca-leaf.pem;; esac\n"
		. "cp \$f \"\$out\"\n";
	close $fh;
	chmod 0755, "$tmp/fake-curl";
	my $fetch = "HOOKINBOX_FETCH_CURL=$tmp/fake-curl $top/contrib/hookinbox-fetch-certs --cache $tmp/certs --ca $tmp/ca.pem";
	is(system("$fetch 2>$tmp/fetch.err"), 0, 'hookinbox-fetch-certs: fetches what the responder wanted');
	ok(-s "$tmp/certs/" . sha256_hex($cert) . '.pem' && !-e "$tmp/certs/wanted", 'hookinbox-fetch-certs: cached under the URL\'s hash, list emptied');
	isnt(system("$fetch https://evil.example/v1/notifications/certs/x 2>$tmp/fetch.err"), 0, 'hookinbox-fetch-certs: refuses a host that is not pinned');
	like(do { local $/; open my $e, '<', "$tmp/fetch.err"; <$e> }, qr/not on a pinned host/, 'hookinbox-fetch-certs: and says so');
	cache_cert($cert, "$tmp/ca-leaf.pem");
	my $chained = 'https://api.paypal.com/v1/notifications/certs/CERT-chained';
	is(system("$fetch $chained 2>$tmp/fetch.err"), 0, 'hookinbox-fetch-certs: a leaf served alone is completed with its "CA Issuers" intermediate');
	my $chained_der = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/chained.key -outform DER`, '');
	my ($st3) = sender('paypal', secret_file('pp-chained', "$chained 8PT597110X687430LKGECATA $chained_der"), $url,
		$body =~ s/WH-2WR/WH-9WR/r);
	is($st3, 200, 'paypal: a certificate chained through its cached intermediate is accepted');

	my ($st2, $ans) = sender('paypal', $s, $url, $body, '--event-id=tx-1');
	is($st2, 200, 'paypal: with the certificate cached, the delivery is accepted') or diag($ans);
	is(row_of('WH-2WR32451HC0233532-67976317FL4543714'), 1, 'paypal: stored under the event id');
	($st2) = sender('paypal', $s, $url, $body, '--event-id=tx-2');
	is($st2, 200, 'paypal: a retry (a new transmission) is answered 200');
	is(row_of('WH-2WR32451HC0233532-67976317FL4543714'), 1, 'paypal: and is the same row');
	$before = rows();
	my $body2 = $body =~ s/WH-2WR/WH-3WR/r;
	($st2) = sender('paypal', secret_file('pp-other', "$cert WRONG-WEBHOOK-ID $leaf_der{ca}"), $url, $body2);
	is($st2, 401, 'paypal: a signature for another webhook id is refused');
	my $rogue = 'https://api.paypal.com/v1/notifications/certs/CERT-rogue';
	cache_cert($rogue, "$tmp/rogue-leaf.pem");
	($st2) = sender('paypal', secret_file('pp-rogue', "$rogue 8PT597110X687430LKGECATA $leaf_der{rogue}"), $url, $body2);
	is($st2, 401, 'paypal: a certificate that does not chain to ca_file is refused, even cached');
	($st2) = sender('paypal', secret_file('pp-evil', "https://api.paypal.com.evil.example/v1/notifications/certs/x 8PT597110X687430LKGECATA $leaf_der{ca}"), $url, $body2);
	is($st2, 401, 'paypal: a certificate URL off the pinned hosts is refused');
	($st2) = sender('paypal', $s, $url, $body2, '--timestamp-offset=-400');
	is($st2, 401, 'paypal: a transmission over 5 minutes old is refused');
	is(rows(), $before, 'paypal: nothing stored for any refusal');
}

# SNS: signed inside the body, here with openssl
sub sns_message {
	my (%m) = @_;
	my $key = delete $m{key} // "$tmp/ca-leaf.key";
	my @names = $m{Type} eq 'Notification' ? qw(Message MessageId Subject Timestamp TopicArn Type)
		: qw(Message MessageId SubscribeURL Timestamp Token TopicArn Type);
	my $canon = join '', map { "$_\n$m{$_}\n" } grep { defined $m{$_} } @names;
	my $f = payload($canon);
	my $dg = $m{SignatureVersion} eq '1' ? 'sha1' : 'sha256';
	$m{Signature} = encode_base64(`openssl dgst -$dg -sign $key $f`, '');
	return JSON::PP->new->canonical->encode(\%m);
}

{
	my $cert = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem';
	cache_cert($cert, "$tmp/ca-leaf.pem");
	my %base = (Type => 'Notification', MessageId => '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
		TopicArn => 'arn:aws:sns:us-west-2:123456789012:MyTopic', Subject => 'My First Message',
		Message => "Hello world!\nline two", Timestamp => '2012-05-02T00:54:06.655Z',
		SignatureVersion => '1', SigningCertURL => $cert,
		UnsubscribeURL => 'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=x');
	my $post = sub { $t->post('sns', $_[0], { 'Content-Type' => 'text/plain; charset=UTF-8', 'x-amz-sns-message-type' => 'Notification' }) };
	my $r = $post->(sns_message(%base));
	is($r->{status}, 200, 'sns: a SignatureVersion 1 notification is accepted') or diag($r->{content});
	is(row_of($base{MessageId}), 1, 'sns: stored under MessageId');
	$r = $post->(sns_message(%base, SignatureVersion => '2'));
	is($r->{status}, 200, 'sns: SignatureVersion 2 (SHA256withRSA) is accepted, the same row');
	is(row_of($base{MessageId}), 1, 'sns: one row');
	my %no_subject = %base;
	delete $no_subject{Subject};
	$r = $post->(sns_message(%no_subject, MessageId => 'no-subject-1'));
	is($r->{status}, 200, 'sns: a notification without Subject is accepted');
	my %confirm = (Type => 'SubscriptionConfirmation', MessageId => '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
		Token => '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
		TopicArn => $base{TopicArn}, Message => 'You have chosen to subscribe to the topic.',
		SubscribeURL => 'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=y',
		Timestamp => '2012-04-26T20:45:04.751Z', SignatureVersion => '2', SigningCertURL => $cert);
	$r = $post->(sns_message(%confirm));
	is($r->{status}, 200, 'sns: a SubscriptionConfirmation is verified and stored, nothing fetched');
	is($t->sql("select event_type from hookinbox.inbox where event_id = '$confirm{MessageId}'"),
		'SubscriptionConfirmation', 'sns: as an event of its type, for the operator to confirm');
	my $before = rows();
	my $tampered = sns_message(%base, MessageId => 'tampered-1');
	$tampered =~ s/Hello world/Hello World/;
	is($post->($tampered)->{status}, 401, 'sns: a tampered message is refused');
	is($post->(sns_message(%base, MessageId => 'rogue-1', key => "$tmp/rogue-leaf.key"))->{status}, 401,
		'sns: a signature by another key is refused');
	is($post->(sns_message(%base, MessageId => 'topic-1', TopicArn => 'arn:aws:sns:us-west-2:999999999999:Theirs'))->{status}, 401,
		'sns: a topic not in secret_file is refused');
	is($post->(sns_message(%base, MessageId => 'host-1', SigningCertURL => 'https://sns.us-west-2.amazonaws.com.evil.example/SimpleNotificationService-1.pem'))->{status}, 401,
		'sns: a certificate URL off the pinned hosts is refused');
	my $miss = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0000.pem';
	is($post->(sns_message(%base, MessageId => 'miss-1', SigningCertURL => $miss))->{status}, 503,
		'sns: a certificate not cached is 503 (SNS retries)');
	like(wanted(), qr/^\Q$miss\E$/m, 'sns: its URL is noted for the fetcher');
	is($post->(sns_message(%base, MessageId => 'ver-1', SignatureVersion => '3'))->{status}, 400,
		'sns: an unknown SignatureVersion is malformed');
	is(rows(), $before, 'sns: nothing stored for any refusal');
}

# ---- apple: signedPayload JWS with its x5c chain
{
	my $leaf_der = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/aleaf.key -outform DER`, '');
	my $plain_der = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/aplain.key -outform DER`, '');
	my @x5c = map { der_b64("$tmp/$_.pem") } qw(aleaf aint aroot);
	my $note = sub {
		my (%o) = @_;
		my $payload = { notificationType => 'DID_RENEW', subtype => 'BILLING_RECOVERY',
			notificationUUID => $o{uuid} // '002e14d5-51f5-4503-b5a8-c3a1af68eb20', version => '2.0',
			signedDate => 1698148900000,
			data => { bundleId => $o{bundle} // 'com.example.app', environment => 'Sandbox', signedTransactionInfo => 'x' } };
		my $jws = node_jws('ES256', $o{key} // $leaf_der, { alg => 'ES256', x5c => $o{x5c} // \@x5c }, $payload);
		return encode_json({ signedPayload => $jws });
	};
	my $r = $t->post('apple', $note->(), { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'apple: a notification signed by a leaf of the configured root is accepted') or diag($r->{content});
	is($t->sql("select event_type from hookinbox.inbox where event_id = '002e14d5-51f5-4503-b5a8-c3a1af68eb20'"),
		'DID_RENEW.BILLING_RECOVERY', 'apple: stored under notificationUUID, typed notificationType.subtype');
	$r = $t->post('apple', $note->(), { 'Content-Type' => 'application/json' });
	is($t->sql("select count(*) from hookinbox.inbox where event_id = '002e14d5-51f5-4503-b5a8-c3a1af68eb20'"), 1, 'apple: a retry is the same row');
	my $before = rows();
	is($t->post('apple', $note->(uuid => 'u-2', bundle => 'com.other.app'), { 'Content-Type' => 'application/json' })->{status}, 401,
		'apple: another app\'s notification is refused');
	is($t->post('apple', $note->(uuid => 'u-3', key => $plain_der, x5c => [map { der_b64("$tmp/$_.pem") } qw(aplain aint aroot)]), { 'Content-Type' => 'application/json' })->{status}, 401,
		'apple: a leaf without Apple\'s marker extension is refused');
	my $bleaf_der = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/bleaf.key -outform DER`, '');
	is($t->post('apple', $note->(uuid => 'u-4', key => $bleaf_der, x5c => [map { der_b64("$tmp/$_.pem") } qw(bleaf bint broot)]), { 'Content-Type' => 'application/json' })->{status}, 401,
		'apple: a chain that does not reach the configured root is refused');
	is($t->post('apple', $note->(uuid => 'u-6', x5c => [map { der_b64("$tmp/$_.pem") } qw(aleaf aint)]), { 'Content-Type' => 'application/json' })->{status}, 400,
		'apple: an x5c of two certificates is malformed (SignedDataVerifier takes three)');
	is($t->post('apple', $note->(uuid => 'u-5', key => $plain_der), { 'Content-Type' => 'application/json' })->{status}, 401,
		'apple: a payload not signed by the x5c leaf is refused');
	is($t->post('apple', '{"signedPayload":"x.y"}', { 'Content-Type' => 'application/json' })->{status}, 401,
		'apple: a body without a JWS is refused');
	is(rows(), $before, 'apple: nothing stored for any refusal');
}

# ---- graph: validationToken echoed, clientState in every notification
{
	my $before = rows();
	my $r = $t->post(undef, '', { 'Content-Type' => 'text/plain; charset=utf-8' },
		url => $t->url('graph') . '?validationToken=Validation%3a+Testing+client+application+reachability+for+subscription+Request-Id%3a+9c1f7cf4');
	is($r->{status}, 200, 'graph: a subscription validation is answered 200');
	like($r->{headers}{'content-type'} // '', qr{^text/plain}, 'graph: as text/plain');
	is($r->{content}, 'Validation: Testing client application reachability for subscription Request-Id: 9c1f7cf4',
		'graph: with the decoded token');
	is(rows(), $before, 'graph: and nothing stored');
	is($t->post('graph', '', { 'Content-Type' => 'text/plain' })->{status}, 401,
		'graph: an empty body without validationToken is refused');
	my $item = sub { my ($id, $cs) = @_; { subscriptionId => 'b6f4d2b8', clientState => $cs // 'graph-client-state-0123',
		changeType => 'created', resource => "Users/u1/Messages/$id", tenantId => 't1',
		subscriptionExpirationDateTime => '2026-12-03T18:23:45.9356913Z',
		resourceData => { '@odata.type' => '#Microsoft.Graph.Message', id => $id } } };
	my $body = JSON::PP->new->canonical->encode({ value => [$item->('AAMk1'), $item->('AAMk2')] });
	$r = $t->post('graph', $body, { 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'graph: a batch of two notifications with the clientState is accepted');
	my $id = 'sha256:' . sha256_hex($body);
	is($t->sql("select event_type||'|'||object_id from hookinbox.inbox where event_id = '$id'"), 'created|AAMk1',
		'graph: stored as one row under the body hash, typed by the first item');
	$r = $t->post('graph', $body, { 'Content-Type' => 'application/json' });
	ok($r->{status} == 200 && $r->{json}{duplicate}, 'graph: a retry is a duplicate');
	$before = rows();
	my $bad = JSON::PP->new->canonical->encode({ value => [$item->('AAMk3'), $item->('AAMk4', 'guessed')] });
	is($t->post('graph', $bad, { 'Content-Type' => 'application/json' })->{status}, 401,
		'graph: a batch with one wrong clientState is refused');
	is($t->post('graph', '{"value":[]}', { 'Content-Type' => 'application/json' })->{status}, 400,
		'graph: an empty batch is malformed');
	is(rows(), $before, 'graph: nothing stored for any refusal');
}

# ---- hookinbox-send plays the providers that sign inside the body: what it
# sends is one row under the promised key, a redelivery is the same row, and
# a tampered copy of its bytes is refused with nothing stored

# run the sender against a one-request listener; the body it sent
sub sent_body {
	my ($provider, $secret, $body, @flags) = @_;
	my $srv = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp', ReuseAddr => 1)
		or die "listen: $!";
	my $url = 'http://127.0.0.1:' . $srv->sockport . '/capture';
	my $pid = fork // die;
	if (!$pid) {
		close $srv;
		my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, "--provider=$provider",
			"--secret-file=$secret", "--url=$url", @flags, payload($body);
		system("$cmd >/dev/null 2>&1");
		POSIX::_exit(0);
	}
	my $conn = $srv->accept or die "accept: $!";
	my ($head, $len, $got) = ('', 0, '');
	$head .= $_ while defined($_ = <$conn>) && $_ ne "\r\n";
	($len) = $head =~ /^Content-Length:\s*(\d+)/mi;
	read($conn, $got, $len // 0);
	print $conn "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	close $conn;
	waitpid $pid, 0;
	return $got;
}

{
	my $url = $t->url('sns');
	my $cert = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem';
	my $topic = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
	my $key = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/ca-leaf.key -outform DER`, '');
	my $s = secret_file('sns-send', "$cert $topic $key");
	my $body = qq({"order":"o-1","note":"line one\\nline \\"two\\""});
	my ($st, $ans) = sender('sns', $s, $url, $body, '--event-id=send-sns-1');
	is($st, 200, 'hookinbox-send sns: a Notification it signs is accepted') or diag($ans);
	is($t->sql("select count(*) || '|' || min(event_type) from hookinbox.inbox where event_id = 'send-sns-1'"),
		'1|Notification', 'hookinbox-send sns: one row under its MessageId, typed Notification');
	is($t->sql("select convert_from(body, 'UTF8')::json->>'Message' from hookinbox.inbox where event_id = 'send-sns-1'"),
		$body, 'hookinbox-send sns: the payload is the Message, unchanged');
	($st) = sender('sns', $s, $url, $body, '--event-id=send-sns-1', '--repeat=3');
	is(row_of('send-sns-1'), 1, 'hookinbox-send sns: a redelivery is the same row');
	my $before = rows();
	my $sent = sent_body('sns', $s, $body, '--event-id=send-sns-2');
	like($sent, qr/"SignatureVersion":"2"/, 'hookinbox-send sns: signs with SignatureVersion 2');
	my $post = sub { $t->post('sns', $_[0], { 'Content-Type' => 'text/plain; charset=UTF-8' })->{status} };
	is($post->($sent =~ s/o-1/o-2/r), 401, 'hookinbox-send sns: its message with the Message changed is refused');
	is($post->($sent =~ s/send-sns-2/send-sns-3/r), 401, 'hookinbox-send sns: and with the MessageId changed');
	my $other = secret_file('sns-other', "$cert arn:aws:sns:us-west-2:999999999999:Theirs $key");
	($st) = sender('sns', $other, $url, $body, '--event-id=send-sns-4');
	is($st, 401, 'hookinbox-send sns: a topic that is not the endpoint\'s is refused');
	is(rows(), $before, 'hookinbox-send sns: nothing stored for any refusal');
	is($post->($sent), 200, 'hookinbox-send sns: the untampered message is accepted');
	is(row_of('send-sns-2'), 1, 'hookinbox-send sns: as one row');
	($st, $ans) = sender('sns', $s, $url, 'You have chosen to subscribe to the topic.', '--event-id=send-sns-confirm',
		'--type=SubscriptionConfirmation');
	is($st, 200, 'hookinbox-send sns --type SubscriptionConfirmation: accepted') or diag($ans);
	like($t->sql("select event_type || ' ' || (convert_from(body, 'UTF8')::json->>'SubscribeURL') from hookinbox.inbox where event_id = 'send-sns-confirm'"),
		qr{^SubscriptionConfirmation https://sns\.us-west-2\.amazonaws\.com/\?Action=ConfirmSubscription&TopicArn=\Q$topic\E&Token=[0-9a-f]{64}$},
		'hookinbox-send sns: stored as a SubscriptionConfirmation, with the SubscribeURL to request');
	my $cmd0 = join ' ', map { HookTest::shell_quote($_) } $send, '--provider=sns', "--secret-file=$s", "--url=$url", '--type=Bogus', payload($body);
	system("$cmd0 >/dev/null 2>&1");
	is($? >> 8, 78, 'hookinbox-send sns: a --type SNS does not send: exit 78');
	my $bad = secret_file('sns-bad', "$cert $key");
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, '--provider=sns', "--secret-file=$bad", "--url=$url", payload($body);
	system("$cmd >/dev/null 2>$tmp/stderr");
	is($? >> 8, 78, 'hookinbox-send sns: a secret line without the TopicArn: exit 78');
	unlike(do { local $/; open my $e, '<', "$tmp/stderr"; <$e> }, qr/\Q$key\E/, 'hookinbox-send sns: the key is not shown');
}

# AWS's own validator (sns-validator, aws-js-sns-message-validator) accepts
# the message hookinbox-send signs and refuses a changed copy; the
# certificate it fetches from SigningCertURL is served to it from the test
subtest 'AWS\'s SNS message validator verifies hookinbox-send\'s message' => sub {
	my $why = SDK::install();
	plan skip_all => "SDK cross-check skipped: $why" if defined $why;
	my $cert = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem';
	my $key = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/ca-leaf.key -outform DER`, '');
	my $s = secret_file('sns-sdk', "$cert arn:aws:sns:us-west-2:123456789012:MyTopic $key");
	my $sent = sent_body('sns', $s, '{"order":"o-9","note":"two\nlines"}', '--event-id=sdk-sns-1');
	my $pem = do { local $/; open my $f, '<', "$tmp/ca-leaf.pem" or die $!; <$f> };
	my $case = { provider => 'sns', headers => {}, cert_url => $cert, cert_pem => $pem };
	my $confirm = sent_body('sns', $s, 'You have chosen to subscribe.', '--event-id=sdk-sns-2', '--type=SubscriptionConfirmation');
	my $res = SDK::run('verify', [ { %$case, body => $sent }, { %$case, body => $sent =~ s/o-9/o-8/r },
		{ %$case, body => $confirm }, { %$case, body => $confirm =~ s/Token=[0-9a-f]/Token=x/r } ]);
	ok($res->[0]{ok}, 'sns: sns-validator verifies the message hookinbox-send signs') or diag($res->[0]{error});
	ok(!$res->[1]{ok}, 'sns: and refuses it with the Message changed');
	ok($res->[2]{ok}, 'sns: sns-validator verifies the SubscriptionConfirmation hookinbox-send signs') or diag($res->[2]{error});
	ok(!$res->[3]{ok}, 'sns: and refuses it with the SubscribeURL changed');
};

{
	my $url = $t->url('apple');
	my @x5c = map { der_b64("$tmp/$_.pem") } qw(aleaf aint aroot);
	my $key = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/aleaf.key -outform DER`, '');
	my $plain = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/aplain.key -outform DER`, '');
	my $s = secret_file('apple-send', "@x5c $key");
	my $note = sub { qq({"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"$_[0]","version":"2.0","signedDate":1698148900000,"data":{"bundleId":"$_[1]","environment":"Sandbox"}}) };
	my ($st, $ans) = sender('apple', $s, $url, $note->('send-apple-1', 'com.example.app'));
	is($st, 200, 'hookinbox-send apple: a notification it signs is accepted') or diag($ans);
	is($t->sql("select count(*) || '|' || min(event_type) from hookinbox.inbox where event_id = 'send-apple-1'"),
		'1|SUBSCRIBED.INITIAL_BUY', 'hookinbox-send apple: one row under notificationUUID');
	($st) = sender('apple', $s, $url, $note->('send-apple-1', 'com.example.app'), '--repeat=3');
	is(row_of('send-apple-1'), 1, 'hookinbox-send apple: a redelivery is the same row');
	my $before = rows();
	my $sent = sent_body('apple', $s, $note->('send-apple-2', 'com.example.app'));
	my ($h, $p, $sig) = $sent =~ /^\{"signedPayload":"([^."]+)\.([^."]+)\.([^."]+)"\}$/;
	ok(defined $sig, 'hookinbox-send apple: the body is {"signedPayload": <JWS>}');
	my $hdr = decode_json(decode_base64($h =~ tr{-_}{+/}r . '=' x (-length($h) % 4)));
	is_deeply($hdr->{x5c}, \@x5c, 'hookinbox-send apple: its x5c is the secret\'s chain');
	my $forged = b64u($note->('send-apple-2', 'com.example.app') =~ s/INITIAL_BUY/RESUBSCRIBE/r);
	my $post = sub { $t->post('apple', $_[0], { 'Content-Type' => 'application/json' })->{status} };
	is($post->(qq({"signedPayload":"$h.$forged.$sig"})), 401, 'hookinbox-send apple: its JWS with the payload changed is refused');
	($st) = sender('apple', $s, $url, $note->('send-apple-3', 'com.other.app'));
	is($st, 401, 'hookinbox-send apple: another app\'s bundleId is refused');
	($st) = sender('apple', secret_file('apple-plain', "@x5c $plain"), $url, $note->('send-apple-4', 'com.example.app'));
	is($st, 401, 'hookinbox-send apple: signed by a key that is not the leaf\'s is refused');
	is(rows(), $before, 'hookinbox-send apple: nothing stored for any refusal');
	is($post->($sent), 200, 'hookinbox-send apple: the untampered body is accepted');
	is(row_of('send-apple-2'), 1, 'hookinbox-send apple: as one row');
}

# the App Store's own verifier (@apple/app-store-server-library's
# SignedDataVerifier, offline) accepts what hookinbox-send signs, and refuses
# a copy with its payload changed
subtest 'the App Store server library verifies hookinbox-send\'s notification' => sub {
	my $why = SDK::install();
	plan skip_all => "SDK cross-check skipped: $why" if defined $why;
	my @x5c = map { der_b64("$tmp/$_.pem") } qw(aleaf aint aroot);
	my $key = encode_base64(`openssl pkcs8 -topk8 -nocrypt -in $tmp/aleaf.key -outform DER`, '');
	my $s = secret_file('apple-sdk', "@x5c $key");
	my $ms = time * 1000;
	my $sent = sent_body('apple', $s, qq({"notificationType":"DID_RENEW","notificationUUID":"sdk-apple-1","version":"2.0","signedDate":$ms,"data":{"bundleId":"com.example.app","environment":"Sandbox"}}));
	my ($h, $p, $sig) = $sent =~ /^\{"signedPayload":"([^."]+)\.([^."]+)\.([^."]+)"\}$/;
	my $forged = b64u(qq({"notificationType":"REFUND","notificationUUID":"sdk-apple-1","version":"2.0","signedDate":$ms,"data":{"bundleId":"com.example.app","environment":"Sandbox"}}));
	my $case = { provider => 'apple', headers => {}, roots => [der_b64("$tmp/aroot.pem")], bundle_id => 'com.example.app' };
	my $res = SDK::run('verify', [ { %$case, body => $sent }, { %$case, body => qq({"signedPayload":"$h.$forged.$sig"}) },
		{ %$case, body => $sent, bundle_id => 'com.other.app' } ]);
	ok($res->[0]{ok}, 'apple: SignedDataVerifier verifies the notification hookinbox-send signs') or diag($res->[0]{error});
	ok(!$res->[1]{ok}, 'apple: and refuses it with the payload changed');
	ok(!$res->[2]{ok}, 'apple: and refuses it for another bundle id');
};

{
	my $url = $t->url('graph');
	my $s = secret_file('graph-send', 'graph-client-state-0123');
	my $item = sub { qq({"subscriptionId":"b6f4d2b8","changeType":"$_[1]","resource":"Users/u1/Messages/$_[0]","resourceData":{"id":"$_[0]"}}) };
	my $one = $item->('SendM1', 'created');
	my ($st, $ans) = sender('graph', $s, $url, $one);
	is($st, 200, 'hookinbox-send graph: a notification it sends is accepted') or diag($ans);
	my $sent = sent_body('graph', $s, $one);
	like($sent, qr/^\{"value":\[\{"clientState":"graph-client-state-0123",/, 'hookinbox-send graph: one notification, sent as a batch with its clientState');
	my $id = 'sha256:' . sha256_hex($sent);
	is($t->sql("select count(*) || '|' || min(event_type) || '|' || min(object_id) from hookinbox.inbox where event_id = '$id'"),
		'1|created|SendM1', 'hookinbox-send graph: one row under the body hash');
	my $batch = '{"value":[' . $item->('SendM2', 'updated') =~ s/\{/{"clientState":"stale",/r . ',' . $item->('SendM3', 'deleted') . ']}';
	($st) = sender('graph', $s, $url, $batch, '--repeat=3');
	is($st, 200, 'hookinbox-send graph: a batch, a clientState replaced, is accepted');
	$sent = sent_body('graph', $s, $batch);
	unlike($sent, qr/stale/, 'hookinbox-send graph: the payload\'s own clientState is replaced');
	is(row_of('sha256:' . sha256_hex($sent)), 1, 'hookinbox-send graph: a redelivered batch is one row');
	my $before = rows();
	my $post = sub { $t->post('graph', $_[0], { 'Content-Type' => 'application/json' })->{status} };
	is($post->($sent =~ s/graph-client-state-0123/graph-client-state-0124/r), 401,
		'hookinbox-send graph: its batch with a clientState changed is refused');
	($st) = sender('graph', secret_file('graph-other', 'graph-client-state-9999'), $url, $item->('SendM4', 'created'));
	is($st, 401, 'hookinbox-send graph: another subscription\'s clientState is refused');
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, '--provider=graph', "--secret-file=$s",
		"--url=$url?validationToken=send%20check", payload('');
	my $out = `$cmd 2>/dev/null`;
	is($out, "1 200 send check\n", 'hookinbox-send graph: an empty payload rehearses the validationToken handshake');
	for my $bad ('{"value":[' . $item->('SendM5', 'created') . ',7]}', '{"value":[]}', '[1]') {
		my $c = join ' ', map { HookTest::shell_quote($_) } $send, '--provider=graph', "--secret-file=$s", "--url=$url", payload($bad);
		system("$c >/dev/null 2>&1");
		is($? >> 8, 78, "hookinbox-send graph: a payload that is not notifications ($bad): exit 78, nothing sent");
	}
	is(rows(), $before, 'hookinbox-send graph: nothing stored for the refusals and the handshake');
}

done_testing();
