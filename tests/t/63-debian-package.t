# SPDX-License-Identifier: ISC
# The Debian package: make deb builds it (source and binary), lintian at
# every level (--pedantic -I -E) has nothing to say but what the overrides
# explain (debian/hookinbox.lintian-overrides, debian/source/), dpkg -i installs
# it (the hookinbox user, conffiles under /etc/hookinbox, nothing enabled or
# started), and the installed programs work from the installed layout with
# the shipped files against a test cluster: the schema from
# /usr/share/hookinbox/sql, the responder with the default configuration
# path (one CGI request), the worker as the hookinbox user from the shipped
# cron line (quiet when it goes well), the purge line as postgres.  dpkg -r
# and dpkg -P then remove everything the package installed.
#
# Root only (dpkg -i); skipped for a sanitizer build (nothing to learn there,
# and the suite runs three times in CI: this builds once).
use strict;
use warnings;
use Test::More;
use Fcntl qw(:flock);
use File::Temp qw(tempdir);
use HookTest qw(stripe_sig);
use Downstream;

my $top = HookTest::top();
plan skip_all => 'needs root (dpkg -i)' if $> != 0;
for my $p (qw(/usr/bin/dpkg-buildpackage /usr/bin/dh /usr/bin/lintian /usr/sbin/runuser)) {
	plan skip_all => "$p missing (tools/install-deps installs it)" unless -x $p;
}
{
	my $bin = HookTest::slurp("$top/obj/test/hookinbox-worker");
	plan skip_all => 'sanitizer build: the package is tested in the plain run'
		if index($bin, '__asan_init') >= 0 || index($bin, '__tsan_init') >= 0;
}

# one test at a time installs the package (t/64 too)
open my $lock, '>', '/tmp/hookinbox-dpkg-test.lock' or die $!;
flock $lock, LOCK_EX or die $!;

sub sh {
	my ($cmd) = @_;
	my $out = `$cmd 2>&1`;
	return ($? >> 8, $out);
}

# dpkg refuses to run while another dpkg or apt holds its lock: wait for it
sub dpkg {
	my (@args) = @_;
	my ($rc, $out);
	for (1 .. 60) {
		($rc, $out) = sh(join ' ', 'dpkg', @args);
		last unless $out =~ /dpkg frontend lock|lock-frontend|dpkg status database is locked/;
		sleep 2;
	}
	return ($rc, $out);
}

my $installed;
END { dpkg('-P', 'hookinbox') if $installed }
dpkg('-P', 'hookinbox'); # left over from an interrupted run

