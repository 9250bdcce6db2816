# SPDX-License-Identifier: ISC
# provider = hmac with signed_content through lighttpd + the responder +
# PostgreSQL: what hookinbox-send signs with the same template is stored
# once and its redelivery is a duplicate; a tampered body, another value of
# a signed header, a stale, missing or malformed timestamp are refused with
# nothing stored; both secrets verify during a rotation; {url} signs
# public_url and the query the request arrived with.  The signatures are
# also computed here, by hand, so the template means the same to a
# second implementation; and an hmac endpoint written as docs/providers.md
# shows Slack accepts what the slack signer sends.  A bad template stops
# --check at its line.
use strict;
use warnings;
use Test::More;
use HookTest;
use JSON::PP;
use Digest::SHA qw(hmac_sha256_hex hmac_sha512);
use MIME::Base64 qw(encode_base64);
use File::Temp qw(tempdir);

my $top = HookTest::top();
my $send = "$top/obj/test/hookinbox-send";
-x $send or BAIL_OUT("$send is not built (make build-tests)");
my $tmp = tempdir(CLEANUP => 1);

my @tpl_secrets = ('tpl-secret-old-0123456789', 'tpl-secret-new-9876543210');
my $url_secret = 'tpl-url-secret-0123456789';
my $slack_secret = 'tpl-slack-signing-0123456789';
HookTest::record_secret(@tpl_secrets, $url_secret, $slack_secret);

my $TPL = '{header:X-Tpl-Delivery}.{timestamp}.{body}';
my $URL_TPL = '{method}&{url}&{header:X-Tenant}&{body}';
my %endpoints = (
	tpl => { provider => 'hmac', secrets => [@tpl_secrets], header => 'X-Tpl-Signature', prefix => 'v1=',
		id_header => 'X-Tpl-Delivery', type_field => 'type', signed_content => $TPL,
		timestamp_header => 'X-Tpl-Timestamp' },
	tplurl => { provider => 'hmac', secrets => [$url_secret], header => 'X-Url-Sig', algorithm => 'sha512',
		encoding => 'base64', id_field => 'id', signed_content => $URL_TPL,
		# {url} needs public_url for the first start too; the port is known after it
		public_url => 'http://127.0.0.1/hooks/tplurl' },
	# docs/providers.md: Slack as an hmac endpoint
	slackish => { provider => 'hmac', secrets => [$slack_secret], header => 'X-Slack-Signature', prefix => 'v0=',
		signed_content => 'v0:{timestamp}:{body}', timestamp_header => 'X-Slack-Request-Timestamp',
		id_field => 'event_id', type_field => 'event.type', tolerance => 300 },
);
my $t = HookTest->new(endpoints => \%endpoints, procs => 2);
$t->{o}{endpoints}{tplurl}{public_url} = $t->url('tplurl');
$t->write_config;
$t->httpd->restart;

my %file;
for my $s (@tpl_secrets, $url_secret, $slack_secret) {
	$file{$s} = HookTest::write_file("$tmp/secret-" . (keys %file), "$s\n");
	chmod 0600, $file{$s};
}

sub rows { $t->sql("select count(*) from hookinbox.inbox where endpoint = '$_[0]'") }

my $payloads = 0;
sub payload { HookTest::write_file("$tmp/payload-" . ++$payloads, $_[0]) }

# run the sender; returns (exit code, [ [n, status, body], ... ], stderr)
sub sender {
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, @_;
	my $out = `$cmd 2>$tmp/stderr`;
	my $rc = $? >> 8;
	my $err = HookTest::slurp("$tmp/stderr") // '';
	return ($rc, [ map { [ split / /, $_, 3 ] } split /\n/, $out ], $err);
}

my @tpl_flags = ('--provider=hmac', '--url=' . $t->url('tpl'), '--hmac-header=X-Tpl-Signature',
	'--hmac-prefix=v1=', '--hmac-id-header=X-Tpl-Delivery', "--hmac-signed-content=$TPL",
	'--hmac-timestamp-header=X-Tpl-Timestamp');

# ---- hookinbox-send signs with the endpoint's template

my $body = '{"type":"order.paid","n":1}';
my ($rc, $lines, $err) = sender(@tpl_flags, "--secret-file=$file{$tpl_secrets[1]}", '--event-id=dlv_1', payload($body));
is($rc, 0, 'sender: exit 0') or diag $err;
is($lines->[0][1], 200, 'sender: 200') or diag "@{ $lines->[0] }";
is(rows('tpl'), 1, 'one row');
is($t->sql(q{select event_id || '|' || coalesce(event_type, '') from hookinbox.inbox where endpoint = 'tpl'}),
	'dlv_1|order.paid', 'the row: the delivery id header and the type from the body');
is($t->sql(q{select convert_from(body, 'UTF8') from hookinbox.inbox where endpoint = 'tpl'}), $body,
	'the body stored as sent');

