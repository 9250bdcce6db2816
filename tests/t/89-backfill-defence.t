# SPDX-License-Identifier: ISC
# hookinbox-backfill stays inside the replay defence and the ledger, with a
# real API server (tests/lib/HookTest/FakeProviderApi.pm), responder,
# database, worker and downstream.  Invariants, as rows in PostgreSQL and
# calls at the downstream:
#   - a missed GitHub delivery the backfill stored is one row; the original
#     signed request replayed under a fresh guid stores nothing and is not
#     delivered again, before and after purge.sql deleted the row;
#   - a Stripe event accepted, delivered and purged is not stored again by
#     a backfill whose window reaches back to it (the ledger knows it);
#   - with two endpoints of one account, an event only the first received
#     is backfilled for the second, whose route then gets it once (what the
#     inbox knows is asked per endpoint).
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig stripe_sig);
use HookTest::FakeProviderApi;
use HookTest::Downstream;
use HookTest::Worker;
use JSON::PP;

my $top = HookTest::top();
my $bin = "$top/obj/test/hookinbox-backfill";
my $token = 'ghp_backfillDefence89Token0123456789';
my %secret = (gh => 'gh-hook-secret-89-defence', st1 => 'whsec_defence_89_one_0123', st2 => 'whsec_defence_89_two_4567');
HookTest::Sign::record_secret($token, values %secret);
my $tmpd = File::Temp::tempdir('bf-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(
	endpoints => {
		gh => { provider => 'github', secrets => [$secret{gh}] },
		(map { $_ => { provider => 'stripe', secrets => [$secret{$_}], account => 'acct_89', environment => 'live' } }
			qw(st1 st2)),
	},
	routes => { map { ("r$_" => { endpoint => $_, url => $d->url("/$_"), timeout => 2 }) } qw(gh st1 st2) },
	extra => { no_lighttpd => 0 },
);
my $api = HookTest::FakeProviderApi->new(dir => $tmpd, token => $token);
my $dir = $t->dir;
open my $fh, '>', "$dir/api.token" or die $!;
print $fh "$token\n";
close $fh;
chmod 0600, "$dir/api.token";

my $now = time;
sub iso { my @g = gmtime($_[0]); sprintf('%04d-%02d-%02dT%02d:%02d:%02dZ', $g[5] + 1900, $g[4] + 1, @g[3, 2, 1, 0]) }
my @outputs;
sub backfill {
	my ($ep, @args) = @_;
	my $cmd = join ' ', map { HookTest::shell_quote($_) } $bin, '-c', $t->config, '--endpoint', $ep,
		'--since', $now - 3600, '--credential', "$dir/api.token", '--api-url', $api->url,
		'--conninfo', $t->pg->conninfo('hookinbox_backfill'), @args;
	my $out = `$cmd 2>&1`;
	push @outputs, $out;
	return ($? >> 8, $out);
}
sub calls {
	my ($path, $event_id) = @_;
	my $n = 0;
	$n += $_->{effect} for grep { $_->{path} eq $path && (!defined $event_id || $_->{event_id} eq $event_id) } $d->requests;
	return $n;
}
sub rows { $t->sql("select count(*) from hookinbox.inbox where $_[0]") }
sub age_and_purge {
	my ($where) = @_;
	$t->sql("update hookinbox.inbox set received_at = now() - interval '40 days' where $where");
	my ($rc, $out) = $t->pg->psql_file("$top/sql/purge.sql", role => 'hookinbox_admin',
		vars => { payload_days => 7, dedup_days => 30 });
	is($rc, 0, 'purge.sql runs') or diag $out;
	is(rows($where), 0, 'the rows are purged');
}

# ---- GitHub: a missed delivery, backfilled, then its signed request replayed
my $payload = '{"action":"opened","issue":{"id":8989,"number":89},"repository":{"id":89}}';
sub gh_post {
	my ($guid) = @_;
	return $t->post('gh', $payload, { 'X-Hub-Signature-256' => github_sig($secret{gh}, $payload),
		'X-GitHub-Delivery' => $guid, 'X-GitHub-Event' => 'issues', 'Content-Type' => 'application/json' });
}
$api->github_deliveries({ id => 21, guid => 'guid-89-0001', delivered_at => iso($now - 600), event => 'issues',
	action => 'opened', status_code => 502, payload => $payload,
	headers => { 'Content-Type' => 'application/json', 'X-GitHub-Delivery' => 'guid-89-0001', 'X-GitHub-Event' => 'issues' } });
