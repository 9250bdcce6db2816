# SPDX-License-Identifier: ISC
# The delivery key belongs to the signed content that first earned it,
# through lighttpd, PostgreSQL and the worker:
#   - pre-claim: a captured signed body replayed under the NEXT unsigned id
#     with another type is held for review; the genuine delivery of that
#     id, with its own body, is then stored and delivered, not answered as
#     a duplicate (GitHub, and an hmac endpoint with numbered ids);
#   - two endpoints of one account: Stripe sends one evt_ to each, and the
#     routes of both endpoints get it;
#   - one signed body replayed under ever new types holds at most 4 copies.
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig stripe_sig);
use HookTest::Worker;
use Digest::SHA qw(hmac_sha256_hex);

my $gh_secret = 'gh-preclaim-secret-0123456789';
my $hm_secret = 'hm-preclaim-secret-9876543210';
my $st_secret = 'whsec_two-endpoints-0123456789';
my $t = HookTest->new(
	endpoints => {
		gh => { provider => 'github', secrets => [$gh_secret] },
		hm => { provider => 'hmac', secrets => [$hm_secret], header => 'X-Sig', algorithm => 'sha256',
			encoding => 'hex', id_header => 'X-Delivery', type_header => 'X-Event' },
		sta => { provider => 'stripe', secrets => [$st_secret], account => 'acct_1', environment => 'live' },
		stb => { provider => 'stripe', secrets => [$st_secret], account => 'acct_1', environment => 'live' },
	},
	routes => {
		rgh => { endpoint => 'gh', handler => 'sql:app.apply' },
		rhm => { endpoint => 'hm', handler => 'sql:app.apply' },
		ra => { endpoint => 'sta', handler => 'sql:app.apply' },
		rb => { endpoint => 'stb', handler => 'sql:app.apply' },
	},
	worker => { lease => 30 },
	worker_role => 'hookinbox_worker',
);
$t->sql(q{
	create schema app;
	create table app.applied (route text, event_id text, body text);
	create function app.apply(e jsonb) returns void language sql as
		$$ insert into app.applied values (e->>'route', e->>'event_id', e->>'body') $$;
	grant usage on schema app to hookinbox_worker;
	grant insert on app.applied to hookinbox_worker;
	grant execute on function app.apply(jsonb) to hookinbox_worker;
});

sub gh {
	my ($body, $id, $type) = @_;
	return $t->post('gh', $body, { 'X-Hub-Signature-256' => github_sig($gh_secret, $body),
		'X-GitHub-Event' => $type, 'X-GitHub-Delivery' => $id, 'Content-Type' => 'application/json' });
}

sub hm {
	my ($body, $id, $type) = @_;
	return $t->post('hm', $body, { 'X-Sig' => hmac_sha256_hex($body, $hm_secret),
		'X-Event' => $type, 'X-Delivery' => $id, 'Content-Type' => 'application/json' });
}

