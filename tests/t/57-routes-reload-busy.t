# SPDX-License-Identifier: ISC
# SIGHUP of a busy --loop worker: with a backlog the reload is not put off
# until the worker is idle.  A route's url changes under a backlog of slow
# calls: after the SIGHUP, the worker claims nothing more on the old
# configuration, the calls in flight finish (and are recorded), and every
# later call goes to the new url; every event has exactly one effect.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::Downstream;
use HookTest::Worker;

my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd, plan => { '/old' => 'sleep 0.2 200', '/new' => 'sleep 0.2 200' });
my $t = HookTest::Worker::setup(routes => {
	r => { endpoint => 'shop', events => 'r.*', url => $d->url('/old'), timeout => 3 },
}, worker => { lease => 20, concurrency => 2 });

sub calls { my ($path) = @_; return scalar(grep { $_->{path} eq $path } $d->requests) }

HookTest::Worker::accept_many($t, 80, prefix => 'rb', type => 'r.x');
my ($pid, $log) = HookTest::Worker::worker_bg($t, '--loop');
my $until = time() + 30;
sleep 0.1 while time() < $until && calls('/old') < 6;
ok(calls('/old') >= 6, 'the backlog is being worked on the old url');

# change the url in place, then SIGHUP
my $conf = $t->config;
open my $in, '<', $conf or die $!;
my $text = do { local $/; <$in> };
close $in;
$text =~ s{/old\b}{/new}g or die 'no url to change';
open my $out, '>', "$conf.tmp" or die $!;
print $out $text;
close $out;
rename "$conf.tmp", $conf or die $!;
my $at_hup = calls('/old');
kill 'HUP', $pid;

$until = time() + 60;
sleep 0.2 while time() < $until && $t->sql("select count(*) from hookinbox.action where route = 'r' and state <> 'done'") > 0;
kill 'TERM', $pid;
waitpid $pid, 0;
my $logtext = HookTest::slurp($log);

my $old_after = calls('/old') - $at_hup;
like($logtext, qr/event=reload/, 'the busy worker reloaded');
cmp_ok($old_after, '<=', 2, "after the SIGHUP at most the calls in flight went to the old url ($old_after)");
cmp_ok(calls('/new'), '>=', 60, 'the rest of the backlog went to the new url (' . calls('/new') . ' calls)');
is($t->sql("select count(*) from hookinbox.action where route = 'r' and state = 'done'"), 80, 'every event delivered');
my %eff = $d->effects;
my @keys = split /\n/, $t->sql("select idem_key from hookinbox.action where route = 'r'");
is(scalar(grep { ($eff{$_} // 0) == 1 } @keys), 80, 'exactly one effect each');
my @req = sort { $a->{t} <=> $b->{t} } $d->requests;
my ($first_new) = grep { $req[$_]{path} eq '/new' } 0 .. $#req;
is(scalar(grep { $req[$_]{path} eq '/old' } ($first_new // 0) .. $#req), 0,
	'no call to the old url once the new one was used');

done_testing;
