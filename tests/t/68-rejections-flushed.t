# SPDX-License-Identifier: ISC
# Rejection counts reach the database every ten seconds while the responder
# idles: a burst of forged deliveries shows in hookinbox.rejection (and so
# in the metrics and the HookinboxSignatureFailures alert) with no further
# request arriving and without the responder stopping.
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
done_testing();
