# SPDX-License-Identifier: ISC
# A plain streaming standby, promoted by hand (pg_ctl promote), for users
# who run without Patroni.  The responders and the workers are given one
# multi-host conninfo (three clusters: A, B, C) with
# target_session_attrs=read-write, and are never restarted or reconfigured.
#
# 1. A is the primary, B its synchronous standby.  Under signed load with
#    redeliveries, A's postmaster and every process of it are killed -9
#    (the machine is gone); a second later the operator promotes B.
# 2. C is made a synchronous standby of B.  Under load, B turns read-only
#    (default_transaction_read_only, as a primary being demoted), C catches
#    up and is promoted.  A responder whose connection to B now fails with
#    SQLSTATE 25006 must answer 503, not 500, and reconnect: the multi-host
#    conninfo then finds C.
#
# After each: every 2xx is on the new primary exactly once under the id it
# carried; everything answered 503 was accepted on retry; workers (--once,
# in rounds as cron runs them) on the new primary finished every action,
# with one downstream effect per idempotency key and no key called twice
# except as a recorded retry.  The time without a primary and the 503s are
# printed (diag).
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::HA;
use HookTest::Replica;
use HookTest::Downstream;

plan skip_all => 'heavy, and built with a sanitizer: the responder paths it reaches run under the sanitizers in 84' if HookTest::HA::sanitized();

my $secret = 'whsec_standby_test_7e3a91d0c4';
my ($t, $d) = HookTest::HA::setup(secret => $secret);
my $dir = $t->dir;
my $a = $t->pg;
my $b = HookTest::Replica::standby($a, "$dir/b");
HookTest::Replica::synchronous($a);
my $c = HookTest::Replica::empty_pg("$dir/c");   # not there yet: its socket refuses
my @hosts = ($a, $b, $c);
HookTest::HA::configure($t, intake => HookTest::Replica::conninfo('hookinbox_intake', @hosts),
	worker => HookTest::Replica::conninfo('hookinbox_worker', @hosts));
HookTest::HA::start_responders($t, 4);

sub phase {
	my ($tag, $break, $what) = @_;
	return HookTest::HA::failover(t => $t, d => $d, secret => $secret, tag => $tag, break => $break,
		what => $what);
}

# ---- 1: the primary's machine is lost; the standby is promoted by hand
phase('crash', sub {
	HookTest::Replica::crash($a);
	sleep 1;   # the operator's (or a script's) reaction
	HookTest::Replica::promote($b);
	return $b;
}, 'kill -9 of the primary, pg_ctl promote');
is($b->sql('select pg_is_in_recovery()'), 'f', 'B is the primary');

# ---- 2: the primary turns read-only; its standby is promoted
HookTest::Replica::standby($b, $c);
HookTest::Replica::synchronous($b);
phase('ro', sub {
	$b->sql('alter system set default_transaction_read_only = on');
	$b->sql('select pg_reload_conf()');
	ok(HookTest::Replica::caught_up($b, $c), 'C replayed everything B flushed');
	sleep 0.5;
	HookTest::Replica::promote($c);
	return $c;
}, 'primary turned read-only, standby promoted');
unlike($t->responder_log, qr/status=500/, 'no 500 in any phase');
like($t->responder_log, qr/read-only transaction/, 'the responders met the read-only primary (SQLSTATE 25006)');

done_testing();
