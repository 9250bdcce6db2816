# SPDX-License-Identifier: ISC
# Rejection counts reach the database every ten seconds while the responder
# idles: a burst of forged deliveries shows in hookinbox.rejection (and so
# in the metrics and the HookinboxSignatureFailures alert) with no further
# request arriving and without the responder stopping.  Storage failures
# (503) are counted the same way, by endpoint, once the database is back.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);

my $secret = 'whsec_rejections_flushed_0123456789';
my $t = HookTest->new(endpoints => { 'stripe-live' => { provider => 'stripe', secrets => [$secret] } }, procs => 1);
my $body = '{"id":"evt_forged","type":"invoice.paid","created":1}';
for my $i (1 .. 7) {
	my $r = $t->post('stripe-live', $body, { 'Stripe-Signature' => stripe_sig('whsec_wrong_secret_000000', $body) });
	is($r->{status}, 401, "forged delivery $i refused") or diag $r->{content};
}
my $count = sub {
	$t->sql(q{select coalesce(sum(count), 0) from hookinbox.rejection
		where endpoint = 'stripe-live' and reason = 'signature mismatch'});
};
my $waited = 0;
while ($count->() < 7 && $waited < 25) {
	sleep 1;
	$waited++;
}
is($count->(), 7, "all 7 counted with no other request, the responder still running (after ${waited} s)");
cmp_ok($waited, '<=', 12, 'within the ten-second period');
ok($t->httpd->running, 'the responder was not stopped to get them') if $t->httpd->can('running');

# the database down: a signed delivery is answered 503 and counted when it is back
$t->pg->stop;
my $good = '{"id":"evt_while_down","type":"invoice.paid","created":1}';
my $r = $t->post('stripe-live', $good, { 'Stripe-Signature' => stripe_sig($secret, $good) });
is($r->{status}, 503, 'database down: 503');
sleep 11; # one flush fails while the database is down: the count is kept
$t->pg->start;
my $down = sub {
	$t->sql(q{select coalesce(sum(count), 0) from hookinbox.rejection
		where endpoint = 'stripe-live' and reason = 'storage unavailable'});
};
$waited = 0;
while ($down->() < 1 && $waited < 25) {
	sleep 1;
	$waited++;
}
is($down->(), 1, "the storage failure counted by endpoint once the database is back (after ${waited} s)");
my ($rc, $out) = $t->pg->psql_file(HookTest::top() . '/sql/stats.sql', role => 'hookinbox_admin');
is($rc, 0, 'stats.sql as hookinbox_admin') or diag $out;
like($out, qr/^\s*stripe-live\s*\|\s*signature mismatch\s*\|\s*7\s*\|/m, 'stats.sql: the refusals by endpoint and reason') or diag $out;
like($out, qr/^\s*stripe-live\s*\|\s*storage unavailable\s*\|\s*1\s*\|/m, 'stats.sql: the storage failures by endpoint') or diag $out;
done_testing();
