# SPDX-License-Identifier: ISC
# Patroni + etcd, synchronous_mode: true.  Two nodes; responders (group
# commit) and --once workers are given a multi-host conninfo with
# target_session_attrs=read-write and never restarted.  Under signed load
# with redeliveries, the leader's machine is lost: kill -9 of its
# postmaster (and its processes), then of its Patroni.  Patroni promotes
# the synchronous standby once the leader key expires (ttl).
#
# Afterwards: every 2xx is on the new primary exactly once under the id it
# carried, everything answered 503 was accepted on retry, the workers on
# the new primary finished every action with one downstream effect per
# idempotency key and the SQL handler applied each event once.  The time
# without a primary and the 503s are printed (diag).  Then the non-strict
# synchronous mode is seen for what it is (the new primary commits alone),
# and the old leader rejoins (pg_rewind) as the synchronous standby with
# every acknowledged delivery.  Last, synchronous_mode_strict: with the
# standby lost, a delivery is not acknowledged until a standby has it.
use strict;
use warnings;
use Test::More;
use HTTP::Tiny;
use JSON::PP ();
use POSIX ();
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::HA;
use HookTest::Patroni;
use HookTest::Downstream;

plan skip_all => 'heavy, and built with a sanitizer: the responder paths it reaches run under the sanitizers in 84' if HookTest::HA::sanitized();
if (my $why = HookTest::Patroni::available()) {
	plan skip_all => "Patroni cannot run here: $why";
}

my $secret = 'whsec_patroni_test_3b6d2e9f10';
my ($t, $d) = HookTest::HA::setup(secret => $secret, intake => { threads => 8 }, apply => 0);
$t->pg->stop;   # everything lives in the Patroni cluster
my $dir = $t->dir;
my $t0 = time();
my $p = HookTest::Patroni->new(dir => $dir, ttl => 10)->start;
my $old = $p->leader;
my $standby = $p->sync_standby;
diag(sprintf('Patroni cluster up in %.1f s: leader %s, synchronous standby %s', time() - $t0, $old, $standby));
$p->pg($old)->sql($HookTest::HA::APPLY_SQL);
HookTest::HA::configure($t, intake => $p->conninfo('hookinbox_intake'), worker => $p->conninfo('hookinbox_worker'));
HookTest::HA::start_responders($t, 2);

my $what = 'Patroni failover (kill -9 of postmaster and Patroni)';
my ($new, $promoted);
my (undef, $pg) = HookTest::HA::failover(t => $t, d => $d, secret => $secret, tag => 'pat', what => $what,
	after => 60, break => sub {
		my $killed = time();
		$p->crash($old);
		$p->wait_for(sub { $p->leader }, 60, 'new leader');
		$promoted = time() - $killed;
		$new = $p->leader;
		return $p->pg($new);
	});
is($new, $standby, 'the synchronous standby was promoted');
diag(sprintf('%s: new leader after %.1f s (ttl 10)', $what, $promoted));
my $sql = sub { $pg->sql(@_) };
unlike($t->responder_log, qr/status=500/, 'no 500');

# synchronous_mode (not strict): alone, the new primary commits without a
# standby; a 2xx now means one machine, until the old leader is back
is($pg->sql('show synchronous_standby_names'), '', 'non-strict: the lone primary commits without a standby');

# the old leader rejoins (crash recovery, pg_rewind) as the synchronous standby
$p->rejoin($old);
$p->wait_for(sub { ($p->sync_standby // '') eq $old }, 90, "$old as synchronous standby");
pass("$old rejoined as the synchronous standby");
my $n_new = $sql->("select count(*) from hookinbox.inbox where event_id like 'evt\\_pat\\_%'");
$p->wait_for(sub { $p->pg($old)->sql("select count(*) from hookinbox.inbox where event_id like 'evt\\_pat\\_%'") == $n_new },
	30, 'replay on the rejoined node');
is($p->pg($old)->sql("select count(*) from hookinbox.inbox where event_id like 'evt\\_pat\\_%'"), $n_new,
	'the rejoined node has every acknowledged delivery');
isnt($pg->sql('show synchronous_standby_names'), '', 'synchronous again');

# synchronous_mode_strict: the standby is lost again, and now a commit
# waits for a standby instead of going ahead alone, so no delivery is
# acknowledged on one machine.  The responder bounds its wait and answers
# 503; the provider's retries are answered 2xx once the standby is back.
$p->patch_config($new, { synchronous_mode_strict => JSON::PP::true() });
$p->wait_for(sub { ($p->rest($new, '/config'))[1]{synchronous_mode_strict} }, 10, 'strict mode');
sleep 2;   # a loop of each node
$p->crash($old);
sleep 3;   # non-strict, Patroni would have emptied synchronous_standby_names by now
isnt($pg->sql('show synchronous_standby_names'), '', 'strict: still waiting for a synchronous standby');
my $ans = "$dir/strict.answer";
my $kid = fork // die "fork: $!";
if ($kid == 0) {
	# the provider: retries until a 2xx, and records when it came
	my $body = JSON::PP::encode_json({ id => 'evt_strict_1', object => 'event', type => 'invoice.paid',
		created => 1700000000, data => { object => { id => 'in_strict' } } });
	my $deadline = time() + 150;
	while (time() < $deadline) {
		my $res = HTTP::Tiny->new(timeout => 30)->request('POST', $t->url('st'), { content => $body,
			headers => { 'Stripe-Signature' => HookTest::stripe_sig($secret, $body), 'Content-Type' => 'application/json' } });
		if ($res->{status} =~ /^2/) {
			open my $fh, '>', "$ans.tmp" or POSIX::_exit(2);
			print $fh "$res->{status} " . time() . "\n";
			close $fh;
			rename "$ans.tmp", $ans;
			POSIX::_exit(0);
		}
		sleep 0.5;
	}
	POSIX::_exit(1);
}
my $sent = time();
sleep 5;
ok(!-e $ans, 'strict: no 2xx while no standby has the commit (5 s)');
$p->rejoin($old);
$p->wait_for(sub { -e $ans }, 120, 'the answer after the rejoin');
waitpid $kid, 0;
my ($status, $at) = split ' ', HookTest::slurp($ans);
is($status, 200, 'strict: answered 2xx once the standby was back');
diag(sprintf('strict mode: the delivery waited %.1f s for the standby to rejoin', $at - $sent));
for my $node ($new, $old) {
	$p->wait_for(sub { $p->pg($node)->sql("select count(*) from hookinbox.inbox where event_id = 'evt_strict_1'") == 1 },
		30, "the strict delivery on $node");
	pass("strict: the delivery is on $node");
}
$t->{httpd}->stop;
$p->stop;

done_testing();
