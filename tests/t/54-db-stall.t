# SPDX-License-Identifier: ISC
# A database that stops answering (the server frozen with SIGSTOP: a hung
# host, a partition) must not hang the intake: the server's own
# statement_timeout cannot fire, so the responder bounds its wait itself
# (statement_timeout + 500 ms) and answers 503 with Retry-After, in both
# commit modes.  Once the server wakes, every delivery answered 2xx is a row,
# and each one answered 503 is stored when the provider retries it (some may
# have committed already, the retry is then a duplicate).  The measured
# stall-to-503 times are printed for docs/scaling.md.
#
# The responder's counters share its connection: a count sent as the server
# froze (forced here: a rejection just after the freeze, written within a
# 100 ms flush period of the test build) must not hold the deliveries behind
# it for a whole wait, and the counts of the outage are written once the
# server answers again.
#
# A multi-host conninfo whose first host accepts connections and never
# answers (libpq's connect_timeout does not apply to the responder's
# polled connection): the first delivery gets 503 in time, and the next
# attempt starts with the next host, so the following deliveries are stored.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::HA;
use IO::Socket::INET;
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(time sleep);

my $secret = 'whsec_stall_0123456789abcdef';

sub body { my ($ev) = @_; return encode_json({ id => $ev, object => 'event', type => 'invoice.paid',
	created => 1700000000, data => { object => { id => "in_$ev" } } }) }

# post ev once; "ev status retry-after seconds"
sub post_once {
	my ($url, $ev) = @_;
	my $b = body($ev);
	my $t0 = time;
	my $r = HTTP::Tiny->new(timeout => 60)->request('POST', $url, { content => $b,
		headers => { 'Stripe-Signature' => stripe_sig($secret, $b), 'Content-Type' => 'application/json' } });
	return sprintf("%s %d %s %.3f", $ev, $r->{status}, $r->{headers}{'retry-after'} // '-', time - $t0);
}

# post each event at once from its own process; the lines of post_once
sub post_parallel {
	my ($t, $url, @evs) = @_;
	my $file = $t->dir . "/par.$$." . int(rand(1e9));
	my @kids;
	for my $ev (@evs) {
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			my $line = post_once($url, $ev);
			open my $fh, '>>', $file or POSIX::_exit(1);
			print $fh "$line\n";
			close $fh;
			POSIX::_exit(0);
		}
		push @kids, $pid;
	}
	waitpid($_, 0) for @kids;
	open my $fh, '<', $file or return ();
	chomp(my @l = <$fh>);
	return @l;
}

