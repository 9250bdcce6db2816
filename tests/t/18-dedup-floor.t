# SPDX-License-Identifier: ISC
# The replay defence outlives the replay window: sql/purge.sql refuses a
# dedup_days shorter than the replay horizon of a provider with rows in the
# inbox (GitHub: 3 days), unless forced.  Through lighttpd and PostgreSQL: a
# captured body replayed under a fresh (unsigned) delivery id stays a
# duplicate after a refused purge.
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig);
use JSON::PP;

my $secret = 'gh-floor-secret-86420';
my $t = HookTest->new(endpoints => { 'gh' => { provider => 'github', secrets => [$secret] } });
my $purge = HookTest::top() . '/sql/purge.sql';

sub deliver {
	my ($body, $delivery) = @_;
	return $t->post('gh', $body, { 'X-Hub-Signature-256' => github_sig($secret, $body),
		'X-GitHub-Event' => 'issues', 'X-GitHub-Delivery' => $delivery });
}

my $body = '{"action":"opened","issue":{"id":77}}';
my $first = deliver($body, 'd-1');
is($first->{status}, 200, 'a delivery is stored');
# two days old, and finished (as after the worker's fan-out)
$t->sql(q{update hookinbox.inbox set received_at = now() - interval '2 days', state = 'unrouted'});

my ($rc, $out) = $t->pg->psql_file($purge, role => 'hookinbox_admin', vars => { payload_days => 1, dedup_days => 1 });
isnt($rc, 0, 'purge with dedup_days = 1: refused');
like($out, qr/dedup_days = 1 is shorter than the replay horizon of github \(3 days\)/, 'and says why');
is($t->sql('select count(*) from hookinbox.inbox'), 1, 'the delivery key is kept');
my $r = deliver($body, 'd-2');
is($r->{json}{duplicate}, JSON::PP::true, 'the captured body under a fresh delivery id is still a duplicate');
is($r->{json}{id}, $first->{json}{id}, 'of the first delivery');

($rc, $out) = $t->pg->psql_file($purge, role => 'hookinbox_admin', vars => { payload_days => 1, dedup_days => 3 });
is($rc, 0, 'purge with dedup_days = 3 runs') or diag $out;
is($t->sql('select count(*) from hookinbox.inbox'), 1, 'and keeps the two-day-old key');

($rc, $out) = $t->pg->psql_file($purge, role => 'hookinbox_admin',
	vars => { payload_days => 1, dedup_days => 1, force => 1 });
is($rc, 0, 'purge with dedup_days = 1 and force = 1 runs') or diag $out;
is($t->sql('select count(*) from hookinbox.inbox'), 0, 'forced: the key is deleted');
$r = deliver($body, 'd-3');
# the ledger outlives the row: the replay is still the first delivery's duplicate
is($r->{json}{duplicate}, JSON::PP::true, 'forced: the ledger answers the replay as a duplicate');
is($r->{json}{id}, $first->{json}{id}, '... of the first delivery');
is($t->sql('select count(*) from hookinbox.inbox'), 0, '... and nothing is stored');

done_testing();
