# SPDX-License-Identifier: ISC
# The ledger of signed content outlives the inbox's rows.  For providers
# without a signed timestamp a captured request stays valid forever: after
# purge.sql deleted a delivered event (past dedup_days), the same signed
# request, under a fresh unsigned id (GitHub, hmac with id_header) or
# as it was (Square: signed id, no time), stores nothing in PostgreSQL and
# reaches the downstream no second time; it is answered with the first
# intake id.  purge.sql keeps a ledger entry until ledger_days after the
# delivery, then deletes it; ledger_days below dedup_days is refused.
# Measured: bytes per ledger entry (heap and index, per row).
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig);
use HookTest::Downstream;
use HookTest::Worker;
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex);
use MIME::Base64 qw(encode_base64);
use JSON::PP;

my $top = HookTest::top();
my %secret = (gh => 'github-ledger-secret-89', hm => 'hmac-ledger-secret-89', sq => 'sq-ledger-sigkey-89');
HookTest::Sign::record_secret(values %secret);
my $SQ_URL = 'https://hooks.example.test/in/square89';
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(
	endpoints => {
		gh => { provider => 'github', secrets => [$secret{gh}] },
		hm => { provider => 'hmac', secrets => [$secret{hm}], header => 'X-Hm-Signature', algorithm => 'sha256',
			encoding => 'hex', id_header => 'X-Delivery', type_header => 'X-Event' },
		sq => { provider => 'square', secrets => [$secret{sq}], public_url => $SQ_URL },
	},
	routes => { map { ("r$_" => { endpoint => $_, url => $d->url("/$_"), timeout => 2 }) } qw(gh hm sq) },
	extra => { no_lighttpd => 0 },
);

my %send = (
	gh => sub {
		my ($body, $id) = @_;
		return $t->post('gh', $body, { 'X-Hub-Signature-256' => github_sig($secret{gh}, $body),
			'X-GitHub-Event' => 'issues', 'X-GitHub-Delivery' => $id, 'Content-Type' => 'application/json' });
	},
	hm => sub {
		my ($body, $id) = @_;
		return $t->post('hm', $body, { 'X-Hm-Signature' => hmac_sha256_hex($body, $secret{hm}),
			'X-Event' => 'issues', 'X-Delivery' => $id, 'Content-Type' => 'application/json' });
	},
	sq => sub {
		my ($body) = @_;
		return $t->post('sq', $body, { 'x-square-hmacsha256-signature'
			=> encode_base64(hmac_sha256($SQ_URL . $body, $secret{sq}), ''), 'Content-Type' => 'application/json' });
	},
);
my %body = (
	gh => '{"action":"opened","issue":{"id":8901},"n":1}',
	hm => '{"action":"opened","n":1,"ep":"hm"}',
	sq => '{"merchant_id":"ML89","type":"payment.updated","event_id":"sq-ev-89-1",'
		. '"created_at":"2024-07-01T10:00:00Z","data":{"type":"payment","id":"pay_89"}}',
);

sub calls {
	my ($ep) = @_;
	my $n = 0;
	$n += $_->{effect} for grep { $_->{path} eq "/$ep" } $d->requests;
	return $n;
}
sub purge {
	my (%v) = @_;
	return $t->pg->psql_file("$top/sql/purge.sql", role => 'hookinbox_admin',
		vars => { payload_days => 7, dedup_days => 30, %v });
}

# ---- delivered once, then purged past dedup_days
my %first;
for my $ep (qw(gh hm sq)) {
	my $r = $send{$ep}->($body{$ep}, "$ep-89-1");
	is($r->{status}, 200, "$ep: the first delivery 2xx") or diag $r->{content};
	$first{$ep} = $r->{json}{id};
}
HookTest::Worker::drain($t, timeout => 30);
is(calls($_), 1, "$_: delivered once at the downstream") for qw(gh hm sq);
$t->sql(q{update hookinbox.inbox set received_at = now() - interval '40 days'});
my ($rc, $out) = purge();
is($rc, 0, 'purge.sql runs') or diag $out;
is($t->sql('select count(*) from hookinbox.inbox'), 0, 'the three rows are deleted');