# the postmaster and every process it started
sub pg_pids {
	my ($t) = @_;
	open my $fh, '<', $t->pg->{data} . '/postmaster.pid' or die $!;
	chomp(my $pm = <$fh>);
	my @kids = grep { (HookTest::slurp("/proc/$_/stat") // '') =~ /^\d+ \(.*?\) \S (\d+)/ && $1 == $pm }
		map { m{/proc/(\d+)$} ? $1 : () } glob('/proc/[0-9]*');
	return ($pm, @kids);
}

for my $mode ([single => 1], [group => 4]) {
	my ($name, $threads) = @$mode;
	my $t = HookTest->new(endpoints => { st => { provider => 'stripe', secrets => [$secret] } },
		intake => { threads => $threads }, procs => 1, env => { HOOKINBOX_TEST_COUNT_FLUSH_MS => 100 });
	my $url = $t->url('st');
	my @warm = post_parallel($t, $url, map { "evt_${name}_warm_$_" } 1 .. 3);
	is(scalar(grep { (split)[1] == 200 } @warm), 3, "$name: deliveries stored before the stall");

	my @pids = pg_pids($t);
	kill 'STOP', @pids;
	my $fb = body("evt_${name}_forged");
	my $forged = HTTP::Tiny->new(timeout => 10)->request('POST', $url, { content => $fb,
		headers => { 'Stripe-Signature' => stripe_sig('whsec_not_the_secret', $fb), 'Content-Type' => 'application/json' } });
	is($forged->{status}, 401, "$name: a forged request is refused while the server is frozen");
	sleep 0.2;   # its count is sent, and not answered
	my @evs = map { "evt_${name}_stall_$_" } 1 .. 6;
	my $t0 = time;
	my @got = eval { post_parallel($t, $url, @evs) };
	my $stalled = time - $t0;
	kill 'CONT', @pids;
	my @s503 = grep { (split)[1] == 503 } @got;
	my @s2xx = grep { (split)[1] >= 200 && (split)[1] < 300 } @got;
	is(scalar(@got), 6, "$name: every request answered while the server is frozen");
	is(scalar(@s503), 6, "$name: each one 503") or diag(join("\n", @got));
	is(scalar(grep { (split)[2] ne '-' } @s503), scalar(@s503), "$name: with Retry-After");
	my ($max) = sort { $b <=> $a } map { (split)[3] } @got;
	my @ms = map { / ms=([0-9.]+)/ ? $1 : () } grep { /event=request / && /status=503/ }
		split /\n/, $t->responder_log;
	my ($max_ms) = sort { $b <=> $a } @ms;
	cmp_ok($max_ms, '<=', 3000, "$name: the responder answers each within statement_timeout + 500 ms (and its body read)")
		or diag(join("\n", grep { /error|status=503/ } split /\n/, $t->responder_log));
	cmp_ok($max, '<', 4.5, "$name: the last of 6 at once, queued in the web server, within 4.5 s");
	my ($first) = sort { $a <=> $b } map { (split)[3] } @got;
	cmp_ok($first, '<', 1.5, "$name: the count in flight held the deliveries behind it for no more than its 0.5 s");
	diag(sprintf("%s: stall-to-503 %s s (6 at once, default statement_timeout 2000 ms)", $name,
		join(' ', map { sprintf('%.2f', (split)[3]) } sort { (split(' ', $a))[3] <=> (split(' ', $b))[3] } @got)));

	# awake again: every 503 is retried by the provider and stored
	my @retry = map { (split)[0] } @s503;
	my $give_up = time + 30;
	while (@retry && time < $give_up) {
		my @again = post_parallel($t, $url, @retry);
		@retry = map { (split)[0] } grep { (split)[1] != 200 } @again;
		sleep 0.5 if @retry;
	}
	is(scalar(@retry), 0, "$name: every 503'd delivery is stored when retried after the server woke");
	for my $ev ((map { (split)[0] } @warm, @s2xx), @evs) {
		is($t->sql("select count(*) from hookinbox.inbox where event_id = '$ev'"), 1, "$name: $ev is one row");
	}
	is($t->sql('select count(*) from hookinbox.inbox'), 9, "$name: nothing else stored");
	my $later = (split ' ', post_once($url, "evt_${name}_after"))[1];
	is($later, 200, "$name: a new delivery is stored at once after the stall");
	# counts are kept until written: at least once (one the frozen server
	# took before it froze may be written twice), never lost
	my ($rejected, $n503) = (0, 0);
	my $until = time + 10;
	while (time < $until) {
		$rejected = $t->sql("select coalesce(sum(count), 0) from hookinbox.rejection where endpoint = 'st' and reason = 'signature mismatch'");
		$n503 = $t->sql("select coalesce(sum(b), 0) from hookinbox.request_duration, unnest(buckets) b where status = 503");
		last if $rejected >= 1 && $n503 >= @s503;
		sleep 0.2;
	}
	cmp_ok($rejected, '>=', 1, "$name: the forged request of the outage is counted once the server answers");
	cmp_ok($n503, '>=', scalar(@s503), "$name: so is each 503 of the outage");
}
{
	my $t = HookTest->new(endpoints => { st => { provider => 'stripe', secrets => [$secret] } }, no_lighttpd => 1);
	my $mute = IO::Socket::INET->new(Listen => 16, LocalAddr => '127.0.0.1', LocalPort => 0, ReuseAddr => 1)
		or die "listen: $!";
	my $pg = $t->pg;
	my $ci = "host=127.0.0.1,$pg->{sock} port=" . $mute->sockport . ",$pg->{port} dbname=hookinbox";
	HookTest::HA::configure($t, intake => "$ci user=hookinbox_intake", worker => "$ci user=hookinbox_worker");
	$t->{httpd} = HookTest::Lighttpd->new(dir => $t->dir, fcgi => HookTest::top() . '/obj/test/hookinbox.fcgi',
		config => $t->config, procs => 1)->start;
	my @first = split ' ', post_once($t->url('st'), 'evt_hosts_1');
	is($first[1], 503, 'a first host that never answers: 503');
	cmp_ok($first[3], '<', 3.5, "within the deadline ($first[3] s)");
	my @next = map { [split ' ', post_once($t->url('st'), "evt_hosts_$_")] } 2 .. 4;
	is(join(' ', map { $_->[1] } @next), '200 200 200', 'the next attempts start with the next host: stored');
	is($t->sql("select count(*) from hookinbox.inbox where event_id like 'evt_hosts_%'"), 3, 'three rows');
	close $mute;
}
done_testing();
