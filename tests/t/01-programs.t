# SPDX-License-Identifier: ISC
# Each program: --help and --version succeed, bad options fail with usage,
# and a broken configuration stops it at start with file:line.  Each program
# reads only its own secret files and its own conninfo; the responder run by
# hand says how it is meant to be run.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use HookTest;

my $top = HookTest::top();
my $dir = tempdir(CLEANUP => 1);

for my $prog ("$top/fcgi/hookinbox.fcgi", "$top/worker/hookinbox-worker", "$top/backfill/hookinbox-backfill",
	"$top/contrib/hookinbox-send") {
	my $name = $prog =~ s{.*/}{}r;
	my ($rc, $out) = HookTest::run_status($prog, '--help');
	is($rc, 0, "$name --help exits 0");
	like($out, qr/Usage/i, "$name --help prints usage");
	($rc, $out) = HookTest::run_status($prog, '--version');
	is($rc, 0, "$name --version exits 0");
	like($out, qr/\d+\.\d+/, "$name --version prints a version");
	($rc, $out) = HookTest::run_status($prog, '--no-such-option');
	is($rc, 64, "$name with a bad option exits 64");
	like($out, qr/Usage|--help/i, "$name with a bad option points to the usage");
}

sub write_file { my ($name, @rest) = @_; return HookTest::write_file("$dir/$name", @rest) }

