# SPDX-License-Identifier: ISC
# A body that has not arrived holds no request thread.  Apache's
# mod_proxy_fcgi without the snippet's RequestReadTimeout streams each body
# to the responder as it arrives.  Six senders trickle bodies at 600 B/s,
# three per request thread of a responder with two; five signed deliveries
# sent meanwhile are each answered and stored within a second, with the id
# their reply carried, and each slow sender is cut off by the responder's
# body deadline (5 s): answered, logged 408, nothing of it stored.  Before,
# each slow body held a thread until its deadline: the deliveries waited
# behind them.
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes ();

plan skip_all => 'apache2, mod_proxy_fcgi or spawn-fcgi missing'
	unless HookTest::WebServers::have(qw(apache2 mod_proxy_fcgi spawn-fcgi));

my $t = HookTest::Web->new(endpoints => { HookTest::Web::endpoints() }, intake => { threads => 2 });
$t->spawn_fcgi;
$t->apache(snippet => 'etc/apache/hookinbox-proxy-fcgi.conf', modules => [qw(proxy proxy_fcgi)],
	subst => { 'RequestReadTimeout header=20-40,MinRate=500 body=5' => '# (no body timeout in this test)' });
my ($port) = $t->{web}->url =~ m{:(\d+)/};
my $dir = $t->dir;

# each slow sender writes "<status> <seconds until the answer>" to its file
my ($senders, $len, $fast) = (6, 40000, 20000);
my @kids;
for my $k (1 .. $senders) {
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		my $t0 = Time::HiRes::time();
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or POSIX::_exit(1);
		$s->autoflush(1);
		local $SIG{PIPE} = 'IGNORE';
		print $s "POST /hooks/stripe-live HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			. "Stripe-Signature: t=1,v1=00\r\nContent-Length: $len\r\nConnection: close\r\n\r\n";
		print $s ('x' x $fast);
		my $sel = IO::Select->new($s);
		my $answer = '';
		for (my $sent = $fast; $sent < $len; $sent += 60) {
			last if $sel->can_read(0.1) && sysread($s, $answer, 4096, length $answer);
			print $s ('x' x ($len - $sent < 60 ? $len - $sent : 60)) or last;
		}
		$sel->can_read(10) && sysread($s, $answer, 4096, length $answer) if $answer eq '';
		my ($status) = $answer =~ m{^HTTP/1\.\d (\d+)};
		open my $fh, '>', "$dir/slow.$k" or POSIX::_exit(1);
		printf $fh "%s %.2f\n", $status // 'none', Time::HiRes::time() - $t0;
		close $fh;
		POSIX::_exit(0);
	}
	push @kids, $pid;
}
Time::HiRes::sleep(1); # the slow bodies have started

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
