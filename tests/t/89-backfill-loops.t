# SPDX-License-Identifier: ISC
# hookinbox-backfill against an API whose pagination goes round in a loop
# (Stripe answering has_more with the same page whatever starting_after
# says; a GitHub next link to the page itself): the run stops with a clear
# error and exit 1 after a few API calls, storing each listed event once,
# instead of calling the API forever.  --max-pages bounds a listing that
# never ends.  An --api-url with a password in it is refused without
# echoing the password.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::FakeProviderApi;

my $bin = HookTest::top() . '/obj/test/hookinbox-backfill';
my $token = 'sk_test_loops_0f1e2d3c4b5a';
my $gh_token = 'ghp_loopsTokenFor89test0123456789';
HookTest::record_secret($token, $gh_token, 'hunter2pass');
my $tmpd = File::Temp::tempdir('bfl-XXXXXX', TMPDIR => 1, CLEANUP => 1);
mkdir "$tmpd/gh";
my $t = HookTest->new(endpoints => {
	st => { provider => 'stripe', secrets => ['whsec_loops_1'], account => 'acct_1', environment => 'live' },
	gh => { provider => 'github', secrets => ['gh-loops-secret'] },
});
my $api = HookTest::FakeProviderApi->new(dir => $tmpd, token => $token);
my $gh_api = HookTest::FakeProviderApi->new(dir => "$tmpd/gh", token => $gh_token);

sub write_file { my ($name, $text) = @_; return HookTest::write_file($t->dir . "/$name", $text) }
my $cred = write_file('st.key', "$token\n");
my $gh_cred = write_file('gh.token', "$gh_token\n");
sub backfill {
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $bin, '-c', $t->config, @_;
	my $out = `timeout 60 $cmd 2>&1`;
	return ($? >> 8, $out);
}
my $now = time;
sub iso { my @g = gmtime($_[0]); sprintf('%04d-%02d-%02dT%02d:%02d:%02dZ', $g[5] + 1900, $g[4] + 1, @g[3, 2, 1, 0]) }
sub stripe_event {
	my ($id, $created) = @_;
	return { id => $id, created => $created, delivered => 0, text => qq({"id": "$id", "object": "event", )
		. qq("created": $created, "data": {"object": {"id": "in_$id", "object": "invoice"}}, )
		. qq("livemode": true, "type": "invoice.paid"}) };
}

# ---- Stripe: has_more with the same page
$api->stripe_events(map { stripe_event("evt_loop_$_", $now - 100 * $_) } 1 .. 3);
$api->set(page_size => 2, loop => 1);
my ($rc, $out) = backfill('--endpoint', 'st', '--since', $now - 3600, '--credential', $cred,
	'--api-url', $api->url);
is($rc, 1, 'stripe: a listing that repeats a page exits 1');
like($out, qr/went round in a loop/, 'stripe: and says why');
my $calls = () = $api->requests;
cmp_ok($calls, '<=', 3, "stripe: after $calls API calls");
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'evt_loop_%'"), 2,
	'stripe: the events listed are stored once each');

# ---- Stripe: a listing longer than --max-pages
$api->set(page_size => 1, loop => 0);
$api->stripe_events(map { stripe_event("evt_long_$_", $now - 100 * $_) } 1 .. 5);
($rc, $out) = backfill('--endpoint', 'st', '--since', $now - 3600, '--credential', $cred,
	'--api-url', $api->url, '--max-pages', 2);
is($rc, 1, '--max-pages: a listing with more pages exits 1');
like($out, qr/stopped after 2 pages \(--max-pages\)/, '--max-pages: and says so');
is($t->sql("select count(*) from hookinbox.inbox where event_id like 'evt_long_%'"), 2,
	'--max-pages: the two pages read are stored');
($rc, $out) = backfill('--endpoint', 'st', '--since', $now - 3600, '--credential', $cred,
	'--api-url', $api->url, '--max-pages', 'many');
is($rc, 64, '--max-pages: not a number is a usage error');

# ---- GitHub: a next link to the page itself
my $payload = '{"action":"opened","issue":{"number":1}}';
$gh_api->github_deliveries(map { { id => 20 + $_, guid => "f00d-000$_", delivered_at => iso($now - 100 * $_),
	event => 'issues', action => 'opened', status_code => 502,
	headers => { 'Content-Type' => 'application/json', 'X-GitHub-Delivery' => "f00d-000$_",
		'X-GitHub-Event' => 'issues', 'X-GitHub-Hook-ID' => '7', 'X-Hub-Signature-256' => 'sha256=00' },
	payload => $payload } } 1 .. 3);
$gh_api->set(page_size => 2, loop => 1);
($rc, $out) = backfill('--endpoint', 'gh', '--since', $now - 3600, '--credential', $gh_cred,
	'--api-url', $gh_api->url, '--repo', 'o/r', '--hook-id', 7);
is($rc, 1, 'github: a next link to itself exits 1');
like($out, qr/went round in a loop/, 'github: and says why');
my $list_calls = grep { $_->{path} =~ m{/deliveries$} } $gh_api->requests;
cmp_ok($list_calls, '<=', 2, "github: after $list_calls listing calls");

# ---- userinfo of --api-url never echoed
for my $url ('ftp://admin:hunter2pass@127.0.0.1:1/', 'http://admin:hunter2pass@example.com/', 'ht tp://admin:hunter2pass@x/') {
	($rc, $out) = backfill('--endpoint', 'st', '--since', $now - 3600, '--credential', $cred, '--api-url', $url);
	isnt($rc, 0, "refused: $url" =~ s/hunter2pass/***/r);
	unlike($out, qr/hunter2pass/, 'the password is not in the error');
	like($out, qr/\*\*\*\@/, 'the userinfo is shown as ***') or diag($out);
}
done_testing();
