# SPDX-License-Identifier: ISC
# Signed Slack deliveries without an event id of their own (app_rate_limited,
# view_closed, block_suggestion) are acknowledged and stored under a key
# derived from the signed body, never refused with a 4xx (Slack disables
# apps that keep failing); a retry of one is its duplicate.
use strict;
use warnings;
use Test::More;
use HookTest;
use Digest::SHA qw(hmac_sha256_hex sha256_hex);

my $secret = 'slack-signing-secret-0123456789';
my $t = HookTest->new(endpoints => { sl => { provider => 'slack', secrets => [$secret] } });

sub slack {
	my ($body, $ctype) = @_;
	my $ts = time();
	return $t->post('sl', $body, { 'X-Slack-Request-Timestamp' => $ts,
		'X-Slack-Signature' => 'v0=' . hmac_sha256_hex("v0:$ts:$body", $secret), 'Content-Type' => $ctype });
}

sub form_escape { my ($s) = @_; $s =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; return $s }

my @cases = (
	['app_rate_limited', '{"token":"x","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}',
		'application/json'],
	['view_closed', 'payload=' . form_escape('{"type":"view_closed","team":{"id":"T1"},"user":{"id":"U1"},"view":{"id":"V1"},"is_cleared":false}'),
		'application/x-www-form-urlencoded'],
	['block_suggestion', 'payload=' . form_escape('{"type":"block_suggestion","user":{"id":"U1"},"action_id":"a1","block_id":"b1","value":"ab"}'),
		'application/x-www-form-urlencoded'],
);
for my $c (@cases) {
	my ($type, $body, $ctype) = @$c;
	my $r = slack($body, $ctype);
	is($r->{status}, 200, "$type: acknowledged") or diag($r->{content});
	is($t->sql("select event_type || '|' || event_id from hookinbox.inbox where id = " . ($r->{json}{id} // 0)),
		"$type|sha256:" . sha256_hex($body), "$type: stored under the hash of the signed body, with its type");
	my $again = slack($body, $ctype);
	is($again->{json}{id}, $r->{json}{id}, "$type: a retry is its duplicate");
}
is($t->sql('select count(*) from hookinbox.inbox'), 3, 'one row each');
my $bad = $t->post('sl', $cases[0][1], { 'X-Slack-Request-Timestamp' => time(),
	'X-Slack-Signature' => 'v0=' . ('0' x 64), 'Content-Type' => 'application/json' });
is($bad->{status}, 401, 'badly signed: still refused');
done_testing();
