# SPDX-License-Identifier: ISC
# Replay dedup compares what was signed, and what cannot be told apart is
# held for review, through lighttpd, PostgreSQL and the worker.
#   - Twilio signs the decoded, sorted parameters: a captured callback with
#     its parameters reordered, one repeated and a letter percent-encoded,
#     under a fresh (unsigned) idempotency token, is a duplicate, not a
#     second event;
#   - Shopify sends different topics with byte-identical bodies, and the
#     topic is not signed: the second is stored, answered 2xx with its own
#     id, and held in state 'review' (review_of = the first); the worker
#     delivers the first only; sql/review.sql lists, releases, dismisses.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Sign qw(twilio_sig);
use HookTest::Worker;
use Digest::SHA qw(hmac_sha1 hmac_sha256);
use JSON::PP;
use MIME::Base64 qw(encode_base64);

my $tw_token = 'twilio-auth-token-review-0123';
my $tw_url = 'https://hooks.example.com/twilio';
my $shop_secret = 'shopify-review-secret-97531';
my $t = HookTest->new(
	endpoints => {
		'tw' => { provider => 'twilio', secrets => [$tw_token], public_url => $tw_url },
		'shop' => { provider => 'shopify', secrets => [$shop_secret] },
	},
	routes => { apply => { endpoint => 'shop', handler => 'sql:app.apply' } },
);
$t->sql($HookTest::Worker::APPLY_SQL);
my $top = HookTest::top();


sub twilio {
	my ($body, $token) = @_;
	return $t->post('tw', $body, { 'X-Twilio-Signature' => twilio_sig($tw_token, $tw_url, $body),
		'Content-Type' => 'application/x-www-form-urlencoded', 'I-Twilio-Idempotency-Token' => $token });
}

# ---- Twilio: the replay defence hashes what was signed
{
	my $body = 'MessageSid=SM0123&MessageStatus=delivered&To=%2B15551230000&From=%2B15557890000&Body=hello';
	my $r1 = twilio($body, 'tok-first');
	is($r1->{status}, 200, 'twilio: a callback is stored');
	is($r1->{json}{duplicate}, JSON::PP::false, 'twilio: as new');
	my @variants = (
		['reordered', 'Body=hello&From=%2B15557890000&MessageSid=SM0123&To=%2B15551230000&MessageStatus=delivered'],
		['a repeated parameter', "$body&Body=hello"],
		['a percent-encoded letter', 'MessageSid=SM0123&MessageStatus=d%65livered&To=%2B15551230000&From=%2B15557890000&Body=hello'],
	);
	my $n = 0;
	for my $v (@variants) {
		my ($what, $b) = @$v;
		isnt($b, $body, "twilio $what: other bytes");
		is(twilio_sig($tw_token, $tw_url, $b), twilio_sig($tw_token, $tw_url, $body), "twilio $what: the same signature");
		my $r = twilio($b, 'tok-replay-' . ++$n);
		is($r->{status}, 200, "twilio $what under a fresh token: 200");
		is($r->{json}{id}, $r1->{json}{id}, "twilio $what: the first delivery's id");
		is($r->{json}{duplicate}, JSON::PP::true, "twilio $what: a duplicate");
	}
	is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'tw'}), 1, 'twilio: one row for four deliveries');
	is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'tw' and signed_sha256 is not null
		and signed_sha256 <> body_sha256}), 1, 'twilio: the signed content\'s hash is kept apart from the body\'s');
	my $r = twilio('MessageSid=SM0123&MessageStatus=read&To=%2B15551230000&From=%2B15557890000&Body=hello', 'tok-read');
	is($r->{json}{duplicate}, JSON::PP::false, 'twilio: the next status of the message is a new event');
}

# ---- Shopify: one body, two topics
sub shopify {
	my ($body, $topic, $id) = @_;
	return $t->post('shop', $body, { 'X-Shopify-Hmac-Sha256' => encode_base64(hmac_sha256($body, $shop_secret), ''),
		'X-Shopify-Topic' => $topic, 'X-Shopify-Event-Id' => $id, 'Content-Type' => 'application/json' });
}

my $order = '{"id":450789469,"admin_graphql_api_id":"gid://shopify/Order/450789469","total_price":"10.00"}';
my $first = shopify($order, 'orders/create', 'ev-create');
is($first->{status}, 200, 'shopify orders/create: stored');
my $held = shopify($order, 'orders/paid', 'ev-paid');
is($held->{status}, 200, 'shopify orders/paid, same body: 2xx');
isnt($held->{json}{id}, $first->{json}{id}, 'shopify orders/paid: its own id');
is($held->{json}{duplicate}, JSON::PP::false, 'shopify orders/paid: not a duplicate');
is($held->{json}{review}, JSON::PP::true, 'shopify orders/paid: held for review');
is($t->sql("select state || '|' || review_of || '|' || event_type from hookinbox.inbox where id = $held->{json}{id}"),
	"review|$first->{json}{id}|orders/paid", 'held: state review, review_of the first, its own topic');
like($t->responder_log, qr/outcome=review status=200/, 'the log line says held for review');

