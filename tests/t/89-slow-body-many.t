# SPDX-License-Identifier: ISC
# A body that has not arrived holds no request thread.  Apache's
# mod_proxy_fcgi without the snippet's RequestReadTimeout streams each body
# to the responder as it arrives.  Six senders trickle bodies at 600 B/s,
# three per request thread of a responder with two; five signed deliveries
# sent meanwhile are each answered and stored within a second, with the id
# their reply carried, and each slow sender is cut off by the responder's
# body deadline (5 s): answered, logged 408, nothing of it stored.  A slow
# body that held a thread until its deadline would make the deliveries
# wait behind it.
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;
use Time::HiRes ();

my $t = HookTest::Web->streaming_apache(threads => 2);
my $dir = $t->dir;

# three slow senders per request thread
my $senders = 6;
my @kids = $t->slow_senders(senders => $senders);

my $worst = 0;
for my $i (1 .. 5) {
	my $ev = "evt_many_ok_$i";
	my $b = HookTest::Web::stripe_event($ev);
	my $t0 = Time::HiRes::time();
	my $r = $t->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	my $took = Time::HiRes::time() - $t0;
	$worst = $took if $took > $worst;
	is($r->{status}, 200, "delivery $i while $senders bodies trickle in: 200") or diag $r->{content};
	cmp_ok($took, '<', 1, sprintf('delivery %d answered within 1 s (%.3f s)', $i, $took));
	is($t->sql("select id from hookinbox.inbox where event_id = '$ev'"), $r->{json}{id} // 'no id',
		"delivery $i: stored, with the id its reply carried");
}
diag(sprintf('slowest of 5 deliveries behind %d slow bodies, two request threads: %.3f s', $senders, $worst));

waitpid($_, 0) for @kids;
for my $k (1 .. $senders) {
	my ($status, $at) = split ' ', HookTest::slurp("$dir/slow.$k") // 'none 99';
	cmp_ok($at, '<', 7, "slow sender $k answered by the body deadline ($status after $at s)");
}
my $log = HookTest::slurp("$dir/responder.log");
my $n408 = () = $log =~ /status=408/g;
is($n408, $senders, "the responder answered each slow body 408") or diag $log;
is($t->sql(q{select count(*) from hookinbox.inbox where event_id not like 'evt_many_ok_%'}), 0,
	'nothing of the slow senders was stored');

undef $t;
done_testing();
