# SPDX-License-Identifier: ISC
# hookinbox-backfill against a real local server answering as Stripe's and
# GitHub's APIs do (tests/lib/HookTest/FakeProviderApi.pm), with the real
# responder, database, worker and downstream.  Invariants: every event the
# provider lists and the inbox lacks is stored once, under the delivery key a
# live delivery has, marked backfilled, with the exact text the API returned;
# events already delivered are not stored again; a second run stores nothing;
# a later live delivery of a backfilled event is its duplicate (same intake
# id); the worker delivers the backfilled events; a credential file others can
# read, a refused credential and a pagination link to another host store
# nothing; the credential is sent only in the Authorization header and
# appears in no output, URL or row.
use strict;
use warnings;
use Test::More;
use Digest::SHA qw(sha256_hex);
use HTTP::Tiny;
use JSON::PP ();
use POSIX ();
use HookTest;
use HookTest::FakeProviderApi;
use HookTest::Downstream;

my $top = HookTest::top();
my $bin = "$top/obj/test/hookinbox-backfill";
my $token = 'sk_test_backfill_c0ffee_51Hx9q';
my $gh_token = 'ghp_backfillTokenFor86test0123456789';
HookTest::record_secret($token, $gh_token);

my $tmpd = File::Temp::tempdir('bf-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest->new(
	endpoints => {
		'stripe-live' => { provider => 'stripe', secrets => ['whsec_backfill_test_1'], account => 'acct_1',
			environment => 'live' },
		gh => { provider => 'github', secrets => ['gh-hook-secret-86'] },
	},
	routes => { all => { endpoint => 'stripe-live gh', url => $d->url('/hooks'), timeout => 2 } },
	worker => { lease => 5, backoff_base => 1 },
	worker_role => 'hookinbox_worker',
);
my $api = HookTest::FakeProviderApi->new(dir => $tmpd, token => $token);
my $dir = $t->dir;

sub write_file { my ($name, @rest) = @_; return HookTest::write_file("$dir/$name", @rest) }
my $cred = write_file('stripe.key', "$token\n");
my $gh_cred = write_file('github.token', "$gh_token\n");

my @outputs;
# HOOKINBOX_VALGRIND=1: every run under valgrind (an error or a leak exits 42)
my @wrap = $ENV{HOOKINBOX_VALGRIND}
	? ('valgrind', '-q', '--error-exitcode=42', '--leak-check=full', '--errors-for-leak-kinds=definite,indirect') : ();
sub backfill {
	my (@args) = @_;
	my $cmd = join ' ', map { HookTest::shell_quote($_) } @wrap, $bin, '-c', $t->config, @args;
	my $out = `$cmd 2>&1`;
	push @outputs, $out;
	return ($? >> 8, $out);
}
# a live delivery to the responder, on a connection of its own (the backfill
# runs between two posts outlast the web server's keep-alive)
sub live_post {
	my ($ep, $body, $headers) = @_;
	HookTest::record_secret(map { $headers->{$_} } grep { /signature/i } keys %$headers);
	my $r = HTTP::Tiny->new(timeout => 30)->request('POST', $t->url($ep), { content => $body, headers => $headers });
	$r->{json} = eval { JSON::PP::decode_json($r->{content}) };
	return $r;
}

# an RFC 3339 time (UTC)
sub iso { my @g = gmtime($_[0]); sprintf('%04d-%02d-%02dT%02d:%02d:%02dZ', $g[5] + 1900, $g[4] + 1, @g[3, 2, 1, 0]) }
sub inbox_count { $t->sql('select count(*) from hookinbox.inbox') }
sub row {
	my ($id) = @_;
	my $r = $t->sql("select id, endpoint, provider, account, environment, coalesce(event_type, ''), "
		. "coalesce(object_id, ''), coalesce(event_version::text, ''), backfilled_at is not null, "
		. "encode(sha256(body), 'hex'), headers::text from hookinbox.inbox where event_id = '$id'");
	return [split /\|/, $r, 11];
}