# replays of either are duplicates of their own row
my $r = shopify($order, 'orders/paid', 'ev-paid-replay');
is($r->{json}{id}, $held->{json}{id}, 'a replay under the held topic: the held row\'s id');
is($r->{json}{duplicate}, JSON::PP::true, 'and a duplicate');
$r = shopify($order, 'orders/create', 'ev-create-replay');
is($r->{json}{id}, $first->{json}{id}, 'a replay under the first topic: the first row\'s id');
my $third = shopify($order, 'orders/fulfilled', 'ev-fulfilled');
is($third->{json}{review}, JSON::PP::true, 'a third topic: held too');
is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'shop'}), 3, 'three rows for five deliveries');

# the worker delivers the first only
(my $wconf = HookTest::slurp($t->config)) =~ s/user=hookinbox_intake/user=hookinbox_worker/;
open my $fh, '>', $t->dir . '/worker.conf' or die $!;
print $fh $wconf;
close $fh;
sub run_worker {
	my $out = `$top/obj/test/hookinbox-worker -c @{[ $t->dir ]}/worker.conf --once 2>&1`;
	is($? >> 8, 0, 'the worker runs') or diag $out;
}
run_worker();
is($t->sql(q{select string_agg(event_id, ',' order by event_id) from app.applied}), 'ev-create',
	'the worker delivered the first, not the held ones');

# review.sql: list, release, dismiss
my ($rc, $out) = $t->pg->psql_file("$top/sql/review.sql", role => 'hookinbox_admin');
is($rc, 0, 'review.sql lists');
like($out, qr/ev-paid .*orders\/paid .*$first->{json}{id} .*ev-create .*orders\/create/, 'the list shows each held delivery and what it collides with');
($rc, $out) = $t->pg->psql_file("$top/sql/review.sql", role => 'hookinbox_admin', vars => { release => $held->{json}{id}, go => 1 });
is($rc, 0, 'review.sql releases');
like($out, qr/\(1 row\)/, 'one row released');
($rc, $out) = $t->pg->psql_file("$top/sql/review.sql", role => 'hookinbox_admin', vars => { dismiss => $third->{json}{id}, go => 1 });
like($out, qr/\(1 row\)/, 'one row dismissed');
($rc, $out) = $t->pg->psql_file("$top/sql/review.sql", role => 'hookinbox_admin', vars => { release => $third->{json}{id}, go => 1 });
isnt($rc, 0, 'a dismissed row cannot be released: refused');
like($out, qr/is dismissed, not held for review/, 'and the refusal says which state it is in');
run_worker();
is($t->sql(q{select string_agg(event_id, ',' order by event_id) from app.applied}), 'ev-create,ev-paid',
	'after release the worker delivered it; the dismissed one never');
is($t->sql("select state from hookinbox.inbox where id = $third->{json}{id}"), 'dismissed', 'dismissed stays dismissed');
$r = shopify($order, 'orders/fulfilled', 'ev-fulfilled-again');
is($r->{json}{id}, $third->{json}{id}, 'a replay of a dismissed delivery is still its duplicate');

# purge keeps held bodies
$t->sql("insert into hookinbox.inbox (endpoint, provider, account, environment, event_id, event_type, body_sha256, body_dedup, body, state, review_of, received_at)
	values ('shop', 'shopify', 'shop', 'default', 'ev-old-held', 'orders/paid', sha256('x'), true, 'x', 'review', $first->{json}{id}, now() - interval '400 days')");
($rc, $out) = $t->pg->psql_file("$top/sql/purge.sql", role => 'hookinbox_admin', vars => { payload_days => 1, dedup_days => 30 });
is($rc, 0, 'purge runs') or diag $out;
is($t->sql(q{select state || '|' || (body is not null) from hookinbox.inbox where event_id = 'ev-old-held'}), 'review|true',
	'purge keeps a held delivery and its body until it is released or dismissed');

# the first delivery purged (past the replay horizon, by the operator's
# choice), the held copies stay and are the replay defence: a replay of
# one under a fresh id is its duplicate, not a new event (found by the
# model checker, held-replay-after-purge); the first's topic is answered
# by the ledger of what was signed: the first's id, nothing stored
$t->sql("update hookinbox.inbox set received_at = now() - interval '400 days' where id = $first->{json}{id}");
($rc, $out) = $t->pg->psql_file("$top/sql/purge.sql", role => 'hookinbox_admin',
	vars => { payload_days => 0, dedup_days => 30, force => 1 });
is($rc, 0, 'purge past the horizon runs') or diag $out;
is($t->sql("select count(*) from hookinbox.inbox where id = $first->{json}{id}"), 0, 'the first delivery is purged');
$r = shopify($order, 'orders/paid', 'ev-paid-after-purge');
is($r->{json}{id}, $held->{json}{id}, 'a held copy replayed under a fresh id after the purge: the held row\'s id');
is($r->{json}{duplicate}, JSON::PP::true, 'and a duplicate');
my $rows = $t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'shop'});
$r = shopify($order, 'orders/create', 'ev-create-after-purge');
is($r->{json}{id}, $first->{json}{id}, 'the purged first\'s topic under a fresh id: the first\'s id (the ledger)');
is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'shop'}), $rows, '... and nothing stored');
is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'shop' and review_of is null}), 0,
	'no new first row beside the held copies');
run_worker();
is($t->sql(q{select string_agg(event_id, ',' order by event_id) from app.applied}), 'ev-create,ev-paid',
	'nothing more was delivered');

done_testing();