($rc, $lines) = sender(@tpl_flags, "--secret-file=$file{$tpl_secrets[1]}", '--event-id=dlv_1', '--repeat=3', payload($body));
is_deeply([ map { $_->[1] } @$lines ], [200, 200, 200], 'redelivered three times: 200s');
is(scalar(grep { (eval { decode_json($_->[2]) } // {})->{duplicate} } @$lines), 3, 'each a duplicate');
is(rows('tpl'), 1, 'still one row');

# rotation: the old secret still verifies, under a new delivery
($rc, $lines) = sender(@tpl_flags, "--secret-file=$file{$tpl_secrets[0]}", '--event-id=dlv_2', payload($body));
is($lines->[0][1], 200, 'rotation: the old secret verifies');
is(rows('tpl'), 2, 'rotation: its row');

($rc, $lines) = sender(@tpl_flags, "--secret-file=$file{$tpl_secrets[1]}", '--event-id=dlv_3', '--timestamp-offset=-301', payload($body));
is($lines->[0][1], 401, 'stale by 301 s: 401');
($rc, $lines) = sender(@tpl_flags, "--secret-file=$file{$tpl_secrets[1]}", '--event-id=dlv_3', '--timestamp-offset=301', payload($body));
is($lines->[0][1], 401, 'future by 301 s: 401');
is(rows('tpl'), 2, 'stale and future: nothing stored');

($rc, $lines, $err) = sender(@tpl_flags, "--secret-file=$file{$tpl_secrets[1]}", '--hmac-signed-content={timestamp}.{bdy}', payload($body));
is($rc, 78, 'sender: a bad template is refused');
like($err, qr/unknown placeholder \{bdy\}/, 'sender: and says why');

# ---- by hand: the same content computed here

sub tpl_headers {
	my (%o) = @_;
	my $ts = $o{ts} // time;
	my $id = $o{id} // 'dlv_h1';
	my $sig = hmac_sha256_hex("$id.$ts." . ($o{signed_body} // $o{body}), $o{secret} // $tpl_secrets[1]);
	my %h = ('Content-Type' => 'application/json', 'X-Tpl-Signature' => "v1=$sig",
		'X-Tpl-Timestamp' => $ts, 'X-Tpl-Delivery' => $o{send_id} // $id);
	delete $h{$_} for @{ $o{drop} // [] };
	return \%h;
}

my $hand = '{"type":"order.refunded","n":2}';
my $r = $t->post('tpl', $hand, tpl_headers(body => $hand));
is($r->{status}, 200, 'by hand: the template as documented verifies') or diag $r->{content};
is(rows('tpl'), 3, 'by hand: its row');
$r = $t->post('tpl', $hand, tpl_headers(body => $hand, secret => $tpl_secrets[0]));
is($r->{status}, 200, 'by hand: redelivered with the other secret');
ok($r->{json} && $r->{json}{duplicate}, 'by hand: a duplicate');

my $before = rows('tpl');
$r = $t->post('tpl', '{"type":"order.refunded","n":3}', tpl_headers(id => 'dlv_h2', body => '{"type":"order.refunded","n":3}', signed_body => $hand));
is($r->{status}, 401, 'tampered body: 401');
$r = $t->post('tpl', $hand, tpl_headers(id => 'dlv_h2', send_id => 'dlv_h3', body => $hand));
is($r->{status}, 401, 'another delivery id than signed: 401');
$r = $t->post('tpl', $hand, tpl_headers(id => 'dlv_h2', body => $hand, secret => 'not-a-secret-of-ours'));
is($r->{status}, 401, 'a third secret: 401');
$r = $t->post('tpl', $hand, tpl_headers(id => 'dlv_h2', body => $hand, ts => time - 400));
is($r->{status}, 401, 'stale timestamp: 401');
$r = $t->post('tpl', $hand, tpl_headers(id => 'dlv_h2', body => $hand, drop => ['X-Tpl-Timestamp']));
is($r->{status}, 401, 'no timestamp header: 401');
$r = $t->post('tpl', $hand, tpl_headers(id => 'dlv_h2', body => $hand, ts => '17x'));
is($r->{status}, 400, 'a timestamp that is not digits: 400');
$r = $t->post('tpl', $hand, tpl_headers(id => 'dlv_h2', body => $hand, drop => ['X-Tpl-Signature']));
is($r->{status}, 401, 'no signature header: 401');
is(rows('tpl'), $before, 'refused: nothing stored');
like($t->responder_log, qr/missing timestamp header/, 'the log says which check failed');

# ---- {url}: public_url and the query; a header the sender adds

my @url_flags = ('--provider=hmac', "--secret-file=$file{$url_secret}", '--hmac-header=X-Url-Sig',
	'--hmac-alg=sha512', '--hmac-encoding=base64', "--hmac-signed-content=$URL_TPL");
($rc, $lines, $err) = sender(@url_flags, '--url=' . $t->url('tplurl') . '?shard=7', payload('{"id":"u_1"}'));
is($rc, 78, 'sender: a signed header it is not given is refused');
like($err, qr/X-Tenant/, 'sender: naming it');
($rc, $lines, $err) = sender(@url_flags, '--url=' . $t->url('tplurl') . '?shard=7', '--header=X-Tenant: acme', payload('{"id":"u_1"}'));
is($lines->[0][1], 200, '{url} with a query, {header:X-Tenant} from --header: 200') or diag "$err @{ $lines->[0] // [] }";
is($t->sql(q{select event_id from hookinbox.inbox where endpoint = 'tplurl'}), 'u_1', '{url}: the row');

sub url_sig {
	my ($query, $tenant, $b) = @_;
	my $u = $t->url('tplurl') . (defined $query ? "?$query" : '');
	return encode_base64(hmac_sha512("POST&$u&$tenant&$b", $url_secret), '');
}
$r = $t->post('tplurl', '{"id":"u_2"}', { 'Content-Type' => 'application/json', 'X-Tenant' => 'acme',
	'X-Url-Sig' => url_sig('shard=8', 'acme', '{"id":"u_2"}') }, url => $t->url('tplurl') . '?shard=8');
is($r->{status}, 200, '{url} by hand: verifies') or diag $r->{content};
$r = $t->post('tplurl', '{"id":"u_3"}', { 'Content-Type' => 'application/json', 'X-Tenant' => 'acme',
	'X-Url-Sig' => url_sig('shard=8', 'acme', '{"id":"u_3"}') }, url => $t->url('tplurl') . '?shard=9');
is($r->{status}, 401, '{url}: signed for another query: 401');
$r = $t->post('tplurl', '{"id":"u_3"}', { 'Content-Type' => 'application/json', 'X-Tenant' => 'evil',
	'X-Url-Sig' => url_sig(undef, 'acme', '{"id":"u_3"}') });
is($r->{status}, 401, '{header:X-Tenant}: another tenant than signed: 401');
$r = $t->post('tplurl', '{"id":"u_3"}', { 'Content-Type' => 'application/json',
	'X-Url-Sig' => url_sig(undef, 'acme', '{"id":"u_3"}') });
is($r->{status}, 401, '{header:X-Tenant}: absent: 401');
is(rows('tplurl'), 2, '{url}: two rows, the refused stored nothing');

# ---- Slack as an hmac endpoint: the slack signer's deliveries are accepted

my $ev = '{"type":"event_callback","event_id":"EvTPL1","event":{"type":"message"}}';
($rc, $lines, $err) = sender('--provider=slack', "--secret-file=$file{$slack_secret}", '--url=' . $t->url('slackish'), '--repeat=2', payload($ev));
is_deeply([ map { $_->[1] } @$lines ], [200, 200], 'slack signer -> hmac endpoint: 200s') or diag $err;
is($t->sql(q{select count(*) || '|' || min(event_id) || '|' || min(event_type) from hookinbox.inbox where endpoint = 'slackish'}),
	'1|EvTPL1|message', 'one row, the event id and type from the body');
($rc, $lines) = sender('--provider=slack', "--secret-file=$file{$slack_secret}", '--url=' . $t->url('slackish'), '--timestamp-offset=-301', payload($ev =~ s/TPL1/TPL2/r));
is($lines->[0][1], 401, 'slack signer, stale: 401');

# ---- --check: a bad template at its line

# an hmac endpoint whose last line is $last, checked by the responder
sub check_conf {
	my ($name, $last) = @_;
	my $f = HookTest::write_file("$tmp/$name.conf", "[database]\nconninfo = dbname=hookinbox\n[endpoint x]\n"
		. "provider = hmac\nsecret_file = $file{$url_secret}\nheader = X-Sig\nid_field = id\n$last\n");
	return ($f, HookTest::run_status("$top/obj/test/hookinbox.fcgi", '--check', '-c', $f));
}
my ($bad, $out);
($bad, $rc, $out) = check_conf('bad', 'signed_content = {timestamp}.{body');
is($rc, 78, '--check: a bad template exits 78');
like($out, qr/\Q$bad\E:8: signed_content: '\{' at byte 13 is not closed/, '--check: file, line and what is wrong') or diag $out;
($bad, $rc, $out) = check_conf('half', 'signed_content = {timestamp}.{body}');
is($rc, 78, '--check: {timestamp} without timestamp_header exits 78');
like($out, qr/\Q$bad\E:3: endpoint "x": signed_content has \{timestamp\}: set timestamp_header/, '--check: says so') or diag $out;
($bad, $rc, $out) = check_conf('good', "signed_content = {timestamp}.{body}\ntimestamp_header = X-Ts");
is($rc, 0, '--check: a complete template endpoint passes') or diag $out;

done_testing();
