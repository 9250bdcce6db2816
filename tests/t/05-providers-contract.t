# SPDX-License-Identifier: ISC
# Every provider of the table keeps its contract (docs/providers.md): its
# row in the provider table with every column filled, its replay horizon
# in the table of horizons and the same number of days in sql/purge.sql,
# vectors that are accepted and refused (tests/data/provider-vectors*.json),
# request seeds for the fuzzers (tests/fuzz/corpus/verify) and a signer in
# hookinbox-send (it signs, and only then fails to connect).  The names are
# those hookinbox-send --help lists, which it reads from the provider table.
use strict;
use warnings;
use Test::More;
use HookTest;
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use File::Temp qw(tempdir);

my $top = HookTest::top();
chdir $top or die "$top: $!";
my $send = "$top/contrib/hookinbox-send";
-x $send or BAIL_OUT("$send is not built (make)");
my $tmp = tempdir(CLEANUP => 1);

sub slurp { my ($f) = @_; open my $fh, '<', $f or die "$f: $!"; local $/; <$fh> }

my ($list) = `$send --help` =~ /^Providers: (.*)\.$/m or BAIL_OUT('hookinbox-send --help lists no providers');
my @providers = split /, /, $list;
cmp_ok(scalar @providers, '>=', 50, 'providers in the table: ' . scalar @providers);

# docs/providers.md: the rows of "## The table", and the horizon of the
# table under "### Delivery ids that are not signed" (its last column)
my (%row, %horizon, $sec);
for (split /\n/, slurp('docs/providers.md')) {
	$sec = $1 if /^#+ (.*)/;
	next unless defined $sec && /^\| `/;
	my @cells = map { s/^\s+|\s+$//gr } split /(?<!\\)\|/;
	shift @cells;
	if ($sec eq 'The table') {
		$row{$1} = [@cells] if $cells[0] =~ /^`([a-z_]+)`$/;
	} elsif ($sec =~ /^Delivery ids that are not signed/) {
		my ($days) = $cells[-1] =~ /^(\d+) days?\b/;
		$horizon{$_} = $days for $cells[0] =~ /`([a-z_]+)`/g;
	}
}
my ($values) = slurp('sql/purge.sql') =~ /from \(values (.*?)\) f\(provider, days\)/s
	or BAIL_OUT('sql/purge.sql: the replay horizons not found');
my %purge = $values =~ /\('([a-z_]+)', (\d+)\)/g;

my (%accept, %reject);
for my $f (glob 'tests/data/provider-vectors*.json') {
	for my $v (@{ decode_json(slurp($f))->{vectors} }) {
		my $p = $v->{provider} eq 'standardwebhooks' ? 'standard' : $v->{provider};
		($v->{expect} eq 'accept' ? \%accept : \%reject)->{$p}++;
	}
}
# a seed's first line names its endpoint, which fuzz_request.c names after its provider
my %seeded;
for my $f (glob 'tests/fuzz/corpus/verify/*') {
	my ($ep) = slurp($f) =~ /\A([a-z_]+)(?:-[a-z0-9]+)?\n/;
	$seeded{$ep}++ if defined $ep;
}

# what hookinbox-send signs with: the secret as a provider's dashboard
# shows it, or the private key where the endpoint holds the public one
sub sh { my $out = `$_[0]`; $? == 0 or BAIL_OUT("$_[0] failed"); return $out }
sub p8 { encode_base64(sh("openssl pkcs8 -topk8 -nocrypt -in $_[0] -outform DER"), '') }
sh("openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 -out $tmp/ec.pem 2>/dev/null");
sh("openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048 -out $tmp/rsa.pem 2>/dev/null");
sh("openssl req -x509 -key $tmp/ec.pem -subj /CN=contract -days 1 -out $tmp/ec.crt 2>/dev/null");
my $x5c = encode_base64(sh("openssl x509 -in $tmp/ec.crt -outform DER"), '');
my $cert_url = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123abc.pem';
my %secret = (
	adyen => '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
	adyen_platform => '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
	discord => '11' x 32,
	telnyx => encode_base64("\x33" x 32, ''),
	postmark => 'contract-user:contract-password',
	chargebee => 'contract-user:contract-password',
	sendgrid => p8("$tmp/ec.pem"),
	plaid => 'kid-1 ' . p8("$tmp/ec.pem"),
	pubsub => 'kid-1 pusher@proj.iam.gserviceaccount.com ' . p8("$tmp/rsa.pem"),
	paypal => 'https://api.paypal.com/v1/notifications/certs/CERT-1 WH-ID ' . p8("$tmp/rsa.pem"),
	sns => "$cert_url arn:aws:sns:us-east-1:123456789012:t " . p8("$tmp/rsa.pem"),
	apple => "$x5c $x5c $x5c " . p8("$tmp/ec.pem"),
);
my $json = '{"id":"evt_contract","type":"contract.check","data":{"id":"d_1"}}';
my %payload = (
	adyen => '{"live":"false","notificationItems":[{"NotificationRequestItem":{"amount":{"currency":"EUR","value":1},'
		. '"eventCode":"AUTHORISATION","merchantAccountCode":"M","merchantReference":"r","pspReference":"8831","success":"true"}}]}',
	braintree => 'bt_payload=' . encode_base64('<notification><kind>check</kind></notification>', '') =~ s/([+\/=])/sprintf('%%%02X', ord $1)/ger,
);

# a closed port: a delivery hookinbox-send signed fails to connect (exit
# 1), one it cannot sign exits 78 before any connection
my $closed = 'http://127.0.0.1:' . HookTest::free_port() . '/hooks/contract';
for my $p (@providers) {
	my $r = $row{$p};
	ok($r && @$r == 9 && !grep({ $_ eq '' } @$r), "$p: a row of docs/providers.md's table, every column filled");
	ok(defined $horizon{$p}, "$p: a replay horizon in docs/providers.md");
	is($purge{$p}, $horizon{$p}, "$p: sql/purge.sql's horizon is the documented one");
	ok($accept{$p} && $reject{$p}, "$p: vectors accepted and refused in tests/data");
	ok($seeded{$p}, "$p: a fuzz seed in tests/fuzz/corpus/verify");

	my $sf = HookTest::write_file("$tmp/secret-$p", ($secret{$p} // 'contract-secret-0123456789') . "\n");
	my $pf = HookTest::write_file("$tmp/payload-$p", $payload{$p} // $json);
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $send, "--provider=$p", "--secret-file=$sf",
		"--url=$closed", $pf;
	my $err = `$cmd 2>&1 >/dev/null`;
	is($? >> 8, 1, "$p: hookinbox-send signs it") or diag($err);
}

done_testing();