my $now = time;
my $since = $now - 3600;
# Stripe events as the API serialises them (indented, keys in its order):
# the stored body must be exactly this text
sub stripe_event {
	my ($id, $type, $obj, $created, %o) = @_;
	return { id => $id, created => $created, delivered => $o{delivered} ? 1 : 0,
		text => qq(    {\n      "id": "$id",\n      "object": "event",\n      "api_version": "2024-06-20",\n)
			. qq(      "created": $created,\n      "data": {\n        "object": {\n          "id": "$obj",\n)
			. qq(          "object": "invoice",\n          "amount_paid": 1200\n        }\n      },\n)
			. qq(      "livemode": true,\n      "pending_webhooks": 1,\n      "type": "$type"\n    }) };
}
my @stripe = (
	stripe_event('evt_a1', 'invoice.paid', 'in_a1', $now - 3000),
	stripe_event('evt_b2', 'invoice.paid', 'in_b2', $now - 2500),
	stripe_event('evt_c3', 'invoice.payment_failed', 'in_c3', $now - 2000),
	stripe_event('evt_d4', 'customer.updated', 'cus_d4', $now - 1500),
	stripe_event('evt_e5', 'invoice.paid', 'in_e5', $now - 1000),
	stripe_event('evt_old', 'invoice.paid', 'in_old', $now - 7200),               # before --since
	stripe_event('evt_fine', 'invoice.paid', 'in_fine', $now - 900, delivered => 1), # delivered fine
);
$api->stripe_events(@stripe);
# the event's text is its value in the list, without the indentation before it
my %text = map { ($_->{id} => $_->{text} =~ s/^\s+//r) } @stripe;

# ---- the program's trio and its usage errors
{
	my $out = `$bin --help 2>&1`;
	is($?, 0, '--help exits 0');
	like($out, qr/--endpoint.*--since.*--credential.*--dry-run.*78/s, '--help lists the options and exit codes');
	like(`$bin --version 2>&1`, qr/^hookinbox-backfill \d/, '--version');
	my ($rc) = backfill('--bogus');
	is($rc, 64, 'a bad option: 64');
	($rc, $out) = backfill('--endpoint', 'stripe-live', '--credential', $cred);
	is($rc, 64, 'no --since: 64');
	($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', 'yesterday', '--credential', $cred);
	is($rc, 64, 'a --since that is no time: 64');
	like($out, qr/--since "yesterday" is not an RFC 3339 time/, '... said so');
	($rc, $out) = backfill('--endpoint', 'gh', '--since', $since, '--credential', $gh_cred,
		'--api-url', $api->url);
	is($rc, 64, 'github without --repo and --hook-id: 64');
	like($out, qr/needs --repo OWNER\/NAME and --hook-id N/, '... said so');
	($rc, $out) = backfill('--endpoint', 'nosuch', '--since', $since, '--credential', $cred);
	is($rc, 78, 'an endpoint the configuration lacks: 78');
	like($out, qr/no endpoint "nosuch"/, '... said so');
	($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $cred,
		'--api-url', 'http://api.example.com');
	is($rc, 64, 'a plain-http API URL off loopback is refused: 64');
	like($out, qr/must be https/, '... said so');
	is(scalar $api->requests, 0, 'none of these asked the API anything');
}

# ---- a credential file others can read is refused before anything is asked
{
	my $open = write_file('open.key', "$token\n", 0644);
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $open,
		'--api-url', $api->url);
	is($rc, 78, 'a credential file readable by others: 78');
	like($out, qr/group or world access/, '... with the secret files\' message');
	my $two = write_file('two.key', "$token\nsk_test_other_line_2\n");
	($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $two,
		'--api-url', $api->url);
	is($rc, 78, 'a credential file of two lines: 78');
	is(scalar $api->requests, 0, 'the API was not asked');
}

# ---- a refused credential: a clear error, nothing stored
{
	my $wrong = write_file('wrong.key', "sk_test_wrong_key_000000\n");
	HookTest::record_secret('sk_test_wrong_key_000000');
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $wrong,
		'--api-url', $api->url);
	is($rc, 78, 'HTTP 401 from the API: 78');
	like($out, qr/credential refused \(HTTP 401\)/, '... "credential refused"');
	is(inbox_count(), 0, '... nothing stored');
}

# ---- evt_b2 reached the intake live before the outage
my $live_b2;
{
	my $body = $text{evt_b2};
	my $r = live_post('stripe-live', $body,
		{ 'Stripe-Signature' => HookTest::stripe_sig('whsec_backfill_test_1', $body), 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'evt_b2 delivered live') or diag $r->{content};
	$live_b2 = $r->{json}{id};
}

# ---- dry run: lists what would be stored, stores nothing
{
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $cred,
		'--api-url', $api->url, '--dry-run');
	is($rc, 0, 'dry run exits 0') or diag $out;
	like($out, qr/would store evt_a1 \(invoice\.paid\)/, 'dry run names evt_a1');
	unlike($out, qr/would store evt_b2/, 'dry run: evt_b2 is in the inbox');
	like($out, qr/listed 5, already in the inbox 1, would store 4, failed 0/, 'dry run figures') or diag $out;
	is(inbox_count(), 1, 'dry run stored nothing');
}

# ---- the backfill: four stored, once, under the live key, marked
{
	my $before = scalar $api->requests;
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $cred,
		'--api-url', $api->url);
	is($rc, 0, 'backfill exits 0') or diag $out;
	like($out, qr/listed 5, already in the inbox 1, stored 4, failed 0/, 'figures') or diag $out;
	like($out, qr/page 3: 1 listed/, 'three pages walked (page size 2)');
	my @req = ($api->requests)[$before .. scalar($api->requests) - 1];
	is(scalar @req, 3, 'three API calls');
	like($req[0]{query}, qr/^delivery_success=false&created%5Bgte%5D=$since&created%5Blte%5D=\d+&limit=100$/,
		'first page: delivery_success=false and the range');
	like($req[1]{query}, qr/starting_after=evt_d4$/, 'next page: starting_after the last id');
	is(scalar(grep { $_->{auth} } @req), 3, 'every call carried the credential as Bearer');
	is(scalar(grep { "$_->{path}?$_->{query}" =~ /\Q$token\E/ } $api->requests), 0, 'never in a URL');
	for my $id (qw(evt_a1 evt_c3 evt_d4 evt_e5)) {
		my $r = row($id);
		is_deeply([@$r[1 .. 4]], ['stripe-live', 'stripe', 'acct_1', 'live'], "$id: the live delivery key");
		is($r->[8], 't', "$id: marked backfilled");
		is($r->[9], sha256_hex($text{$id}), "$id: the body is the API's exact text");
	}
	is_deeply([@{ row('evt_c3') }[5 .. 7]], ['invoice.payment_failed', 'in_c3', $now - 2000],
		'envelope fields read as for a live delivery: type, object id, version');
	is(row('evt_b2')->[8], 'f', 'evt_b2 (delivered live) is not marked');
	is($t->sql("select count(*) from hookinbox.inbox where event_id = 'evt_b2'"), 1, 'evt_b2 not stored twice');
	is($t->sql("select count(*) from hookinbox.inbox where event_id in ('evt_old', 'evt_fine')"), 0,
		'events out of range or delivered fine are not stored');
	is(inbox_count(), 5, 'five inbox rows in all');
}

