# SPDX-License-Identifier: ISC
# Ids that differ stay different: the stored event id, type, object id and
# version are what the provider's own SDK reads from the body (JSON.parse,
# with numbers kept as their source text), through lighttpd and PostgreSQL,
# and cross-checked against the SDKs in tests/sdk.
#   - 20-digit integer ids stay whole and apart (json-c saturated them at
#     int64, so the second of two was answered "duplicate");
#   - a key with an escaped NUL ("id\u0000x") is another key (json-c cut it
#     to "id" and overwrote the real id);
#   - a lone surrogate is never replaced by U+FFFD (which made two ids one):
#     an id holding one is refused with its reason, another field is NULL
#     with a note;
#   - a repeated key: the last one wins, as in JSON.parse.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig github_sig standard_sig);
use JSON::PP;
use lib HookTest::top() . '/tests/sdk';
use SDK;

my $st_secret = 'whsec_ids_test_0f1e2d3c4b5a';
my $gh_secret = 'gh-ids-secret-24680';
my $std_secret = 'whsec_' . MIME::Base64::encode_base64('ids-standard-key-01234567', '');
my $hm_secret = 'hmac-ids-secret-13579';
my $t = HookTest->new(endpoints => {
	'st' => { provider => 'stripe', secrets => [$st_secret] },
	'gh' => { provider => 'github', secrets => [$gh_secret] },
	'std' => { provider => 'standard', secrets => [$std_secret] },
	'hm' => { provider => 'hmac', secrets => [$hm_secret], header => 'X-Sig', id_field => 'id',
		object_field => 'obj', type_field => 'type' },
});

sub row {
	my ($ep, $where) = @_;
	my $r = $t->sql("select coalesce(event_id, '-') || '|' || coalesce(event_type, 'NULL') || '|' "
		. "|| coalesce(object_id, 'NULL') || '|' || coalesce(event_version::text, 'NULL') || '|' "
		. "|| coalesce(intake_note, '') from hookinbox.inbox where endpoint = '$ep' and $where");
	utf8::decode($r);
	return $r;
}

# [endpoint, name, body, headers, expected row (id|type|object|version|note) or status]
my @cases;
sub stripe_case {
	my ($name, $body, $want) = @_;
	push @cases, ['st', $name, $body, { 'Stripe-Signature' => stripe_sig($st_secret, $body) }, $want];
}
sub github_case {
	my ($name, $delivery, $body, $want) = @_;
	push @cases, ['gh', $name, $body, { 'X-Hub-Signature-256' => github_sig($gh_secret, $body),
		'X-GitHub-Event' => 'issues', 'X-GitHub-Delivery' => $delivery }, $want];
}
sub standard_case {
	my ($name, $id, $body, $want) = @_;
	push @cases, ['std', $name, $body, { standard_sig($std_secret, $id, $body) }, $want];
}
sub hmac_case {
	my ($name, $body, $want) = @_;
	push @cases, ['hm', $name, $body, { 'X-Sig' => Digest::SHA::hmac_sha256_hex($body, $hm_secret) }, $want];
}

stripe_case('escaped NUL in a key', '{"id":"evt_nulkey_a","id\u0000x":"evt_nulkey_b","type":"t","created":1}',
	'evt_nulkey_a|t|NULL|1|');
stripe_case('a repeated key: the last wins', '{"id":"evt_rep_first","type":"t","id":"evt_rep_last"}',
	'evt_rep_last|t|NULL|NULL|');
stripe_case('a surrogate pair', '{"id":"evt_pair","type":"smile.\ud83d\ude00","created":2}',
	"evt_pair|smile.\x{1F600}|NULL|2|");
stripe_case('a lone surrogate in the type', '{"id":"evt_lone_type","type":"x\ud800","created":3}',
	'evt_lone_type|NULL|NULL|3|type: not valid UTF-8 or has control characters');
stripe_case('a lone surrogate in the id (1)', '{"id":"evt_lone\ud800","type":"t"}', 400);
stripe_case('a lone surrogate in the id (2)', '{"id":"evt_lone\ud801","type":"t"}', 400);
stripe_case('a created time beyond int64', '{"id":"evt_big_created","type":"t","created":99999999999999999999}',
	'evt_big_created|t|NULL|NULL|created: not an integer or RFC 3339 time');
