# SPDX-License-Identifier: ISC
# Route keys at load: order needs event versions (refused on an endpoint
# whose provider sends none, unless provider = hmac has version_field);
# order = newest is the name of today's behaviour, order = sequence needs
# versions too; response_ref_field is a dotted path; the limits' ranges; the
# sample configuration's fulfilment route does not drop events by order.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use HookTest;
use HookTest::Worker;

my $dir = tempdir('conf-XXXXXX', TMPDIR => 1, CLEANUP => 1);
open my $sf, '>', "$dir/secret" or die $!;
print $sf "s3cret-route-conf\n";
close $sf;
chmod 0600, "$dir/secret";

# load a configuration: (exit code, output); the database is never reached
sub load {
	my ($endpoint, $route) = @_;
	open my $fh, '>', "$dir/c.conf" or die $!;
	print $fh "[database]\nconninfo = host=/nonexistent dbname=none connect_timeout=1\n"
		. "[endpoint ep]\nsecret_file = $dir/secret\n$endpoint\n"
		. "[route r]\nendpoint = ep\nurl = http://127.0.0.1:9/x\n$route\n";
	close $fh;
	my $out = `@{[ HookTest::Worker::bin() ]} -c $dir/c.conf --once 2>&1`;
	return ($? >> 8, $out);
}

my ($rc, $out);
for my $p (qw(github gitlab twilio)) {
	($rc, $out) = load("provider = $p" . ($p eq 'twilio' ? "\npublic_url = https://x.example/t" : ''),
		'order = newest');
	is($rc, 78, "order on a $p endpoint: refused");
	like($out, qr/order needs event versions.*"ep" \($p\)/, "$p: says why");
}
($rc, $out) = load("provider = hmac\nheader = X-Sig\nid_header = X-Id", 'order = newest');
is($rc, 78, 'order on hmac without version_field: refused');
like($out, qr/set version_field/, 'and says what to set');
($rc, $out) = load("provider = hmac\nheader = X-Sig\nid_header = X-Id\nversion_field = seq", 'order = newest');
isnt($rc, 78, 'order on hmac with version_field: accepted') or diag $out;
for my $o (qw(newest object none)) {
	($rc, $out) = load('provider = stripe', "order = $o");
	isnt($rc, 78, "order = $o on stripe: accepted") or diag $out;
}
($rc, $out) = load('provider = github', 'order = none');
isnt($rc, 78, 'order = none on github: accepted') or diag $out;
($rc, $out) = load('provider = stripe', 'order = sequence-of-sorts');
like($out, qr/order must be none, newest or sequence, not "sequence-of-sorts"/, 'an unknown order is refused');

# an ordered route with key = object-type would keep the first version only
for my $o (qw(newest sequence)) {
	($rc, $out) = load('provider = stripe', "order = $o\nkey = object-type");
	is($rc, 78, "order = $o with key = object-type: refused");
	like($out, qr/c\.conf:\d+: route "r": order = $o and key = object-type cannot be combined/,
		"order = $o with key = object-type: file, line and why");
}
($rc, $out) = load('provider = stripe', "order = none\nkey = object-type");
isnt($rc, 78, 'key = object-type without order: accepted') or diag $out;

for my $bad ('concurrency = 0', 'concurrency = 1001', 'rate = -1', 'rate = 1.5x', 'breaker_failures = -1',
	'breaker_cooldown = 0') {
	($rc, $out) = load('provider = stripe', $bad);
	is($rc, 78, "$bad: refused");
}
for my $good ('concurrency = 1', 'rate = 0', 'breaker_failures = 0', 'breaker_cooldown = 86400') {
	($rc, $out) = load('provider = stripe', $good);
	isnt($rc, 78, "$good: accepted") or diag $out;
}

($rc, $out) = load('provider = stripe', 'reconcile_url = http://127.0.0.1:9/by-key');
like($out, qr/reconcile_url must start with http:\/\/ or https:\/\/ and hold \{key\}/, 'reconcile_url without {key}: refused');
($rc, $out) = load('provider = stripe', 'reconcile_url = ftp://x/{key}');
is($rc, 78, 'reconcile_url not http(s): refused');
($rc, $out) = load('provider = stripe', 'reconcile_url = https://x.example/by-key/{key}');
isnt($rc, 78, 'reconcile_url with {key}: accepted') or diag $out;
($rc, $out) = load('provider = stripe', 'response_ref_header = X Order');
like($out, qr/response_ref_header must be a header name/, 'response_ref_header not a header name: refused');
($rc, $out) = load('provider = stripe', 'response_ref_header = X-Order-Id');
isnt($rc, 78, 'response_ref_header = X-Order-Id: accepted') or diag $out;
# order = sequence: versions needed as for newest; response_ref_field a dotted path
($rc, $out) = load('provider = github', 'order = sequence');
is($rc, 78, 'order = sequence on a github endpoint: refused');
like($out, qr/order needs event versions.*"ep" \(github\)/, 'sequence: says why');
($rc, $out) = load('provider = stripe', 'order = sequence');
isnt($rc, 78, 'order = sequence on stripe: accepted') or diag $out;
($rc, $out) = load('provider = stripe', 'order = oldest');
like($out, qr/order must be none, newest or sequence, not "oldest"/, 'an unknown order: refused');
for my $bad ('data..id', '.id', 'id.', 'data id', 'a[0]') {
	($rc, $out) = load('provider = stripe', "response_ref_field = $bad");
	is($rc, 78, "response_ref_field = $bad: refused");
	like($out, qr/response_ref_field must be a dotted path/, "response_ref_field = $bad: says why");
}
($rc, $out) = load('provider = stripe', 'response_ref_field = data.order_id');
isnt($rc, 78, 'response_ref_field = data.order_id: accepted') or diag $out;
open my $fh, '>', "$dir/h.conf" or die $!;
print $fh "[database]\nconninfo = host=/nonexistent dbname=none connect_timeout=1\n"
	. "[endpoint ep]\nprovider = stripe\nsecret_file = $dir/secret\n"
	. "[route r]\nendpoint = ep\nhandler = sql:app.apply\nreconcile_url = https://x/{key}\n";
close $fh;
$out = `@{[ HookTest::Worker::bin() ]} -c $dir/h.conf --once 2>&1`;
like($out, qr/reconcile_url needs url/, 'reconcile_url on a handler route: refused');

# the sample configuration: its fulfilment route keeps every event
my $sample = HookTest::slurp(HookTest::top() . '/etc/hookinbox.conf');
my ($fulfil) = $sample =~ /^\[route fulfil\]\n(.*?)(?=^\[|\z)/ms;
like($fulfil, qr/^order = none$/m, 'sample: the fulfilment route has order = none');

done_testing;
