# SPDX-License-Identifier: ISC
# order = sequence across a rolling route change.  Route s (order =
# sequence) exists only in the new configuration.  Version 1 of an object
# is fanned out by the old host (it has no route s: recorded for the
# top-up); version 2 by the new host.  While version 1 is not yet topped up
# (here: its record is locked, as by another worker's top-up in progress),
# version 2 waits; then version 1 reaches the downstream first and nothing
# is held for review as "too late".
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $d = HookTest::Downstream->new(dir => File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my ($t, $conf_new, $conf_old) = HookTest::Worker::two_hosts(lacking => 's', routes => {
	a => { endpoint => 'shop', events => '*', url => $d->url('/a'), timeout => 2 },
	s => { endpoint => 'shop', events => 'o.*', url => $d->url('/s'), timeout => 2, order => 'sequence' },
}, worker => { lease => 10 });

HookTest::Worker::run_once($conf_new, '--max-runtime', 8); # registers route s
HookTest::Worker::accept($t, event_id => 'v1', type => 'o.updated', object_id => 'obj', version => 1);
my ($rc, $out) = HookTest::Worker::run_once($conf_old, '--max-runtime', 8);
is($t->sql("select count(*) from hookinbox.route_topup"), 1, 'old host: version 1 fanned out, recorded');
HookTest::Worker::accept($t, event_id => 'v2', type => 'o.updated', object_id => 'obj', version => 2);

# another worker's top-up holds version 1's record for 3 s
my $pid = fork // die "fork: $!";
if ($pid == 0) {
	$t->sql("begin; select 1 from hookinbox.route_topup for update; "
		. "select pg_sleep(3); commit;");
	POSIX::_exit(0);
}
sleep 0.5;
($rc, $out) = HookTest::Worker::run_once($conf_new, '--max-runtime', 8);
waitpid $pid, 0;
($rc, $out) = HookTest::Worker::run_once($conf_new, '--max-runtime', 8) if $t->sql("select count(*) from hookinbox.action where route = 's' and state = 'pending'") > 0;
my @s = map { $_->{event_id} } grep { $_->{path} eq '/s' && $_->{effect} } $d->requests;
is_deeply(\@s, [qw(v1 v2)], 'route s: version 1, then version 2') or diag $out;
is($t->sql("select count(*) from hookinbox.action where state = 'review'"), 0, 'nothing held for review as too late');
is($t->sql("select string_agg(state, ',' order by event_version) from hookinbox.action where route = 's'"),
	'done,done', 'both done');

done_testing;
