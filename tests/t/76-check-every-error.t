# SPDX-License-Identifier: ISC
# What an administrator reads from the programs' own lines:
#   - --check of a file with several mistakes names every one, each as
#     file:line: message on its own line, and exits 78, for the responder,
#     the worker and the backfill alike; a good file still says ok;
#   - every text-format error, warning and info line starts with its time
#     (UTC, RFC 3339), as a web server's error log or cron's mail add none.
use strict;
use warnings;
use Test::More;
use HookTest;
use File::Temp qw(tempdir);

my $top = HookTest::top();
my $dir = tempdir('check-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my %bin = (responder => "$top/obj/test/hookinbox.fcgi", worker => "$top/obj/test/hookinbox-worker",
	backfill => "$top/obj/test/hookinbox-backfill");
my $ts = qr/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/;

sub write_file { my ($name, @rest) = @_; return HookTest::write_file("$dir/$name", @rest) }

write_file('stripe', "whsec_check_0123456789\n");
my $bad = write_file('bad.conf', <<'INI');
[database]
conninfo = dbname=hookinbox
[intake]
threads = 0
max_body = lots
this line is not a key
[endpoint shop]
provider = stripe
secret_file = stripe
[endpoint other]
provider = stripe
secret_file = missing
[route r]
endpoint = shop
INI
my %want = (
	responder => [4, 5, 6, 10, 13],
	worker => [4, 5, 6, 13],
	backfill => [4, 5, 6, 13],
);
for my $prog (sort keys %bin) {
	# the backfill has no --check: it checks the file before it starts
	my @args = $prog eq 'backfill' ? ('--endpoint', 'shop', '--since', '2026-01-01T00:00:00Z', '--credential', "$dir/stripe") : ('--check');
	my ($rc, $out) = HookTest::run_status($bin{$prog}, '-c', $bad, @args);
	is($rc, 78, "$prog: a bad file exits 78");
	my @lines = split /\n/, $out;
	my @at = map { /\Q$bad\E:(\d+): / ? $1 : () } @lines;
	is("@at", "@{ $want{$prog} }", "$prog: every problem reported, each with its line (@at)") or diag $out;
	is(scalar(grep { !/^$ts \S+: error: / } @lines), 0, "$prog: each on its own line, starting with the time") or diag $out;
}

my $good = write_file('good.conf', "[database]\nconninfo = dbname=hookinbox\n[endpoint shop]\nprovider = stripe\nsecret_file = stripe\n");
my ($rc, $out) = HookTest::run_status($bin{responder}, '--check', '-c', $good);
is($rc, 0, 'a good file: exit 0');
like($out, qr/ok \(1 endpoints/, 'and says ok');

# an info line (the worker's -v) and a warning carry the time too
($rc, $out) = HookTest::run_status($bin{worker}, '-c', $good, '--once', '-v');
ok($out ne '', 'the worker says something with the database away') or diag $out;
my @untimed = grep { !/^$ts / && !/^ts=$ts / } split /\n/, $out;
is(scalar(@untimed), 0, 'every line of the worker starts with its time') or diag $out;
done_testing();
