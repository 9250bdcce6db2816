# SPDX-License-Identifier: ISC
# contrib/hookinbox-send against the responder, for every provider: its
# deliveries are accepted, --repeat and --concurrency rehearse redeliveries
# (one row, the rest duplicates), --timestamp-offset rehearses stale ones,
# and its exit codes say what happened.  Then the providers' official SDKs
# (tests/sdk) verify what it sends, captured by a small HTTP listener.
use strict;
use warnings;
use Test::More;
use HookTest;
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use IO::Socket::INET;
use POSIX qw(_exit);
use File::Temp qw(tempdir);
use lib HookTest::top() . '/tests/sdk';
use SDK;

my $top = HookTest::top();
my $send = "$top/contrib/hookinbox-send";
-x $send or BAIL_OUT("$send is not built (make)");
my $tmp = tempdir(CLEANUP => 1);

# an Ed25519 key pair for Standard Webhooks v1a: the sender holds whsk_<seed>, the endpoint whpk_<public>
system("openssl genpkey -algorithm ed25519 -out $tmp/ed.pem 2>/dev/null") == 0 or BAIL_OUT('openssl genpkey');
my $whsk = 'whsk_' . encode_base64(substr(`openssl pkey -in $tmp/ed.pem -outform DER`, -32), '');
my $whpk = 'whpk_' . encode_base64(substr(`openssl pkey -in $tmp/ed.pem -pubout -outform DER`, -32), '');

my %secrets = (
	stripe => 'whsec_sender_stripe_0123456789',
	github => 'sender-github-secret-0123',
	standard => 'whsec_' . encode_base64('sender-standard-key-0123', ''),
	'standard-ed' => $whsk,
	svix => 'whsec_' . encode_base64('sender-svix-key-01234567', ''),
	acme => 'sender-acme-secret-012345',
	shopify => 'shpss_sender_0123456789abcdef',
	slack => 'sender-slack-signing-0123456',
	paddle => 'pdl_ntfset_sender_0123456789',
	twilio => 'sender-twilio-auth-token-01',
	gitlab => 'sender-gitlab-token-0123456',
	square => 'sender-square-sigkey-012345',
	(map { ($_ => "sender-$_-secret-0123456789") } qw(mux workos razorpay zoom linear intercom
		bitbucket typeform calendly woocommerce sentry pagerduty vercel checkout lemonsqueezy notion)),
	gocardless => 'sender-gocardless-secret-0123',
	meta => 'sender-meta-app-secret-0123',
	clerk => 'whsec_' . encode_base64('sender-clerk-key-0123456', ''),
	resend => 'whsec_' . encode_base64('sender-resend-key-012345', ''),
	okta => 'sender-okta-hook-secret-0123',
	zendesk => 'sender-zendesk-secret-0123',
	box => 'sender-box-primary-key-0123',
	(map { ($_ => "sender-$_-secret-0123456789") } qw(braintree trello mandrill twitter dropbox asana
		twitch xero docusign)),
	webflow => 'sender-webflow-secret-0123',
	postmark => 'pm-user:sender-postmark-pass-0123',
	chargebee => 'cb-user:sender-chargebee-pass-0123',
	adyen_platform => '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
	# Ed25519: the sender holds the private seed, the endpoint the public key
	discord => '1111111111111111111111111111111111111111111111111111111111111111',
	telnyx => 'MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=',
);
my %public = (discord => 'd04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737',
	telnyx => 'F8t5+ytBIPKx7GXkGY1uCLKOgT/rAeSkAIObheGAgM4=');