# ---- the captured requests replayed: nothing stored, nothing delivered
for my $ep (qw(gh hm sq)) {
	my $r = $send{$ep}->($body{$ep}, "$ep-89-fresh");
	is($r->{status}, 200, "$ep: the replay after the purge is answered 2xx");
	is($r->{json}{id}, $first{$ep}, "$ep: with the first intake id");
	is($r->{json}{duplicate}, JSON::PP::true, "$ep: as a duplicate");
}
is($t->sql('select count(*) from hookinbox.inbox'), 0, 'no row in PostgreSQL for any replay');
# the same signed content under another (unsigned) type is held for review,
# as while the first row was there: which is genuine cannot be told
my $r = $t->post('hm', $body{hm}, { 'X-Hm-Signature' => hmac_sha256_hex($body{hm}, $secret{hm}),
	'X-Event' => 'push', 'X-Delivery' => 'hm-89-other-type', 'Content-Type' => 'application/json' });
is($r->{json}{review}, JSON::PP::true, 'hm: under another type after the purge: held for review');
is($t->sql("select state || '|' || review_of from hookinbox.inbox where id = $r->{json}{id}"), "review|$first{hm}",
	'... review_of the purged first');
my $r2 = $t->post('hm', $body{hm}, { 'X-Hm-Signature' => hmac_sha256_hex($body{hm}, $secret{hm}),
	'X-Event' => 'push', 'X-Delivery' => 'hm-89-other-type-2', 'Content-Type' => 'application/json' });
is($r2->{json}{id}, $r->{json}{id}, '... and its replay is its duplicate');
HookTest::Worker::drain($t, timeout => 10);
is(calls($_), 1, "$_: still delivered once at the downstream") for qw(gh hm sq);

# ---- what the ledger holds
is($t->sql('select count(*) from hookinbox.ledger'), 3, 'the ledger holds one entry per deleted row');
is($t->sql(q{select count(*) from pg_attribute a
	where a.attrelid = 'hookinbox.ledger'::regclass and a.attnum > 0 and a.attname in ('body', 'headers')}), 0,
	'the ledger has no payload column');
is($t->sql(q{select string_agg(endpoint || ':' || first_id, ',' order by endpoint) from hookinbox.ledger}),
	"gh:$first{gh},hm:$first{hm},sq:$first{sq}", 'each entry names the first intake id');

# ---- new content is not caught by the ledger
{
	my $new = '{"action":"closed","issue":{"id":8902},"n":2}';
	my $g = $send{gh}->($new, 'gh-89-2');
	is($g->{json}{duplicate}, JSON::PP::false, 'gh: new content is stored');
	HookTest::Worker::drain($t, timeout => 30);
	is(calls('gh'), 2, 'gh: and delivered');
}

# ---- the ledger's horizon
{
	($rc, $out) = purge(ledger_days => 20);
	isnt($rc, 0, 'purge.sql refuses ledger_days below dedup_days');
	like($out, qr/dedup_days <= ledger_days/, '... and says why');
	is($t->sql('select count(*) from hookinbox.ledger'), 3, '... deleting nothing');
	$t->sql(q{update hookinbox.ledger set seen = current_date - 399 where endpoint = 'gh'});
	$t->sql(q{update hookinbox.ledger set seen = current_date - 401 where endpoint = 'hm'});
	($rc, $out) = purge(quiet => 0);
	is($rc, 0, 'purge.sql with the default ledger_days (400)') or diag $out;
	like($out, qr/ledger entries 1\b/, '... counts the entry it deleted') or diag $out;
	is($t->sql(q{select string_agg(endpoint, ',' order by endpoint) from hookinbox.ledger}), 'gh,sq',
		'only the entry past 400 days is gone');
	my $h = $send{hm}->($body{hm}, 'hm-89-after-ledger');
	is($h->{json}{duplicate}, JSON::PP::false, 'hm: past the ledger\'s horizon a replay is stored again (documented)');
	is($h->{json}{review}, JSON::PP::true, '... held (its held copy of another type is still there)');
}