# ---- a range with no event: nothing listed, nothing stored, exit 0
{
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $now - 86400, '--until',
		iso($now - 80000), '--credential', $cred, '--api-url', $api->url);
	is($rc, 0, 'an empty range exits 0') or diag $out;
	like($out, qr/page 1: 0 listed.*listed 0, already in the inbox 0, stored 0, failed 0/s, '... and says so');
}

# ---- again: nothing more
{
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $cred,
		'--api-url', $api->url, '--conninfo', $t->pg->conninfo('hookinbox_backfill'));
	is($rc, 0, 'a second run exits 0');
	like($out, qr/listed 5, already in the inbox 5, stored 0, failed 0/, 'a second run stores nothing') or diag $out;
	is(inbox_count(), 5, 'still five rows');
}

# ---- two runs at once over new events: each stored once in all
{
	my @more = map { stripe_event("evt_p$_", 'invoice.paid', "in_p$_", $now - 800 + $_) } 1 .. 7;
	$api->stripe_events(@stripe, @more);
	$text{$_->{id}} = $_->{text} =~ s/^\s+//r for @more;
	my @pids;
	for my $k (1, 2) {
		my $pid = fork // die;
		if ($pid == 0) {
			my $cmd = join ' ', map { HookTest::shell_quote($_) } $bin, '-c', $t->config, '--endpoint',
				'stripe-live', '--since', $since, '--credential', $cred, '--api-url', $api->url;
			exec("$cmd > $dir/par$k.out 2>&1") or POSIX::_exit(127);
		}
		push @pids, $pid;
	}
	waitpid $_, 0 for @pids;
	my ($s1, $s2) = map { HookTest::slurp("$dir/par$_.out") } 1, 2;
	push @outputs, $s1, $s2;
	my ($n1) = $s1 =~ /, stored (\d+), failed 0/;
	my ($n2) = $s2 =~ /, stored (\d+), failed 0/;
	is(($n1 // -99) + ($n2 // -99), 7, 'two overlapping runs stored the seven new events between them')
		or diag "$s1\n$s2";
	is($t->sql("select count(*) from hookinbox.inbox where event_id like 'evt_p%' and backfilled_at is not null"), 7,
		'... each once');
	is($t->sql("select count(distinct event_id) = count(*) from hookinbox.inbox"), 't', 'no delivery key twice');
}

# ---- the API failing halfway: what was stored stays, the run says it is partial
{
	$api->set(fail => 1);
	my ($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $cred,
		'--api-url', $api->url);
	is($rc, 1, 'the API answering 500: exit 1');
	like($out, qr/listing stripe events: the API answered HTTP 500/, '... said so in one line');
	$api->set(fail => 0);
}

# ---- no secret file of the configuration is read (they are the responder's)
{
	(my $conf = HookTest::slurp($t->config)) =~ s/^secret_file = .*$/secret_file = \/nonexistent\/secret/mg;
	my $nosecrets = write_file('nosecrets.conf', $conf);
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $bin, '-c', $nosecrets, '--endpoint', 'stripe-live',
		'--since', $since, '--credential', $cred, '--api-url', $api->url, '--dry-run';
	my $out = `$cmd 2>&1`;
	push @outputs, $out;
	is($? >> 8, 0, 'the endpoints\' secret files are not read') or diag $out;
}

# ---- a live redelivery of a backfilled event is its duplicate
{
	my $id = $t->sql("select id from hookinbox.inbox where event_id = 'evt_c3'");
	my $body = $text{evt_c3};
	my $r = live_post('stripe-live', $body,
		{ 'Stripe-Signature' => HookTest::stripe_sig('whsec_backfill_test_1', $body), 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'live redelivery of evt_c3 answered 200') or diag "$r->{status} $r->{content}";
	is($r->{json}{duplicate}, JSON::PP::true, '... as a duplicate');
	is($r->{json}{id}, $id, '... with the backfilled intake id');
	is(inbox_count(), 12, '... and nothing stored');
}

# ---- GitHub: deliveries, redeliveries, the detail only for what is missing
my %payload = (
	g1 => '{"action":"opened","issue":{"id":9001,"number":7,"title":"t"},"repository":{"id":123}}',
	g2 => '{"ref":"refs/heads/main","after":"abc","repository":{"id":123}}',
	g3 => '{"zen":"Keep it logically awesome.","hook_id":7,"hook":{"id":7}}',
	g4 => '{"action":"closed","issue":{"id":9002}}',
	g5 => '{"action":"reopened","issue":{"id":9003}}',
);
sub gh_headers {
	my ($guid, $event) = @_;
	return { 'Accept' => '*/*', 'Content-Type' => 'application/json', 'User-Agent' => 'GitHub-Hookshot/abc',
		'X-GitHub-Delivery' => $guid, 'X-GitHub-Event' => $event, 'X-GitHub-Hook-ID' => '7',
		'X-Hub-Signature-256' => 'sha256=0000' };
}
my @gh = (
	{ id => 11, guid => 'a1b2c3d4-0001', delivered_at => iso($now - 3000), event => 'issues', action => 'opened',
		status_code => 502, headers => gh_headers('a1b2c3d4-0001', 'issues'), payload => $payload{g1} },
	{ id => 12, guid => 'a1b2c3d4-0001', delivered_at => iso($now - 2900), event => 'issues', action => 'opened',
		status_code => 502, redelivery => 1, headers => gh_headers('a1b2c3d4-0001', 'issues'), payload => $payload{g1} },
	{ id => 13, guid => 'a1b2c3d4-0002', delivered_at => iso($now - 2000), event => 'push', action => undef,
		status_code => 200, headers => gh_headers('a1b2c3d4-0002', 'push'), payload => $payload{g2} },
	# answered 2xx but no longer in the inbox (purged since): stored once, never again
	{ id => 16, guid => 'a1b2c3d4-0006', delivered_at => iso($now - 1500), event => 'push', action => undef,
		status_code => 200, headers => gh_headers('a1b2c3d4-0006', 'push'), payload => $payload{g2} },
	{ id => 14, guid => 'a1b2c3d4-0003', delivered_at => iso($now - 1000), event => 'ping', action => undef,
		status_code => 504, headers => gh_headers('a1b2c3d4-0003', 'ping'), payload => $payload{g3} },
	# a delivery whose recorded headers lack X-GitHub-Event: the listing's event is used
	{ id => 15, guid => 'a1b2c3d4-0005', delivered_at => iso($now - 500), event => 'issues', action => 'reopened',
		status_code => 502, headers => { 'Content-Type' => 'application/json' }, payload => $payload{g5} },
	{ id => 5, guid => 'a1b2c3d4-0004', delivered_at => iso($now - 7200), event => 'issues', action => 'closed',
		status_code => 502, headers => gh_headers('a1b2c3d4-0004', 'issues'), payload => $payload{g4} },
);
$api->set(token => $gh_token);
$api->github_deliveries(@gh);
{
	# g2 reached the intake live
	my $r = live_post('gh', $payload{g2}, { 'X-Hub-Signature-256' => HookTest::github_sig('gh-hook-secret-86', $payload{g2}),
		'X-GitHub-Delivery' => 'a1b2c3d4-0002', 'X-GitHub-Event' => 'push', 'Content-Type' => 'application/json' });
	is($r->{status}, 200, 'g2 delivered live') or diag $r->{content};
	my $before = scalar $api->requests;
	my ($rc, $out) = backfill('--endpoint', 'gh', '--since', $since, '--credential', $gh_cred,
		'--api-url', $api->url, '--repo', 'o/r', '--hook-id', '7');
	is($rc, 0, 'github backfill exits 0') or diag $out;
	like($out, qr/listed 5, already in the inbox 2, stored 3, failed 0/,
		'github figures (a redelivery counts once; one answered 2xx and purged since counts as stored)')
		or diag $out;
	my @req = ($api->requests)[$before .. scalar($api->requests) - 1];
	my @detail = map { $_->{path} =~ m{/deliveries/(\d+)$} ? $1 : () } @req;
	is_deeply([sort @detail], [12, 14, 15], 'the detail was fetched once for each delivery the inbox lacks (the latest attempt)');
	is(scalar(grep { $_->{path} =~ m{/deliveries$} } @req), 4, 'the listing followed the Link header (4 pages)');
	is(scalar(grep { $_->{auth} && $_->{accept} eq 'application/vnd.github+json' } @req), scalar @req,
		'every call: the token as Bearer, GitHub\'s media type');
	my $g1 = row('a1b2c3d4-0001');
	is_deeply([@$g1[1 .. 8]], ['gh', 'github', 'gh', 'default', 'issues.opened', '9001', '', 't'],
		'g1: the live key, the type with its action, the issue id, marked');
	is($g1->[9], sha256_hex($payload{g1}), 'g1: the body is request.payload\'s exact text');
	like($g1->[10], qr/"X-GitHub-Event": "issues"/, 'g1: GitHub\'s headers kept');
	unlike($g1->[10], qr/Signature/i, 'g1: no signature header kept');
	is(row('a1b2c3d4-0003')->[5], 'ping', 'g3 (ping) stored');
	is($t->sql("select count(*) from hookinbox.inbox where event_id = 'a1b2c3d4-0006'"), 0,
		'g6: answered 2xx once (stored then, purged since) is not stored again');
	is_deeply([@{ row('a1b2c3d4-0005') }[5, 6]], ['issues.reopened', '9003'],
		'g5: without the event header, the listing\'s event names the type');
	is($t->sql("select count(*) from hookinbox.inbox where event_id = 'a1b2c3d4-0004'"), 0,
		'a delivery before --since is not stored');
	is(row('a1b2c3d4-0002')->[8], 'f', 'g2 (live) not marked');

	# a live redelivery of g1 is its duplicate
	my $id = $g1->[0];
	$r = live_post('gh', $payload{g1}, { 'X-Hub-Signature-256' => HookTest::github_sig('gh-hook-secret-86', $payload{g1}),
		'X-GitHub-Delivery' => 'a1b2c3d4-0001', 'X-GitHub-Event' => 'issues', 'Content-Type' => 'application/json' });
	is($r->{json}{duplicate}, JSON::PP::true, 'live redelivery of g1: duplicate');
	is($r->{json}{id}, $id, '... of the backfilled row');

	($rc, $out) = backfill('--endpoint', 'gh', '--since', $since, '--credential', $gh_cred,
		'--api-url', $api->url, '--repo', 'o/r', '--hook-id', '7');
	like($out, qr/stored 0, failed 0/, 'github: a second run stores nothing') or diag $out;

	# a next-page link to another host: the credential does not follow it
	$api->set(link_base => 'http://127.0.0.2:1');
	my $n = inbox_count();
	($rc, $out) = backfill('--endpoint', 'gh', '--since', $since - 86400, '--credential', $gh_cred,
		'--api-url', $api->url, '--repo', 'o/r', '--hook-id', '7');
	is($rc, 1, 'a next-page link to another host: partial failure (1)');
	like($out, qr/leads outside/, '... said so');
	is(inbox_count(), $n, '... and only the first page was considered');
	$api->set(link_base => undef);

	# over the rate limit: not a credential problem
	$api->set(rate_limited => 1);
	($rc, $out) = backfill('--endpoint', 'gh', '--since', $since, '--credential', $gh_cred,
		'--api-url', $api->url, '--repo', 'o/r', '--hook-id', '7');
	is($rc, 1, 'GitHub\'s 403 with X-RateLimit-Remaining: 0: partial failure (1), not 78');
	like($out, qr/rate limited \(HTTP 403\): run again later/, '... said to be the rate limit');
	$api->set(rate_limited => 0);

	($rc, $out) = backfill('--endpoint', 'gh', '--since', $since, '--credential', $gh_cred,
		'--api-url', $api->url, '--repo', 'o/other', '--hook-id', '7');
	is($rc, 78, 'an unknown hook (404): 78');
	like($out, qr/not found \(HTTP 404\): check --api-url, --repo and --hook-id/, '... said so, naming GitHub\'s options');

	# Stripe's 404 names only the option Stripe takes
	$api->set(token => $token);
	($rc, $out) = backfill('--endpoint', 'stripe-live', '--since', $since, '--credential', $cred,
		'--api-url', $api->url . '/elsewhere');
	$api->set(token => $gh_token);
	is($rc, 78, 'a Stripe API URL that is not one (404): 78');
	like($out, qr/not found \(HTTP 404\): check --api-url$/m, '... said so, naming --api-url alone') or diag $out;
}

# ---- the worker delivers the backfilled events like any other
{
	my $log = `$top/obj/test/hookinbox-worker -c @{[ $t->config ]} -v --once 2>&1`;
	is($? >> 8, 0, 'worker --once') or diag $log;
	my %seen = map { ($_->{event_id} => $_->{sha}) } grep { $_->{path} eq '/hooks' } $d->requests;
	for my $id (qw(evt_a1 evt_c3 evt_d4 evt_e5 evt_p1 evt_p7)) {
		is($seen{$id}, sha256_hex($text{$id}), "the downstream got $id with its exact body");
	}
	is($seen{'a1b2c3d4-0001'}, sha256_hex($payload{g1}), 'the downstream got g1');
	ok(exists $seen{'a1b2c3d4-0003'}, 'the downstream got g3');
	is($t->sql("select count(*) from hookinbox.action where state <> 'done'"), 0, 'every action done');
}

# ---- the operator scripts show what was backfilled
{
	my ($rc, $out) = $t->pg->psql_file("$top/sql/stats.sql", role => 'hookinbox_admin');
	is($rc, 0, 'stats.sql runs') or diag $out;
	my ($head) = $out =~ /^(\s*endpoint\s*\|.*backfilled.*)$/m;
	ok($head, 'stats.sql: a backfilled column') or diag $out;
	my @cols = map { s/^\s+|\s+$//gr } split /\|/, $head // '';
	my ($k) = grep { $cols[$_] eq 'backfilled' } 0 .. $#cols;
	my ($line) = $out =~ /^(\s*stripe-live\s*\|.*)$/m;
	my @vals = map { s/^\s+|\s+$//gr } split /\|/, $line // '';
	is($vals[$k // 0], 11, 'stats.sql: stripe-live has 11 backfilled rows') or diag $out;
	($rc, $out) = $t->pg->psql_file("$top/sql/event.sql", role => 'hookinbox_admin', vars => { event_id => 'evt_a1' });
	like($out, qr/backfilled_at/, 'event.sql shows backfilled_at') or diag $out;
	like($out, qr/evt_a1\s*\|[^|\n]*\|[^|\n]*\|\s*\d{4}-\d\d-\d\d /, 'event.sql: evt_a1 has a backfilled_at') or diag $out;
}

# ---- the credential is nowhere but the Authorization header
{
	my $all = join '', @outputs;
	unlike($all, qr/\Q$token\E|\Q$gh_token\E|sk_test_wrong/, 'no output names a credential');
	# kept with the test's evidence, for t/99-secrets.t to search as well
	write_file('backfill.log', $all);
	my $rows = $t->sql("select string_agg(i::text, E'\\n') from hookinbox.inbox i");
	unlike($rows, qr/\Q$token\E|\Q$gh_token\E/, 'no row holds a credential');
}

# ---- the backfill's role can do nothing else
{
	my $bf = $t->pg->conninfo('hookinbox_backfill');
	my $out = `psql -X -q -d '$bf' -c 'select count(*) from hookinbox.inbox' 2>&1`;
	like($out, qr/permission denied/, 'hookinbox_backfill cannot read the inbox');
	$out = `psql -X -q -d '$bf' -c "select * from hookinbox.accept('e','stripe','a','b','x',null,null,null,'{}','x',false)" 2>&1`;
	like($out, qr/permission denied/, 'hookinbox_backfill cannot call the intake\'s accept()');
	my $wk = $t->pg->conninfo('hookinbox_worker');
	$out = `psql -X -q -d '$wk' -c "select * from hookinbox.backfill_store('e','stripe','a','b','x',null,null,null,'{}','x',null)" 2>&1`;
	like($out, qr/permission denied/, 'the worker cannot call backfill_store()');
	is($t->sql(q{select coalesce(string_agg(c.relname || ':' || p, ',' order by c.relname), '')
		from pg_class c join pg_namespace n on n.oid = c.relnamespace,
		unnest(array['select','insert','update','delete','truncate','references','trigger']) p
		where n.nspname = 'hookinbox' and c.relkind in ('r','p','v','m','S')
		and has_table_privilege('hookinbox_backfill', c.oid, p)}), '',
		'hookinbox_backfill holds no privilege on any table of the schema');
	is($t->sql(q{select coalesce(string_agg(distinct p.proname, ',' order by p.proname), '') from pg_proc p
		join pg_namespace n on n.oid = p.pronamespace
		where n.nspname = 'hookinbox' and has_function_privilege('hookinbox_backfill', p.oid, 'execute')}),
		'backfill_known,backfill_store', 'hookinbox_backfill may execute backfill_known() and backfill_store() only');
	is($t->sql(q{select string_agg(distinct p.proname || ':' || p.prosecdef || ':' || pg_get_userbyid(p.proowner), ',')
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		where n.nspname = 'hookinbox' and p.proname like 'backfill%'}),
		'backfill_known:true:hookinbox_owner,backfill_store:true:hookinbox_owner',
		'both (each form) are SECURITY DEFINER, owned by hookinbox_owner');
	# the older form (no endpoint) finds a stored id under any endpoint
	my $known = `psql -X -q -A -t -d '$bf' -c "select string_agg(k, ',' order by k) from hookinbox.backfill_known('stripe', 'acct_1', 'live', array['evt_a1', 'evt_b2', 'evt_nowhere']) k" 2>&1`;
	is($known, "evt_a1,evt_b2\n", 'the older backfill_known() finds what the inbox holds under any endpoint');
}

# stop the servers and keep the evidence now, while the temp dir is there
undef $api;
undef $t;

done_testing();
