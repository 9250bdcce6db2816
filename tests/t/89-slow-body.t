# SPDX-License-Identifier: ISC
# The responder itself bounds a slowly arriving body, whatever the web
# server in front does: Apache's mod_proxy_fcgi with the shipped snippet's
# RequestReadTimeout taken out streams each body to the responder as it
# arrives.  Two senders trickle bodies at 600 B/s (33 s each), one per
# request thread of the responder; a signed delivery sent meanwhile is a
# row in PostgreSQL within a few seconds, because a body that has not
# arrived 5 s after its first byte is answered 408, and it holds no request
# thread while it arrives (t/89-slow-body-many: more slow senders than
# threads).  Without the bound it waited for the slow bodies (or timed out).
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;
use Time::HiRes ();

my $t = HookTest::Web->streaming_apache(threads => 2);
my $took = $t->slow_body_check(label => 'apache+proxy_fcgi without a body timeout', within => 7);
diag(sprintf('a delivery behind two slow bodies, two request threads: %.2f s', $took));

# the slow senders were cut off: no row, and the responder answered each
# (the helper ends them after the delivery, long before their 5 s deadline
# now, so their bodies end short: 400; t/89-slow-body-many waits for 408s)
my $log = '';
for (1 .. 80) {
	$log = HookTest::slurp($t->dir . '/responder.log');
	last if (() = $log =~ /status=(?:408|400 reason="body shorter)/g) >= 2;
	Time::HiRes::sleep(0.1);
}
is(scalar(() = $log =~ /status=(?:408|400 reason="body shorter)/g), 2,
	'the responder answered both slow bodies (408, or 400 once their senders went)') or diag $log;
is($t->sql(q{select count(*) from hookinbox.inbox where event_id not like 'evt_web_slow_%'}), 0,
	'nothing else was stored');

# a body that arrives in time is unaffected
{
	my $b = HookTest::Web::stripe_event('evt_slow_ok');
	my $r = $t->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	is($r->{status}, 200, 'a delivery afterwards: 200');
	is($t->rows(q{event_id = 'evt_slow_ok'}), 1, 'and stored');
}

undef $t;
done_testing();