# ---- a dismissed held copy, purged, answers its own replays; the first's type the first id
{
	my $b = '{"action":"opened","n":3,"ep":"hm"}';
	$t->sql(q{update hookinbox.inbox set state = 'dismissed' where state = 'review'});
	my $f = $send{hm}->($b, 'hm-89-3');
	my $held = $t->post('hm', $b, { 'X-Hm-Signature' => hmac_sha256_hex($b, $secret{hm}),
		'X-Event' => 'push', 'X-Delivery' => 'hm-89-4', 'Content-Type' => 'application/json' });
	is($held->{json}{review}, JSON::PP::true, 'hm: the same body under another type is held');
	($rc, $out) = $t->pg->psql_file("$top/sql/review.sql", role => 'hookinbox_admin',
		vars => { dismiss => $held->{json}{id}, go => 1 });
	HookTest::Worker::drain($t, timeout => 30);
	$t->sql(q{update hookinbox.inbox set received_at = now() - interval '40 days'});
	($rc, $out) = purge();
	is($rc, 0, 'purge.sql deletes the first and the dismissed copy') or diag $out;
	is($t->sql("select count(*) from hookinbox.inbox where id in ($f->{json}{id}, $held->{json}{id})"), 0,
		'both rows gone');
	my $again = $t->post('hm', $b, { 'X-Hm-Signature' => hmac_sha256_hex($b, $secret{hm}),
		'X-Event' => 'push', 'X-Delivery' => 'hm-89-5', 'Content-Type' => 'application/json' });
	is($again->{json}{id}, $held->{json}{id}, 'a replay of the dismissed copy: its id');
	is($t->sql("select count(*) from hookinbox.inbox where endpoint = 'hm' and event_id = 'hm-89-5'"), 0,
		'nothing stored');
	my $firsttype = $send{hm}->($b, 'hm-89-6');
	is($firsttype->{json}{id}, $f->{json}{id}, 'a replay under the first\'s type: the first id');
	my $third = $t->post('hm', $b, { 'X-Hm-Signature' => hmac_sha256_hex($b, $secret{hm}),
		'X-Event' => 'pull', 'X-Delivery' => 'hm-89-7', 'Content-Type' => 'application/json' });
	is($t->sql("select count(*) from hookinbox.inbox where endpoint = 'hm' and event_id in ('hm-89-5', 'hm-89-6')"), 0,
		'nothing stored for either');
	is($third->{json}{review}, JSON::PP::true, 'under a type never seen: held for review');
	is($t->sql("select review_of from hookinbox.inbox where id = $third->{json}{id}"), $f->{json}{id},
		'... review_of the purged first');
}

# ---- bytes per entry, measured
{
	$t->sql(q{insert into hookinbox.inbox (endpoint, provider, account, environment, event_id,
		body_sha256, body_dedup, body, state)
		select 'github-production', 'github', 'github-production', 'default', 'm-' || g,
		sha256(convert_to('m' || g, 'UTF8')), true, null, 'dispatched' from generate_series(1, 20000) g});
	$t->sql(q{delete from hookinbox.inbox where event_id like 'm-%'});
	$t->sql('vacuum analyze hookinbox.ledger');
	my ($n, $heap, $idx, $tuple) = split /\|/, $t->sql(q{select count(*),
		pg_relation_size('hookinbox.ledger'),
		pg_indexes_size('hookinbox.ledger'),
		avg(pg_column_size(l.*))::int from hookinbox.ledger l where endpoint = 'github-production'});
	my ($per_heap, $per_idx) = map { int($_ / $n + 0.5) } $heap, $idx;
	diag("ledger: $n entries, heap $per_heap B/entry, indexes $per_idx B/entry, "
		. "tuple $tuple B (pg_column_size), endpoint 'github-production'");
	cmp_ok($per_heap + $per_idx, '<', 250, 'a ledger entry costs under 250 bytes with its indexes');
}

done_testing();
