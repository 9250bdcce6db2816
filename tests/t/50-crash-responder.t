# SPDX-License-Identifier: ISC
# The responder crashes at each of its failure points (test build:
# HOOKINBOX_FAILPOINT makes the process _exit(99) there), the web server
# answers the sender with an error, and the provider's retry reaches a fresh
# responder.  Invariant, checked in the database: a delivery is stored at
# most once, and the retry after a crash either stores it (nothing was
# committed) or finds the committed row (same id, duplicate=true).
# Run in process mode and with eight request threads (group commit).
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig github_sig);
use JSON::PP;

my $secret = 'whsec_crash_test_5b7c9d1e3f';
my $gh_secret = 'gh-crash-secret-24680';
my $t = HookTest->new(endpoints => {
	'st' => { provider => 'stripe', secrets => [$secret] },
	'gh' => { provider => 'github', secrets => [$gh_secret] },
});

sub rows { $t->sql("select count(*) from hookinbox.inbox where event_id = '$_[0]'") }

sub stripe_body {
	my ($id, $pad) = @_;
	# a large body is read in several chunks: mid-body has something to cut
	return encode_json({ id => $id, object => 'event', type => 'invoice.paid', created => 1700000000,
		data => { object => { id => "in_$id", pad => 'p' x ($pad // 10) } } });
}

sub send_stripe {
	my ($body) = @_;
	return $t->post('st', $body, { 'Stripe-Signature' => stripe_sig($secret, $body), 'Content-Type' => 'application/json' });
}

sub crashes_logged {
	my ($fp) = @_;
	my @n = $t->responder_log =~ /failpoint \Q$fp\E: exiting/g;
	return scalar @n;
}

my $n = 0;
for my $mode ('process', 'threads') {
	if ($mode eq 'threads') {
		$t->{o}{intake}{threads} = 8;
		$t->write_config;
	}
	for my $fp (qw(fcgi-before-insert fcgi-after-commit fcgi-mid-body)) {
		my $what = "$mode/$fp";
		my $ev = 'evt_' . ++$n;
		my $body = stripe_body($ev, $fp eq 'fcgi-mid-body' ? 300_000 : 10);
		my $seen = crashes_logged($fp);

		$t->httpd->restart(HOOKINBOX_FAILPOINT => $fp);
		my $r = send_stripe($body);
		ok($r->{status} >= 500 && $r->{status} <= 599, "$what: the crashed delivery gets a 5xx ($r->{status})");
		ok(!defined $r->{json}{id}, "$what: no intake id was sent");
		ok(crashes_logged($fp) > $seen, "$what: the responder did exit at the failure point");
		my $committed = rows($ev);
		my $first_id = $t->sql("select coalesce(max(id), 0) from hookinbox.inbox where event_id = '$ev'");
		if ($fp eq 'fcgi-after-commit') {
			is($committed, 1, "$what: the row was committed before the crash");
		} else {
			is($committed, 0, "$what: nothing was stored");
		}

		# the provider retries; the web server starts a fresh responder without the failure point
		$t->httpd->restart(HOOKINBOX_FAILPOINT => undef);
		$r = send_stripe($body);
		is($r->{status}, 200, "$what: the retry is accepted");
		if ($fp eq 'fcgi-after-commit') {
			is($r->{json}{id}, $first_id, "$what: the retry gets the committed id");
			is($r->{json}{duplicate}, JSON::PP::true, "$what: the retry is a duplicate");
		} else {
			is($r->{json}{duplicate}, JSON::PP::false, "$what: the retry is stored as new");
		}
		is(rows($ev), 1, "$what: exactly one row");
		# and once more: still one row, same id
		my $again = send_stripe($body);
		is_deeply([$again->{status}, $again->{json}{id}, $again->{json}{duplicate}], [200, $r->{json}{id}, JSON::PP::true],
			"$what: a further redelivery is a duplicate of the same row");
		is($t->sql("select length(body) from hookinbox.inbox where event_id = '$ev'"), length($body),
			"$what: the stored body is complete");
	}

	# GitHub (unsigned delivery id): crash after commit, the provider's retry comes with a new delivery id
	{
		my $b = encode_json({ action => 'opened', number => ++$n, pull_request => { id => $n } });
		my %h = ('X-Hub-Signature-256' => github_sig($gh_secret, $b), 'X-GitHub-Event' => 'pull_request');
		$t->httpd->restart(HOOKINBOX_FAILPOINT => 'fcgi-after-commit');
		my $r = $t->post('gh', $b, { %h, 'X-GitHub-Delivery' => "gh-$mode-1" });
		ok($r->{status} >= 500, "$mode/github after commit: 5xx ($r->{status})");
		$t->httpd->restart(HOOKINBOX_FAILPOINT => undef);
		$r = $t->post('gh', $b, { %h, 'X-GitHub-Delivery' => "gh-$mode-2" });
		is($r->{status}, 200, "$mode/github after commit: retry accepted");
		is($r->{json}{duplicate}, JSON::PP::true, "$mode/github after commit: retry under a new delivery id is a duplicate");
		is($t->sql("select count(*) from hookinbox.inbox where event_id like 'gh-$mode-%'"), 1,
			"$mode/github after commit: one row");
	}
}

is($t->sql('select count(*) from hookinbox.inbox'), $n, 'in all: one row per delivery');
is($t->sql(q{select count(*) from (select provider, account, environment, event_id from hookinbox.inbox
	group by 1, 2, 3, 4 having count(*) > 1) d}), 0, 'no delivery key stored twice');

done_testing();