github_case('a 23-digit object id', 'd-big-1', '{"action":"opened","issue":{"id":12345678901234567890123}}',
	'd-big-1|issues.opened|12345678901234567890123|NULL|');
github_case('another 23-digit object id', 'd-big-2', '{"action":"closed","issue":{"id":12345678901234567890124}}',
	'd-big-2|issues.closed|12345678901234567890124|NULL|');
standard_case('escaped NUL in a nested key', 'msg_nul',
	'{"type":"user.created","data":{"id":"u_1","id\u0000":"u_2"}}', 'msg_nul|user.created|u_1|NULL|');
hmac_case('a 20-digit event id', '{"id":12345678901234567890,"type":"a"}', '12345678901234567890|a|NULL|NULL|');
hmac_case('the next 20-digit event id', '{"id":12345678901234567891,"type":"b"}', '12345678901234567891|b|NULL|NULL|');
hmac_case('an id in the int64 range', '{"id":-9223372036854775808,"type":"c","obj":7}',
	'-9223372036854775808|c|7|NULL|');

for my $c (@cases) {
	my ($ep, $name, $body, $headers, $want) = @$c;
	my $r = $t->post($ep, $body, { %$headers, 'Content-Type' => 'application/json' });
	if ($want =~ /^\d{3}$/) {
		is($r->{status}, $want, "$name: $want");
		next;
	}
	is($r->{status}, 200, "$name: stored");
	is($r->{json}{duplicate}, JSON::PP::false, "$name: not taken for another delivery");
	my ($id) = split /\|/, $want;
	is(row($ep, "id = $r->{json}{id}"), $want, "$name: the fields as sent");
}
is($t->sql(q{select count(*) from hookinbox.inbox where event_id like 'evt_lone%' and event_id <> 'evt_lone_type'}), 0,
	'ids with lone surrogates: nothing stored');
like($t->post('st', '{"id":"evt_lone\ud800"}', { 'Stripe-Signature' => stripe_sig($st_secret, '{"id":"evt_lone\ud800"}') })->{content},
	qr/event id is not valid UTF-8/, 'an id with a lone surrogate: the reason says so');

# ---- the SDKs read the same fields
SKIP: {
	my $why = SDK::install();
	skip "provider SDKs: $why", 1 if $why;
	my @sdk = grep { $_->[0] ne 'hm' } @cases; # the generic scheme has no SDK
	my $res = SDK::run('fields', [ map { { provider => { st => 'stripe', gh => 'github', std => 'standard' }->{ $_->[0] },
		secret => $_->[0] eq 'st' ? $st_secret : $_->[0] eq 'gh' ? $gh_secret : $std_secret,
		body => $_->[2], headers => $_->[3] } } @sdk ]);
	for my $i (0 .. $#sdk) {
		my ($ep, $name, $body, $headers, $want) = @{ $sdk[$i] };
		my $f = $res->[$i];
		ok($f->{ok}, "SDK reads '$name'") or diag($f->{error});
		next unless $f->{ok};
		my %f = %{ $f->{fields} };
		if ($want =~ /^\d{3}$/) {
			ok(ref $f{event_id} && $f{event_id}{ill_formed}, "$name: the SDK's id is not well-formed Unicode either");
			next;
		}
		my @mine = split /\|/, $want, -1;
		my %mine = (event_id => $mine[0], event_type => $mine[1], object_id => $mine[2], version => $mine[3]);
		for my $k (sort keys %f) {
			my $sdk = $f{$k};
			if (ref $sdk) {
				is($mine{$k}, 'NULL', "$name: $k is ill-formed for the SDK, NULL here");
			} elsif ($k eq 'version' && defined $sdk && $mine{$k} eq 'NULL') {
				like($mine[4], qr/^created: /, "$name: version $sdk beyond int64: NULL, with a note");
			} else {
				is($mine{$k}, $sdk // 'NULL', "$name: $k as the SDK reads it");
			}
		}
	}
}

done_testing();
