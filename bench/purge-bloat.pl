#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# Retention by DELETE: how fast the purge goes and what the inbox weighs
# once it runs every day.  Not part of make check.
#
#   HOOKINBOX_TOP=$PWD perl -I tests/lib bench/purge-bloat.pl [events_per_day] [days] [body_bytes]
#
# Simulates DAYS days of EVENTS_PER_DAY events (BODY_BYTES each, one done
# action each) with payload_days 2 and dedup_days 4: day k is stored as
# received k days before the end, and after each day the purge runs with
# its horizons moved back to that day, then VACUUM (what autovacuum does
# within a minute of a nightly purge).  Prints, per day, the purge's rows/s
# and the sizes of the inbox (heap, TOAST, indexes) and action tables next
# to the live rows, so that bloat shows as size that outgrows live data.
use strict;
use warnings;
use Time::HiRes qw(time);
use HookTest;

my ($PER_DAY, $DAYS, $BODY) = (@ARGV, 40000, 8, 1024)[0 .. 2];
my ($PAYLOAD, $DEDUP) = (2, 4);
my $t = HookTest->new(endpoints => { shop => { provider => 'stripe' } }, no_lighttpd => 1,
	pg => { fsync => 'off' });
my $pad = 'x' x ($BODY - 40);

sub size {
	my ($rel) = @_;
	return $t->sql("select pg_total_relation_size('$rel') / 1048576.0")
}

printf "%d events/day x %d days, %d-byte bodies, payload_days %d, dedup_days %d\n",
	$PER_DAY, $DAYS, $BODY, $PAYLOAD, $DEDUP;
printf "%-4s %9s %9s %10s %10s %10s %10s %9s\n", 'day', 'deleted', 'stripped', 'purge r/s',
	'inbox MB', 'action MB', 'live rows', 'live MB';
for my $k (0 .. $DAYS - 1) {
	my $age = $DAYS - $k - 1;   # days before the end
	$t->sql("select count(*) from generate_series(1, $PER_DAY) g, lateral hookinbox.accept('shop', 'stripe', "
		. "'shop', 'default', 'd${k}_' || g, 'invoice.paid', null, null, '{\"Content-Type\":\"application/json\"}', "
		. "convert_to('{\"id\":\"d${k}_' || g || '\",\"pad\":\"$pad\"}', 'UTF8'), false)");
	$t->sql("update hookinbox.inbox set received_at = now() - interval '$age days' - interval '1 hour', "
		. "state = 'dispatched', dispatched_at = now() where state = 'pending'");
	$t->sql("insert into hookinbox.action (inbox_id, route, idem_key, state, max_attempts, attempts, done_at) "
		. "select i.id, 'r', 'k' || i.id, 'done', 5, 1, now() from hookinbox.inbox i "
		. "where not exists (select 1 from hookinbox.action a where a.inbox_id = i.id)");
	my $t0 = time();
	my $r = $t->sql("call hookinbox.purge(" . ($PAYLOAD + $age) . ", " . ($DEDUP + $age) . ", 5000)");
	my $dt = time() - $t0;
	my (undef, $deleted, $acts, undef, undef) = split /\|/, $r;
	my ($stripped) = split /\|/, $r;
	$t->sql('vacuum hookinbox.inbox');
	$t->sql('vacuum hookinbox.action');
	my $live = $t->sql('select count(*) from hookinbox.inbox');
	my $live_mb = $t->sql("select (sum(pg_column_size(i.*)) / 1048576.0)::numeric(10,1) from hookinbox.inbox i");
	printf "%-4d %9d %9d %10.0f %10.1f %10.1f %10d %9s\n", $k, $deleted, $stripped,
		($deleted + $stripped) / ($dt || 1e-6), size('hookinbox.inbox'), size('hookinbox.action'), $live, $live_mb;
}