my ($rc, $out) = backfill('gh', '--repo', 'o/r', '--hook-id', '7');
is($rc, 0, 'github backfill runs') or diag $out;
like($out, qr/stored 1, failed 0/, 'it stored the missed delivery') or diag $out;
my $bf_id = $t->sql(q{select id from hookinbox.inbox where event_id = 'guid-89-0001' and backfilled_at is not null});
ok($bf_id, 'one backfilled row');
HookTest::Worker::drain($t, timeout => 30);
is(calls('/gh'), 1, 'the downstream got it once');

my $r = gh_post('guid-89-replay-1');
is($r->{status}, 200, 'the original signed request under a fresh guid: 2xx');
is($r->{json}{id}, $bf_id, '... answered with the backfilled row\'s id');
is($r->{json}{duplicate}, JSON::PP::true, '... as a duplicate');
is(rows(q{endpoint = 'gh'}), 1, 'no second row for it in PostgreSQL');
$r = gh_post('guid-89-0001');
is($r->{json}{id}, $bf_id, 'a redelivery under its own guid: the same id');
HookTest::Worker::drain($t, timeout => 10);
is(calls('/gh'), 1, 'the downstream still got it once');

age_and_purge(q{endpoint = 'gh'});
$r = gh_post('guid-89-replay-2');
is($r->{json}{id}, $bf_id, 'after the purge, a replay under a fresh guid: the backfilled id (the ledger)');
is(rows(q{endpoint = 'gh'}), 0, '... nothing stored');
($rc, $out) = backfill('gh', '--repo', 'o/r', '--hook-id', '7');
is($rc, 0, 'the backfill again, after the purge');
is(rows(q{endpoint = 'gh'}), 0, '... stores nothing (the ledger knows the content)') or diag $out;
HookTest::Worker::drain($t, timeout => 10);
is(calls('/gh'), 1, 'the downstream still got it once');

# ---- Stripe: accepted, delivered, purged; a backfill over its time
my $created = $now - 1000;
my $text = qq({\n  "id": "evt_89_purged",\n  "object": "event",\n  "created": $created,\n  "data": {\n    "object": {\n)
	. qq(      "id": "in_89",\n      "object": "invoice"\n    }\n  },\n  "type": "invoice.paid"\n});
my $text_y = $text =~ s/evt_89_purged/evt_89_one_endpoint/r =~ s/in_89/in_89y/r;
$api->stripe_events({ id => 'evt_89_purged', created => $created, delivered => 0, text => $text },
	{ id => 'evt_89_one_endpoint', created => $created + 1, delivered => 0, text => $text_y });
sub st_post {
	my ($ep, $body) = @_;
	return $t->post($ep, $body, { 'Stripe-Signature' => stripe_sig($secret{$ep}, $body),
		'Content-Type' => 'application/json' });
}
$r = st_post('st1', $text);
is($r->{status}, 200, 'evt_89_purged delivered live to st1') or diag $r->{content};
my $st_id = $r->{json}{id};
HookTest::Worker::drain($t, timeout => 30);
is(calls('/st1', 'evt_89_purged'), 1, 'the downstream got it once');
age_and_purge(q{event_id = 'evt_89_purged'});

# ---- two endpoints of one account: st1 got evt_89_one_endpoint, st2 did not
$r = st_post('st1', $text_y);
is($r->{status}, 200, 'evt_89_one_endpoint delivered live to st1 only');
HookTest::Worker::drain($t, timeout => 30);

($rc, $out) = backfill('st1');
is($rc, 0, 'stripe backfill of st1 runs') or diag $out;
like($out, qr/listed 2, already in the inbox 2, stored 0/, 'st1: both known (one in the inbox, one in the ledger)')
	or diag $out;
is(rows(q{event_id = 'evt_89_purged'}), 0, 'the purged event is not stored again for st1');
($rc, $out) = backfill('st2');
is($rc, 0, 'stripe backfill of st2 runs') or diag $out;
is(rows(q{endpoint = 'st2' and event_id = 'evt_89_one_endpoint' and backfilled_at is not null}), 1,
	'st2: the event only st1 received is backfilled for st2') or diag $out;
HookTest::Worker::drain($t, timeout => 30);
is(calls('/st1', 'evt_89_purged'), 1, 'evt_89_purged: st1\'s route still got it once');
is(calls('/st2', 'evt_89_purged'), 1, 'evt_89_purged: st2, which never received it, got it once');
is(rows(q{endpoint = 'st1'}), 1, 'st1: no row stored again');
is(calls('/st1', 'evt_89_one_endpoint'), 1, 'evt_89_one_endpoint: st1\'s route got it once');
is(calls('/st2', 'evt_89_one_endpoint'), 1, 'evt_89_one_endpoint: st2\'s route got it once');

unlike(join('', @outputs), qr/\Q$token\E/, 'no output names the credential');
open $fh, '>', "$dir/backfill.log" or die $!;
print $fh join('', @outputs);
close $fh;
undef $api;
undef $t;

done_testing();
