# SPDX-License-Identifier: ISC
# PostgreSQL restarted (fast, then immediate shutdown) in the middle of a
# sustained load of signed deliveries.  Several senders post new events as
# fast as they are answered; like a provider, a sender retries a delivery
# that got anything but a 2xx after a short pause, until it is accepted.
# Afterwards: every delivery that got a 2xx is in the inbox exactly once
# (with the id it was told), every delivery that got a non-2xx was retried
# until accepted, and nothing is stored twice.  Run in process mode and
# with eight request threads per process (group commit).
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HTTP::Tiny;
use JSON::PP;
use POSIX qw(_exit);
use Time::HiRes qw(sleep time);

my $SENDERS = $ENV{HOOKINBOX_RESTART_SENDERS} // 6;
my $LOAD_SECONDS = $ENV{HOOKINBOX_RESTART_SECONDS} // 4;
my $secret = 'whsec_restart_test_9c8b7a6f5e';
my $t = HookTest->new(endpoints => { 'st' => { provider => 'stripe', secrets => [$secret] } });
my $dir = $t->dir;

sub body_for {
	my ($ev) = @_;
	return encode_json({ id => $ev, object => 'event', type => 'invoice.paid', created => 1700000000,
		data => { object => { id => "in_$ev" } } });
}

# one sender: new events until the deadline, each retried until accepted;
# writes "event status id duplicate" per attempt
sub sender {
	my ($tag, $k, $deadline) = @_;
	my $http = HTTP::Tiny->new(timeout => 15, keep_alive => 1);
	open my $out, '>', "$dir/sent.$tag.$k" or _exit(2);
	$out->autoflush(1);
	my $url = $t->url('st');
	for (my $i = 1; time() < $deadline; $i++) {
		my $ev = "evt_${tag}_${k}_$i";
		my $body = body_for($ev);
		my $give_up = time() + 90;
		while (1) {
			my $r = $http->request('POST', $url, { content => $body,
				headers => { 'Stripe-Signature' => stripe_sig($secret, $body), 'Content-Type' => 'application/json' } });
			my $j = eval { decode_json($r->{content}) } // {};
			my $dup = ref $j->{duplicate} ? ($j->{duplicate} ? 1 : 0) : '-';
			print $out "$ev $r->{status} " . ($j->{id} // '-') . " $dup\n";
			last if $r->{status} >= 200 && $r->{status} <= 299;
			if (time() > $give_up) { print $out "$ev GAVEUP - -\n"; last }
			sleep 0.2; # a provider's short pause before the retry
		}
	}
	close $out;
	_exit(0);
}

sub scenario {
	my ($tag, $shutdown) = @_;
	my $start = time();
	my $deadline = $start + $LOAD_SECONDS;
	my @pids;
	for my $k (1 .. $SENDERS) {
		my $pid = fork // die "fork: $!";
		sender($tag, $k, $deadline) if $pid == 0;
		push @pids, $pid;
	}
	sleep($LOAD_SECONDS / 3);
	my $t0 = time();
	$t->pg->stop($shutdown);
	sleep 0.5;
	$t->pg->start;
	my $down = time() - $t0;
	waitpid $_, 0 for @pids;

	my (%final, %ids, %statuses, $attempts, $gaveup);
	for my $k (1 .. $SENDERS) {
		open my $fh, '<', "$dir/sent.$tag.$k" or die $!;
		while (<$fh>) {
			my ($ev, $st, $id, $dup) = split;
			$attempts++;
			if ($st eq 'GAVEUP') { $gaveup++; next }
			$statuses{$st =~ /^2/ ? '2xx' : $st =~ /^5/ ? '5xx' : "other($st)"}++;
			$final{$ev} //= undef;
			if ($st =~ /^2/) {
				$final{$ev} = $id;
				$ids{$ev}{$id}++;
			}
		}
	}
	my $sent = keys %final;
	my $rows = $t->sql("select count(*) from hookinbox.inbox where event_id like 'evt\\_${tag}\\_%'");
	my $what = "$tag ($shutdown shutdown)";
	diag(sprintf('%s: sent %d deliveries in %d attempts: 2xx %d, 5xx %d, other %d, gave up %d; rows %d; '
		. 'database down %.1f s', $what, $sent, $attempts, $statuses{'2xx'} // 0, $statuses{'5xx'} // 0,
		(grep { /^other/ } keys %statuses) ? join('+', map { "$_=$statuses{$_}" } grep { /^other/ } keys %statuses) : 0,
		$gaveup // 0, $rows, $down));

	ok($sent > $SENDERS, "$what: load was sustained ($sent deliveries)");
	ok(($statuses{'5xx'} // 0) > 0, "$what: the outage was seen by senders (5xx answers)");
	is(scalar(grep { /^other/ } keys %statuses), 0, "$what: every non-2xx is a 5xx (retryable)");
	is($gaveup // 0, 0, "$what: no sender gave up");
	my @unaccepted = grep { !defined $final{$_} } keys %final;
	is(scalar @unaccepted, 0, "$what: every delivery was retried until accepted") or diag("@unaccepted[0..4]");
	my @two_ids = grep { keys %{ $ids{$_} } > 1 } keys %ids;
	is(scalar @two_ids, 0, "$what: every 2xx for one delivery carried the same id");
	is($rows, $sent, "$what: one row per delivery");

	# each acknowledged delivery is stored exactly once, under the id it was told
	my %db = map { split /\|/ } split /\n/, $t->sql("select event_id, id from hookinbox.inbox where event_id like 'evt\\_${tag}\\_%'");
	my @missing = grep { !defined $db{$_} } grep { defined $final{$_} } keys %final;
	is(scalar @missing, 0, "$what: every acknowledged delivery is in the inbox") or diag("missing: @missing[0..4]");
	my @wrong = grep { defined $db{$_} && defined $final{$_} && $db{$_} ne $final{$_} } keys %final;
	is(scalar @wrong, 0, "$what: stored under the id the sender was told");
	is($t->sql("select count(*) from (select event_id from hookinbox.inbox where event_id like 'evt\\_${tag}\\_%' "
		. "group by event_id having count(*) > 1) d"), 0, "$what: nothing stored twice");
	is($t->sql("select count(*) from hookinbox.inbox where event_id like 'evt\\_${tag}\\_%' "
		. "and body_sha256 <> sha256(body)"), 0, "$what: bodies intact");
}

for my $mode ('process', 'threads') {
	if ($mode eq 'threads') {
		$t->{o}{intake}{threads} = 8;
		$t->write_config;
		$t->httpd->{procs} = 1;
		$t->httpd->restart;
	}
	scenario("${mode}_fast", 'fast');
	scenario("${mode}_immediate", 'immediate');
}

is($t->sql('select count(*) from (select provider, account, environment, event_id from hookinbox.inbox '
	. 'group by 1, 2, 3, 4 having count(*) > 1) d'), 0, 'no delivery key stored twice in all');

done_testing();