for my $c (['github', \&gh, 'gh', 'rgh', 'guid-100', 'guid-101'], ['hmac', \&hm, 'hm', 'rhm', '100', '101']) {
	my ($what, $send, $ep, $route, $id1, $id2) = @$c;
	my $captured = qq({"action":"opened","n":1,"ep":"$ep"});
	my $r1 = $send->($captured, $id1, 'issues');
	is($r1->{status}, 200, "$what: the first delivery is stored");
	# the attacker replays the captured body under the next id, another type
	my $rp = $send->($captured, $id2, 'push');
	is($rp->{status}, 200, "$what: the replay under the next id and another type: 200");
	is($t->sql("select state from hookinbox.inbox where id = " . ($rp->{json}{id} // 0)), 'review',
		"$what: the replay is held for review");
	# the genuine delivery of that id, with its own body
	my $genuine = qq({"action":"closed","n":2,"ep":"$ep"});
	my $r2 = $send->($genuine, $id2, 'pull_request');
	is($r2->{status}, 200, "$what: the genuine delivery of the next id: 200");
	isnt($r2->{json}{id}, $rp->{json}{id}, "$what: it does not get the held copy's id");
	is($t->sql("select count(*) from hookinbox.inbox where endpoint = '$ep' and event_id = '$id2' "
		. "and review_of is null and state = 'pending' and convert_from(body, 'UTF8') = '$genuine'"), 1,
		"$what: its body is stored under its id, pending delivery");
	# its redelivery is a duplicate of it
	my $again = $send->($genuine, $id2, 'pull_request');
	is($again->{json}{id}, $r2->{json}{id}, "$what: a redelivery of the genuine one is its duplicate");
	# and the held copy sent again is a duplicate of the held copy
	my $rp2 = $send->($captured, $id2, 'push');
	is($rp2->{json}{id}, $rp->{json}{id}, "$what: the held copy sent again is its duplicate");
}
HookTest::Worker::drain($t);
is($t->sql(q{select count(*) from app.applied where route = 'rgh' and body like '%"closed"%'}), 1,
	'github: the genuine delivery was delivered once');
is($t->sql(q{select count(*) from app.applied where route = 'rhm' and body like '%"closed"%'}), 1,
	'hmac: the genuine delivery was delivered once');
is($t->sql(q{select count(*) from app.applied where body like '%"opened"%'}), 2,
	'the captured bodies were delivered once each (their first delivery), the held copies not');

# ---- two endpoints of one account and environment
{
	my $body = '{"id":"evt_both_1","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1"}}}';
	my $ra = $t->post('sta', $body, { 'Stripe-Signature' => stripe_sig($st_secret, $body) });
	my $rb = $t->post('stb', $body, { 'Stripe-Signature' => stripe_sig($st_secret, $body) });
	is($ra->{status}, 200, 'stripe: endpoint sta stores the event');
	is($rb->{status}, 200, 'stripe: endpoint stb too');
	ok(!$rb->{json}{duplicate}, 'stripe: the second endpoint\'s delivery is not a duplicate of the first\'s');
	my $rb2 = $t->post('stb', $body, { 'Stripe-Signature' => stripe_sig($st_secret, $body) });
	is($rb2->{json}{id}, $rb->{json}{id}, 'stripe: a redelivery to stb is a duplicate of stb\'s');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_both_1'}), 2,
		'stripe: one row per endpoint');
	HookTest::Worker::drain($t);
	is($t->sql(q{select string_agg(route, ',' order by route) from app.applied where event_id = 'evt_both_1'}),
		'ra,rb', 'stripe: the routes of both endpoints got the event, once each');
}

# ---- one signed body under ever new types: at most 4 held copies
{
	my $body = '{"action":"flood","n":3}';
	my $first = gh($body, 'flood-0', 'push');
	my @st;
	push @st, gh($body, "flood-$_", "type$_")->{status} for 1 .. 12;
	is_deeply([sort { $a <=> $b } keys %{ { map { $_ => 1 } @st } }], [200], 'flood: every replay answered 200');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id like 'flood-%'}), 5,
		'flood: the first and 4 held copies are stored, no more');
	is(gh($body, 'flood-13', 'type13')->{json}{id}, $first->{json}{id},
		'flood: beyond the cap, a duplicate of the first');
}

# ---- dismissed held copies follow the purge's dedup horizon
{
	my $held = $t->sql(q{select min(id) from hookinbox.inbox where state = 'review' and event_id like 'flood-%'});
	$t->sql("update hookinbox.inbox set state = 'dismissed', received_at = now() - interval '40 days' where id = $held");
	my $kept = $t->sql(q{select max(id) from hookinbox.inbox where state = 'review' and event_id like 'flood-%'});
	$t->sql("update hookinbox.inbox set received_at = now() - interval '40 days' where id = $kept");
	my ($rc, $out) = $t->pg->psql_file(HookTest::top() . '/sql/purge.sql', vars => { dedup_days => 30 });
	is($rc, 0, 'purge.sql runs') or diag($out);
	like($out, qr/dismissed deliveries 1\b/, 'purge.sql counts the dismissed delivery it deleted');
	is($t->sql("select count(*) from hookinbox.inbox where id = $held"), 0, 'a dismissed held copy past dedup_days is deleted');
	is($t->sql("select state from hookinbox.inbox where id = $kept"), 'review', 'one still held for review is kept');
}

done_testing();
