# SPDX-License-Identifier: ISC
# HTTP routes and SQL-handler routes in one run: while calls are in flight
# the worker runs handler transactions and sweep statements; every action is
# carried out once, logged once and recorded once.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/slow' => 'sleep 0.05 200' });
my $t = HookTest::Worker::setup(routes => {
	remote => { endpoint => 'shop', events => 'invoice.*', url => $d->url('/slow'), timeout => 3 },
	local => { endpoint => 'shop', events => 'invoice.*', handler => 'sql:app.apply', timeout => 3 },
}, worker => { concurrency => 8, batch => 20 });
$t->sql($HookTest::Worker::APPLY_SQL);
HookTest::Worker::accept_many($t, 120, prefix => 'mix');
my ($rc, $log) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'one run exits 0') or diag $log;

my %calls;
$calls{$1}++ while $log =~ /event=call route=\w+ action=(\d+) /g;
is(scalar(keys %calls), 240, 'every action called');
is(scalar(grep { $_ != 1 } values %calls), 0, 'each logged exactly once');
like($log, qr/event=summary .*sent=240 done=240 /, 'summary: 240 sent, 240 done');
is($t->sql(q{select count(*) from hookinbox.action where state = 'done'}), 240, 'all recorded done');
is($t->sql('select count(*) from app.applied'), 120, 'handler applied each event once');
my %eff = $d->effects;
is(scalar(grep { $_ } values %eff), 120, 'downstream: one effect per event');
is(scalar(grep { !$_->{replay} } $d->requests), 120, 'downstream: no repeated call');
done_testing();