write_file('secret', "s3cr3t-value-1\n");
write_file('open-secret', "s3cr3t-value-2\n", 0644);
my $base = "[database]\nconninfo = dbname=x\n";
my $route = "[endpoint a]\nprovider = stripe\nsecret_file = secret\n[route r]\nendpoint = a\nurl = http://x/\n";
# (configuration after $base, line, message, programs that must refuse it:
# both unless one is named; the responder reads only the endpoints' secret
# files, the worker only the routes')
my @bad = (
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\nfoo = 1\n", 6, qr/unknown key "foo"/],
	["[endpoint a]\nprovider = nosuch\nsecret_file = secret\n", 4, qr/unknown provider/],
	["[endpoint a]\nprovider = square\nsecret_file = secret\n", 3,
		qr/endpoint "a": provider square needs public_url \(the notification URL Square signs\)/],
	["[endpoint a]\nprovider = stripe\n", 3, qr/no secret_file/],
	["[endpoint a]\nprovider = stripe\nsecret_file = open-secret\n", 3, qr/group or world access/, 'hookinbox.fcgi'],
	["[endpoint a]\nprovider = stripe\nsecret_file = missing\n", 3, qr/could not open secret file/, 'hookinbox.fcgi'],
	["${route}secret_file = missing\n", 6, qr/could not open secret file/, 'hookinbox-worker'],
	["${route}secret_file = open-secret\n", 6, qr/group or world access/, 'hookinbox-worker'],
	# a section defined twice, a key given twice: not merged, not overwritten
	["[intake]\nthreads = 2\n[endpoint a]\nprovider = stripe\nsecret_file = secret\n[intake]\nmax_body = 10\n", 8,
		qr/section \[intake\] is defined twice \(first at line 3\)/],
	["[endpoint a]\nprovider = stripe\n[endpoint a]\nsecret_file = secret\n", 5,
		qr/section \[endpoint a\] is defined twice \(first at line 3\)/],
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\nprovider = github\n", 6,
		qr/key "provider" is given twice in \[endpoint a\] \(first at line 4\)/],
	["conninfo = dbname=y\n", 3, qr/key "conninfo" is given twice in \[database\] \(first at line 2\)/],
	# a conninfo libpq cannot parse, refused at start (and so at reload), never echoed
	["[worker]\nconninfo = host=/run s3cr3t-password\n", 4, qr/\[worker\] conninfo cannot be parsed by libpq/],
	["[intake]\nmax_body = 12x\n", 4, qr/max_body must be/],
	["[nonsense]\n", 3, qr/unknown section/],
	["this is not ini\n", 3, qr/syntax error/],
	["[endpoint a/b]\nprovider = stripe\n", 3, qr/may hold only/],
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\n[route r]\nendpoint = b\nurl = http://x/\n", 6,
		qr/unknown endpoint "b"/],
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\n[route r]\nendpoint = a\nurl = ftp://x/\n", 8,
		qr/url must start/],
);
my $i = 0;
for my $case (@bad) {
	my ($body, $line, $re, $only) = @$case;
	my $conf = write_file('bad' . ++$i . '.conf', $base . $body);
	for my $prog ("$top/fcgi/hookinbox.fcgi", "$top/worker/hookinbox-worker") {
		my $name = $prog =~ s{.*/}{}r;
		if ($only && $only ne $name) {
			my ($rc, $out) = HookTest::run_status($prog, '-c', $conf, '--check');
			is($rc, 0, "$name: config $i holds nothing $name reads: --check exits 0") or diag $out;
			next;
		}
		# the responder checks and exits; the worker stops at start, before any database work
		my ($rc, $out) = HookTest::run_status($prog, '-c', $conf, $name eq 'hookinbox.fcgi' ? '--check' : '--once');
		is($rc, 78, "$name: bad config $i exits 78");
		like($out, qr/\Q$conf\E:$line: /, "$name: bad config $i names $conf:$line");
		like($out, $re, "$name: bad config $i says what is wrong");
		unlike($out, qr/s3cr3t/, "$name: bad config $i does not echo a secret");
	}
}
{
	local $ENV{HOOKINBOX_CONFIG} = "$dir/nonexistent.conf";
	my ($rc, $out) = HookTest::run_status("$top/fcgi/hookinbox.fcgi", '--check');
	is($rc, 78, 'missing config (from $HOOKINBOX_CONFIG): exits 78');
	like($out, qr/nonexistent\.conf: could not open/, 'missing config: names the file');
}
{
	my $conf = write_file('badconninfo.conf', "[database]\nconninfo = host=/run 's3cr3t\n[endpoint a]\nprovider = stripe\nsecret_file = secret\n");
	my ($rc, $out) = HookTest::run_status("$top/fcgi/hookinbox.fcgi", '-c', $conf, '--check');
	is($rc, 78, 'unparsable [database] conninfo: --check exits 78');
	like($out, qr/\Q$conf\E:2: \[database\] conninfo cannot be parsed by libpq/, 'and names file and line');
	unlike($out, qr/s3cr3t/, 'without echoing the string');
}
my $good = write_file('good.conf', $base . "[endpoint a]\nprovider = stripe\nsecret_file = secret\n");
my ($rc, $out) = HookTest::run_status("$top/fcgi/hookinbox.fcgi", '-c', $good, '--check');
is($rc, 0, 'good config: --check exits 0');
($rc, $out) = HookTest::run_status("$top/worker/hookinbox-worker", '-c', $good, '--check');
is($rc, 0, 'good config: worker --check exits 0');
like($out, qr/ok \(0 routes; connects with \[database\] conninfo\)/, 'worker --check: which conninfo it uses');
my $two = write_file('two.conf', $base . "[worker]\nconninfo = dbname=x user=hookinbox_worker\n$route");
($rc, $out) = HookTest::run_status("$top/worker/hookinbox-worker", '-c', $two, '--check');
like($out, qr/ok \(1 routes; connects with \[worker\] conninfo\)/, 'worker --check: [worker] conninfo');
for my $args (['--check', '--once'], ['--connect'], ['--check', '--loop']) {
	($rc, $out) = HookTest::run_status("$top/worker/hookinbox-worker", '-c', $good, @$args);
	is($rc, 64, "worker @$args: usage error");
}
($rc, $out) = HookTest::run_status("$top/fcgi/hookinbox.fcgi", '-c', $good, '--connect');
is($rc, 64, 'responder --connect without --check: usage error');

# by hand, from a shell: stdin no socket, no CGI environment
{
	local $ENV{GATEWAY_INTERFACE};
	delete $ENV{GATEWAY_INTERFACE};
	($rc, $out) = HookTest::run_status("$top/fcgi/hookinbox.fcgi", '-c', $good);
	is($rc, 64, 'the responder run by hand exits 64');
	like($out, qr/not started by a web server: .*--check/, 'and says how it is meant to be run');
	unlike($out, qr/Status:/, 'instead of answering a request');
}
done_testing();