# ---- build (unless t/64 just built it from this very tree: no file is newer than the .deb)
my ($deb) = glob("$top/obj/deb/hookinbox_*_*.deb");
my ($rc, $out) = (0, 'up to date');
if (!$deb || `find $top -path $top/obj -prune -o -path $top/.git -prune -o -path $top/tests/tmp -prune -o -path $top/var -prune -o -type f -newer $deb -print -quit` ne '') {
	($rc, $out) = sh("make -s -C $top deb");
	($deb) = glob("$top/obj/deb/hookinbox_*_*.deb");
}
is($rc, 0, 'make deb builds the package') or diag $out;
ok($deb && -f $deb, 'the .deb: ' . ($deb // 'none'));
my @files = split /\n/, `dpkg-deb -c $deb`;
for my $f (qw(./usr/sbin/hookinbox.fcgi ./usr/sbin/hookinbox-worker ./usr/bin/hookinbox-send
	./usr/sbin/hookinbox-backfill ./usr/share/man/man8/hookinbox-backfill.8.gz
	./usr/share/man/man1/hookinbox-send.1.gz ./usr/share/man/man8/hookinbox.fcgi.8.gz
	./usr/share/man/man8/hookinbox-worker.8.gz ./usr/share/man/man5/hookinbox.conf.5.gz
	./usr/share/hookinbox/sql/install.sql ./usr/share/hookinbox/sql/purge.sql
	./etc/hookinbox/hookinbox.conf ./etc/cron.d/hookinbox ./lib/systemd/system/hookinbox-fcgi.socket
	./lib/systemd/system/hookinbox-worker.timer ./usr/share/doc/hookinbox/copyright
	./usr/share/doc/hookinbox/README.Debian ./usr/share/hookinbox/etc/apache/hookinbox-fcgid.conf)) {
	ok((grep { /\s\Q$f\E$/ } @files), "the package holds $f");
}

# ---- lintian on everything make deb built (the .changes lists the source
# package, the .deb, its dbgsym and the .buildinfo), at every display level:
# what it would say is overridden, each override with its reason
# (debian/hookinbox.lintian-overrides, debian/source/lintian-overrides)
my ($changes) = glob("$top/obj/deb/hookinbox_*_*.changes");
ok($changes && -f "$top/obj/deb/hookinbox_" . ($deb =~ /hookinbox_([^_]+)_/)[0] . '.dsc',
	'make deb builds the source package too');
($rc, $out) = sh("cd $top/obj/deb && lintian --pedantic --display-info --display-experimental --fail-on error,warning "
	. ($changes // $deb));
is($rc, 0, 'lintian: no error, no warning') or diag $out;
is(join("\n", grep { /^[EWIPX]: / } split /\n/, $out), '',
	'lintian --pedantic -I -E: nothing left to say (no info, pedantic or experimental tag either)') or diag $out;

# ---- install
($rc, $out) = dpkg('-i', $deb);
is($rc, 0, 'dpkg -i') or diag $out;
$installed = 1;
ok(defined getpwnam('hookinbox'), 'the hookinbox system user exists');
my $conffiles = `dpkg-query -W -f='\${Conffiles}' hookinbox`;
like($conffiles, qr{^ /etc/hookinbox/hookinbox\.conf [0-9a-f]{32}$}m, 'the configuration is a conffile');
like($conffiles, qr{^ /etc/cron\.d/hookinbox [0-9a-f]{32}$}m, 'the cron file is a conffile');
unlike(HookTest::slurp('/etc/cron.d/hookinbox'), qr/^[*0-9]/m, 'the cron jobs ship commented out');
is(join(' ', glob('/etc/systemd/system/*.wants/hookinbox*')), '', 'no unit enabled');
($rc, $out) = sh('/usr/sbin/hookinbox.fcgi --version');
like($out, qr/^hookinbox\.fcgi \d/, 'the installed responder runs');

# ---- a test cluster with the installed schema
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my $pg = HookTest::Pg->new(dir => $dir)->init->start;
$pg->psql_raw('postgres', 'postgres', 'create database hookinbox');
($rc, $out) = sh(join ' ', "$pg->{bin}/psql", '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $pg->{sock}, '-p',
	$pg->{port}, '-U', 'postgres', '-d', 'hookinbox', '-f', '/usr/share/hookinbox/sql/install.sql');
is($rc, 0, 'the installed install.sql installs the schema') or diag $out;

# the shipped configuration, as an administrator edits it: the test
# cluster's socket and port, the downstream's URL, an endpoint secret
my $d = Downstream->new(dir => $dir);
my $conf = HookTest::slurp('/etc/hookinbox/hookinbox.conf');
my $n = ($conf =~ s{host=/run/postgresql dbname=hookinbox}{host=$pg->{sock} port=$pg->{port} dbname=hookinbox}g);
is($n, 2, 'the shipped configuration names two conninfos: the responder\'s and the worker\'s');
$conf =~ s{https://fulfil\.example/api/hooks}{@{[ $d->url('/hooks') ]}} or die;
open my $fh, '>', '/etc/hookinbox/hookinbox.conf' or die $!;
print $fh $conf;
close $fh;
my $secret = 'whsec_debian_package_0123456789';
HookTest::record_secret($secret);
open $fh, '>', '/etc/hookinbox/secrets/stripe-live' or die $!;
print $fh "$secret\n";
close $fh;
chown 0, scalar getgrnam('hookinbox'), '/etc/hookinbox/secrets/stripe-live';
chmod 0640, '/etc/hookinbox/secrets/stripe-live';

($rc, $out) = sh('/usr/sbin/hookinbox.fcgi --check --connect');
is($rc, 0, 'hookinbox.fcgi --check --connect with the default configuration path') or diag $out;
like($out, qr{^/etc/hookinbox/hookinbox\.conf: ok .*connected as "hookinbox_intake"}, 'as hookinbox_intake');
($rc, $out) = sh('runuser -u hookinbox -- /usr/sbin/hookinbox-worker --check --connect');
is($rc, 0, 'hookinbox-worker --check --connect as the hookinbox user') or diag $out;
like($out, qr/connected as "hookinbox_worker"/, 'as hookinbox_worker');

# one delivery through the installed responder (plain CGI, the web server's part done here)
my $body = '{"id":"evt_deb_1","type":"invoice.paid","created":1,"data":{"object":{"id":"in_1"}}}';
{
	local %ENV = (%ENV, GATEWAY_INTERFACE => 'CGI/1.1', REQUEST_METHOD => 'POST',
		REQUEST_URI => '/hooks/stripe-live', CONTENT_TYPE => 'application/json', CONTENT_LENGTH => length $body,
		HTTP_STRIPE_SIGNATURE => stripe_sig($secret, $body));
	open my $in, '>', "$dir/body" or die $!;
	print $in $body;
	close $in;
	($rc, $out) = sh("/usr/sbin/hookinbox.fcgi < $dir/body");
}
like($out, qr/^Status: 200/m, 'the installed responder accepts a signed delivery') or diag $out;
is($pg->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_deb_1'}), 1, 'and stores it');

# the worker, from the shipped cron line (uncommented), as cron runs it
my ($line) = HookTest::slurp('/etc/cron.d/hookinbox') =~ /^#\* \* \* \* \*\thookinbox\t(.*)$/m;
like($line // '', qr{^/usr/sbin/hookinbox-worker }, 'the cron line runs the installed worker');
($rc, $out) = sh("cd / && runuser -u hookinbox -- sh -c '$line'");
is($rc, 0, 'the cron line: exit 0') or diag $out;
is($out, '', 'and prints nothing (cron mails nothing)');
is($pg->sql(q{select a.state from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id
	where i.event_id = 'evt_deb_1'}), 'done', 'the event is delivered');
is(scalar(grep { ($_->{event_id} // '') eq 'evt_deb_1' } $d->requests), 1, 'once, downstream');

# the purge line, as postgres (PGHOST and PGPORT point psql at the test cluster)
my ($purge) = HookTest::slurp('/etc/cron.d/hookinbox') =~ /^#17 3 \* \* \*\tpostgres\t(.*)$/m;
like($purge // '', qr{-f /usr/share/hookinbox/sql/purge\.sql}, 'the purge line runs the installed script');
($rc, $out) = sh("cd / && runuser -u postgres -- env PGHOST=$pg->{sock} PGPORT=$pg->{port} sh -c \"$purge\"");
is($rc, 0, 'the purge line: exit 0') or diag $out;
is($out, '', 'and prints nothing');
$pg->stop;

# ---- remove, purge
unlink '/etc/hookinbox/secrets/stripe-live'; # the administrator's file, not the package's
($rc, $out) = dpkg('-r', 'hookinbox');
is($rc, 0, 'dpkg -r') or diag $out;
ok(!-e '/usr/sbin/hookinbox.fcgi' && !-e '/usr/share/hookinbox', 'programs and data removed');
ok(-e '/etc/hookinbox/hookinbox.conf', 'the configuration kept');
($rc, $out) = dpkg('-P', 'hookinbox');
is($rc, 0, 'dpkg -P') or diag $out;
unlike($out, qr/warning/i, 'purged without a warning') or diag $out;
$installed = 0;
ok(!-e '/etc/hookinbox' && !-e '/etc/cron.d/hookinbox', '/etc/hookinbox and the cron file purged');
is(join(' ', glob('/lib/systemd/system/hookinbox*')), '', 'the units removed');
is(`dpkg-query -W -f='\${Status}' hookinbox 2>/dev/null`, '', 'dpkg knows no hookinbox any more');
done_testing();