my %provider = map { ($_ => $_) } keys %secrets;
$provider{'standard-ed'} = 'standard';
$provider{acme} = 'hmac';
my %endpoints = map {
	($_ => { provider => $provider{$_}, secrets => [$_ eq 'standard-ed' ? $whpk : $public{$_} // $secrets{$_}] })
} keys %secrets;
$endpoints{acme} = { %{ $endpoints{acme} }, header => 'X-Acme-Signature', algorithm => 'sha512',
	encoding => 'base64', prefix => 'v1=', id_header => 'X-Acme-Delivery', type_field => 'type' };
my @acme_flags = ('--hmac-header=X-Acme-Signature', '--hmac-alg=sha512', '--hmac-encoding=base64',
	'--hmac-prefix=v1=', '--hmac-id-header=X-Acme-Delivery');

my $t = HookTest->new(endpoints => \%endpoints, procs => 2);
# Twilio signs the URL it requests: here that is the responder's own
$t->{o}{endpoints}{twilio}{public_url} = $t->url('twilio');
# and so does Square: its notification URL, here the responder's own (--url)
$t->{o}{endpoints}{square}{public_url} = $t->url('square');
# Trello its callbackURL and Mandrill its webhook URL
$t->{o}{endpoints}{$_}{public_url} = $t->url($_) for qw(trello mandrill);
$t->write_config;
$t->httpd->restart;

my %files;
for my $name (keys %secrets) {
	my $f = "$tmp/secret-$name";
	open my $fh, '>', $f or die $!;
	print $fh "$secrets{$name}\n";
	close $fh;
	chmod 0600, $f;
	$files{$name} = $f;
}
HookTest::record_secret(values %secrets);

my $payloads = 0;
sub payload { HookTest::write_file("$tmp/payload-" . ++$payloads, $_[0]) }

# run the sender; returns (exit code, [ [n, status, body], ... ], stderr)
sub sender {
	my (@args) = @_;
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, @args;
	my $out = `$cmd 2>$tmp/stderr`;
	my $rc = $? >> 8;
	open my $fh, '<', "$tmp/stderr" or die $!;
	my $err = do { local $/; <$fh> } // '';
	my @lines = map { [ split / /, $_, 3 ] } split /\n/, $out;
	return ($rc, \@lines, $err);
}

sub rows { $t->sql('select count(*) from hookinbox.inbox') }

sub bodies { return map { eval { decode_json($_->[2]) } // {} } @{ $_[0] } }

# per endpoint: the payload (a function of a unique tag), the flags, a timestamped scheme?
my %case = (
	stripe => { ts => 1, body => sub { qq({"id":"evt_send_$_[0]","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1"}}}) } },
	github => { flags => ['--type=push'], body => sub { qq({"ref":"refs/heads/main","after":"$_[0]"}) } },
	standard => { ts => 1, body => sub { qq({"type":"a.b","data":{"id":"$_[0]"}}) } },
	'standard-ed' => { ts => 1, body => sub { qq({"type":"a.ed","data":{"id":"$_[0]"}}) } },
	svix => { ts => 1, body => sub { qq({"type":"c.d","data":{"id":"$_[0]"}}) } },
	acme => { flags => \@acme_flags, body => sub { qq({"type":"acme.thing","n":"$_[0]"}) } },
	shopify => { flags => ['--type=orders/create'], body => sub { qq({"id":"$_[0]"}) } },
	slack => { ts => 1, body => sub { qq({"type":"event_callback","event_id":"Ev$_[0]","event":{"type":"message"}}) } },
	'slack-form' => { ep => 'slack', ts => 1, body => sub { "command=%2Fsend&text=hi&trigger_id=trig.$_[0]" } },
	paddle => { ts => 1, body => sub { qq({"event_id":"evt_$_[0]","event_type":"x.y","data":{"id":"z"}}) } },
	twilio => { body => sub { "MessageSid=SM$_[0]&MessageStatus=delivered&Body=hello+world" } },
	'twilio-json' => { ep => 'twilio', body => sub { qq({"type":"tw.json","n":"$_[0]"}) } },
	gitlab => { flags => ['--type=Push Hook'], body => sub { qq({"object_kind":"push","after":"$_[0]"}) } },
	square => { body => sub { qq({"merchant_id":"ML1","type":"payment.created","event_id":"sq_$_[0]","created_at":"2024-01-01T00:00:00Z","data":{"type":"payment","id":"p_$_[0]"}}) } },
	mux => { ts => 1, body => sub { qq({"type":"video.asset.ready","object":{"id":"a1"},"id":"mux_$_[0]"}) } },
	workos => { ts => 1, body => sub { qq({"id":"event_$_[0]","event":"user.created","data":{"id":"u1"}}) } },
	razorpay => { body => sub { qq({"entity":"event","event":"payment.captured","n":"$_[0]"}) } },
	zoom => { ts => 1, body => sub { qq({"event":"meeting.started","event_ts":1700000000000,"payload":{"object":{"id":"$_[0]"}}}) } },
	linear => { body => sub { my $ms = time * 1000; qq({"action":"create","data":{"id":"$_[0]"},"webhookTimestamp":$ms}) } },
	intercom => { body => sub { qq({"type":"notification_event","id":"notif_$_[0]","topic":"ping"}) } },
	bitbucket => { flags => ['--type=repo:push'], body => sub { qq({"push":{"n":"$_[0]"}}) } },
	typeform => { body => sub { qq({"event_id":"tf_$_[0]","event_type":"form_response"}) } },
	calendly => { ts => 1, body => sub { qq({"event":"invitee.created","payload":{"uri":"https://api.calendly.com/x/$_[0]"}}) } },
	woocommerce => { flags => ['--type=order.created'], body => sub { qq({"id":"$_[0]"}) } },
	sentry => { flags => ['--type=issue'], body => sub { qq({"action":"created","n":"$_[0]"}) } },
	pagerduty => { body => sub { qq({"event":{"id":"pd_$_[0]","event_type":"incident.triggered"}}) } },
	vercel => { body => sub { qq({"id":"evt_$_[0]","type":"deployment.created"}) } },
	checkout => { body => sub { qq({"id":"evt_$_[0]","type":"payment_approved"}) } },
	lemonsqueezy => { flags => ['--type=order_created'], body => sub { qq({"data":{"id":"$_[0]"}}) } },
	notion => { body => sub { qq({"id":"nt_$_[0]","type":"page.created"}) } },
	adyen_platform => { body => sub { qq({"data":{"id":"$_[0]"},"type":"balancePlatform.balanceAccount.updated"}) } },
	webflow => { ts => 1, body => sub { qq({"triggerType":"form_submission","payload":{"id":"$_[0]"}}) } },
	box => { ts => 1, body => sub { qq({"type":"webhook_event","trigger":"FILE.UPLOADED","source":{"id":"$_[0]"}}) } },
	gocardless => { body => sub { qq({"events":[{"id":"EV$_[0]","resource_type":"payments","action":"confirmed"}]}) } },
	meta => { body => sub { qq({"object":"whatsapp_business_account","entry":[{"id":"$_[0]","changes":[]}]}) } },
	clerk => { ts => 1, body => sub { qq({"type":"user.created","object":"event","timestamp":1700000000000,"data":{"id":"user_$_[0]"}}) } },
	resend => { ts => 1, body => sub { qq({"type":"email.sent","created_at":"2024-01-01T00:00:00.000Z","data":{"email_id":"$_[0]"}}) } },
	okta => { body => sub { qq({"eventType":"com.okta.event_hook","eventId":"ev_$_[0]","eventTime":"2023-11-14T22:13:20.000Z","data":{"events":[]}}) } },
	zendesk => { ts => 1, body => sub { qq({"type":"zen:event-type:ticket.created","detail":{"id":"$_[0]"}}) } },
	postmark => { body => sub { qq({"RecordType":"Delivery","MessageID":"$_[0]"}) } },
	chargebee => { body => sub { qq({"id":"ev_$_[0]","event_type":"customer_created","occurred_at":1700000000}) } },
	discord => { body => sub { qq({"id":"ix_$_[0]","type":2,"data":{"id":"1","name":"hello"}}) } },
	telnyx => { ts => 1, body => sub { qq({"data":{"id":"tx_$_[0]","event_type":"message.sent"}}) } },
	braintree => { body => sub { 'bt_payload=' . (encode_base64("<notification><kind>check</kind><subject><id>$_[0]</id></subject></notification>") =~ s/([+\/=\n])/sprintf('%%%02X', ord $1)/ger) } },
	trello => { body => sub { qq({"action":{"id":"$_[0]","type":"updateCard"},"model":{"id":"m1"}}) } },
	mandrill => { body => sub { "mandrill_events=%5B%7B%22event%22%3A%22send%22%2C%22_id%22%3A%22$_[0]%22%7D%5D" } },
	twitter => { body => sub { qq({"for_user_id":"1","tweet_create_events":[{"id_str":"$_[0]"}]}) } },
	dropbox => { body => sub { qq({"list_folder":{"accounts":["dbid:$_[0]"]}}) } },
	asana => { body => sub { qq({"events":[{"action":"changed","resource":{"gid":"$_[0]"}}]}) } },
	twitch => { ts => 1, flags => ['--type=channel.follow'], body => sub { qq({"subscription":{"id":"$_[0]","type":"channel.follow"},"event":{}}) } },
	# Xero's answers have no body: no ids to compare
	xero => { bare => 1, body => sub { qq({"events":[{"resourceId":"$_[0]","eventType":"UPDATE"}],"firstEventSequence":1,"lastEventSequence":1}) } },
	docusign => { body => sub { qq({"event":"envelope-sent","generatedDateTime":"2024-01-01T00:00:00Z","data":{"envelopeId":"$_[0]"}}) } },
);

for my $name (sort keys %case) {
	my $c = $case{$name};
	my $ep = $c->{ep} // $name;
	my @base = ("--provider=$provider{$ep}", "--secret-file=$files{$ep}", '--url=' . $t->url($ep), @{ $c->{flags} // [] });

	# one delivery
	my $before = rows();
	my ($rc, $lines, $err) = sender(@base, payload($c->{body}->("one$name" =~ s/\W//gr)));
	is($rc, 0, "$name: exit 0") or diag($err);
	is(scalar(@$lines), 1, "$name: one line printed");
	is($lines->[0][1], 200, "$name: 200") or diag("@{ $lines->[0] }");
	is(rows(), $before + 1, "$name: one row");

	# --repeat 5: one row, the other four duplicates of it
	$before = rows();
	($rc, $lines) = sender(@base, '--repeat=5', payload($c->{body}->("rep$name" =~ s/\W//gr)));
	my @b = bodies($lines);
	is($rc, 0, "$name --repeat 5: exit 0");
	is_deeply([ map { $_->[1] } @$lines ], [ (200) x 5 ], "$name --repeat 5: five 200s");
	is(scalar(grep { $_->{duplicate} } @b), 4, "$name --repeat 5: four duplicates") unless $c->{bare};
	is(scalar(keys %{ { map { (($_->{id} // 'none') => 1) } @b } }), 1, "$name --repeat 5: one id");
	is(rows(), $before + 1, "$name --repeat 5: one row");

	# --concurrency 8 --repeat 16: one row
	$before = rows();
	($rc, $lines) = sender(@base, '--repeat=16', '--concurrency=8', payload($c->{body}->("conc$name" =~ s/\W//gr)));
	@b = bodies($lines);
	is($rc, 0, "$name --concurrency 8 --repeat 16: exit 0");
	is(scalar(grep { $_->[1] == 200 } @$lines), 16, "$name --concurrency 8 --repeat 16: sixteen 200s");
	is(scalar(grep { !$_->{duplicate} } @b), 1, "$name --concurrency 8 --repeat 16: one new") unless $c->{bare};
	is(scalar(keys %{ { map { (($_->{id} // 'none') => 1) } @b } }), 1, "$name --concurrency 8 --repeat 16: one id");
	is(rows(), $before + 1, "$name --concurrency 8 --repeat 16: one row");

	# an hour stale: refused where the scheme has a timestamp
	$before = rows();
	($rc, $lines) = sender(@base, '--timestamp-offset=-3600', payload($c->{body}->("stale$name" =~ s/\W//gr)));
	if ($c->{ts}) {
		is($lines->[0][1], 401, "$name --timestamp-offset -3600: 401");
		is($rc, 1, "$name --timestamp-offset -3600: exit 1");
		is(rows(), $before, "$name --timestamp-offset -3600: nothing stored");
	} else {
		is($lines->[0][1], 200, "$name --timestamp-offset -3600: no timestamp in this scheme, 200");
	}
}

# exit codes and refusals
{
	my @stripe = ('--provider=stripe', '--url=' . $t->url('stripe'));
	my $p = payload('{"id":"evt_send_exit","type":"t"}');
	my ($rc, $lines, $err);

	open my $fh, '>', "$tmp/wrong" or die $!;
	print $fh "whsec_not_the_right_one_0123\n";
	close $fh;
	chmod 0600, "$tmp/wrong";
	($rc, $lines) = sender(@stripe, "--secret-file=$tmp/wrong", $p);
	is($lines->[0][1], 401, 'wrong secret: 401');
	is($rc, 1, 'wrong secret: exit 1');

	($rc, $lines) = sender(@stripe, "--secret-file=$files{stripe}", payload('{"type":"no.id"}'));
	is($lines->[0][1], 400, 'stripe payload without an id: 400');
	is($rc, 1, 'a 400: exit 1');

	($rc) = sender('--provider=stripe', "--secret-file=$files{stripe}", '--url=http://127.0.0.1:' . HookTest::free_port() . '/x', $p);
	is($rc, 1, 'connection refused: exit 1');

	($rc, undef, $err) = sender("--secret-file=$files{stripe}", '--url=' . $t->url('stripe'), $p);
	is($rc, 64, 'no --provider: exit 64');
	like($err, qr/no provider/, 'no --provider: says so');
	($rc, undef, $err) = sender('--provider=nope', "--secret-file=$files{stripe}", '--url=' . $t->url('stripe'), $p);
	is($rc, 64, 'unknown provider: exit 64');
	($rc) = sender(@stripe, "--secret-file=$files{stripe}", '--repeat=0', $p);
	is($rc, 64, '--repeat 0: exit 64');
	($rc) = sender(@stripe, "--secret-file=$files{stripe}", '--concurrency=x', $p);
	is($rc, 64, '--concurrency x: exit 64');
	($rc) = sender(@stripe, "--secret-file=$files{stripe}", '--bogus', $p);
	is($rc, 64, 'unknown option: exit 64');
	($rc) = sender(@stripe, "--secret-file=$files{stripe}", "$tmp/no-such-payload");
	is($rc, 66, 'payload missing: exit 66');
	($rc) = sender(@stripe, "--secret-file=$tmp/no-such-secret", $p);
	is($rc, 78, 'secret file missing: exit 78');
	chmod 0644, "$tmp/wrong";
	($rc, undef, $err) = sender(@stripe, "--secret-file=$tmp/wrong", $p);
	is($rc, 78, 'secret file readable by others: exit 78');
	unlike($err, qr/not_the_right_one/, 'secret file refused: the secret is not shown');
	($rc) = sender('--provider=standard', "--secret-file=$files{stripe}", '--url=' . $t->url('standard'), $p);
	is($rc, 78, 'standard webhooks with a secret that is not a key: exit 78');
	($rc, $lines) = sender('--help');
	is($rc, 0, '--help: exit 0');
	($rc, $lines) = sender('--version');
	is($rc, 0, '--version: exit 0');
}

# ---------------------------------------------------------------- the official SDKs verify what the sender sends

# accept one HTTP request, answer 200, return {target, headers, body}
sub capture {
	my (@args) = @_;
	my $srv = IO::Socket::INET->new(Listen => 5, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp', ReuseAddr => 1)
		or die "listen: $!";
	my $port = $srv->sockport;
	my $url = "http://127.0.0.1:$port/hooks/capture";
	my $pid = fork // die;
	if (!$pid) {
		close $srv;
		my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, (map { s/\@URL\@/$url/r } @args);
		system("$cmd >/dev/null 2>&1");
		_exit($? >> 8);
	}
	my $req = { headers => {} };
	my $conn = $srv->accept or die "accept: $!";
	local $/ = "\r\n";
	my $line = <$conn>;
	($req->{target}) = $line =~ m{^POST (\S+) HTTP/1\.[01]\r\n$};
	while (defined(my $h = <$conn>)) {
		last if $h eq "\r\n";
		$h =~ s/\r\n$//;
		my ($k, $v) = split /:\s*/, $h, 2;
		$req->{headers}{$k} = $v;
	}
	my ($len) = map { $req->{headers}{$_} } grep { lc $_ eq 'content-length' } keys %{ $req->{headers} };
	my $body = '';
	while (length($body) < ($len // 0)) {
		my $got = read($conn, $body, $len - length($body), length($body));
		last unless $got;
	}
	$req->{body} = $body;
	print $conn "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
	close $conn;
	close $srv;
	waitpid $pid, 0;
	$req->{url} = "http://127.0.0.1:$port$req->{target}";
	$req->{exit} = $? >> 8;
	return $req;
}

subtest 'official SDKs verify what hookinbox-send signs' => sub {
	my $why = SDK::install();
	plan skip_all => "SDK cross-check skipped: $why" if defined $why;
	my %flags = (
		github => ['--type=push'],
		shopify => ['--type=orders/create', '-H', 'X-Shopify-Shop-Domain: hookinbox-test.myshopify.com',
			'-H', 'X-Shopify-API-Version: 2024-10'],
	);
	my %body = (
		twilio => 'CallSid=CA1&CallStatus=ringing&From=%2B15550100&Caller=Ann+Smith&Digits=1%23',
		'twilio-json' => '{"type":"sdk.check","n":1}',
	);
	my @names = (qw(stripe github standard svix shopify slack twilio twilio-json));
	my $case = sub {
		my ($name) = @_;
		my $p = $name =~ s/-json//r;
		my $req = capture("--provider=$p", "--secret-file=$files{$p}", '--url=@URL@', @{ $flags{$p} // [] },
			payload($body{$name} // qq({"id":"evt_sdk_$name","type":"sdk.check","data":{"id":"o"}})));
		is($req->{exit}, 0, "$name: the sender got its 200 from the listener");
		return { provider => $p, secret => $secrets{$p}, body => $req->{body}, headers => $req->{headers},
			url => $req->{url} };
	};
	my $tamper = sub {
		my ($c) = @_;
		return { %$c, body => $c->{body} =~ /^\{/ ? $c->{body} =~ s/\}$/,"x":1}/r : $c->{body} =~ s/ringing/answered/r };
	};
	my @cases = map { $case->($_) } @names;
	# and one tampered copy of each: the SDK must refuse it
	my $res = SDK::run('verify', [ @cases, map { $tamper->($_) } @cases ]);
	for my $i (0 .. $#names) {
		ok($res->[$i]{ok}, "$names[$i]: the official SDK verifies hookinbox-send's delivery")
			or diag($res->[$i]{error});
		ok(!$res->[$i + @names]{ok}, "$names[$i]: the official SDK refuses a tampered copy");
	}
	# Paddle's SDK allows only 5 seconds between signing and verifying: on
	# a loaded machine node's start-up can eat that, so up to three tries
	my ($ok, $refused, $err);
	for my $try (1 .. 3) {
		my $c = $case->('paddle');
		my $r = SDK::run('verify', [ $c, $tamper->($c) ]);
		($ok, $refused, $err) = ($r->[0]{ok}, !$r->[1]{ok}, $r->[0]{error});
		last if $ok;
	}
	ok($ok, "paddle: the official SDK verifies hookinbox-send's delivery") or diag($err);
	ok($refused, 'paddle: the official SDK refuses a tampered copy');
};

done_testing();
