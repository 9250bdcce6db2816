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
# The lifecycle around it: the package is installed first as the previous
# release (0.1.0, built from its commit) and upgraded to this one; every
# program says the version of debian/changelog; upgrades keep the units
# running (no stop in preinst, try-restart after).  Before removal the
# administrator's additions of docs/install.md are in place (cron lines
# enabled, the mod_proxy_fcgi snippet enabled in Apache, the textfile directory's
# statoverride, a metrics file); after dpkg -r the kept cron lines run
# quietly, Apache's configuration tests good and the metrics file is gone;
# after dpkg -P and deluser, dpkg -i of an unrelated package works.
#
# Root only (dpkg -i); skipped for a sanitizer build (nothing to learn there,
# and the suite runs three times in CI: this builds once).
use strict;
use warnings;
use Test::More;
use Fcntl qw(:flock);
use File::Temp qw(tempdir);
use HookTest qw(stripe_sig);
use HookTest::Downstream;

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
	./usr/share/doc/hookinbox/README.Debian ./usr/share/hookinbox/etc/apache/hookinbox-proxy-fcgi.conf)) {
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

# ---- versions: one source of truth, debian/changelog
my ($version) = HookTest::slurp("$top/debian/changelog") =~ /^hookinbox \(([^)]+)\)/;
like($deb, qr{/hookinbox_\Q$version\E_[^/]+\.deb$}, "the package is version $version (debian/changelog)");
{
	my $tmp = tempdir(CLEANUP => 1);
	system('dpkg-deb', '-x', $deb, $tmp) == 0 or die;
	for my $p (qw(usr/sbin/hookinbox.fcgi usr/sbin/hookinbox-worker usr/sbin/hookinbox-backfill usr/bin/hookinbox-send)) {
		my ($name) = $p =~ m{([^/]+)$};
		is(`$tmp/$p --version`, "$name $version\n", "$name --version says $version");
	}
	for my $ua ("hookinbox-worker/$version", "hookinbox-send/$version", "hookinbox-backfill/$version") {
		my ($prog) = $ua =~ m{^([^/]+)};
		my $where = $prog eq 'hookinbox-send' ? 'usr/bin' : 'usr/sbin';
		ok(index(HookTest::slurp("$tmp/$where/$prog"), $ua) >= 0, "${prog}\'s User-Agent: $ua");
	}
	like(`zcat $tmp/usr/share/man/man8/hookinbox-worker.8.gz | head -1`, qr/"hookinbox \Q$version\E"/,
		"the man pages say $version");
}

# ---- maintainer scripts: an upgrade keeps what runs running
{
	my $tmp = tempdir(CLEANUP => 1);
	system('dpkg-deb', '-e', $deb, $tmp) == 0 or die;
	my $pre = -e "$tmp/preinst" ? HookTest::slurp("$tmp/preinst") : '';
	unlike($pre, qr/deb-systemd-invoke stop/, 'preinst stops no unit before an upgrade');
	like(HookTest::slurp("$tmp/postinst"), qr/if \[ -n "\$2" \]; then\s+deb-systemd-invoke try-restart [^\n]*'hookinbox-fcgi\.socket'[^\n]*'hookinbox-worker\.timer'/,
		'postinst restarts the running units on the new programs after an upgrade');
	my $prerm = -e "$tmp/prerm" ? HookTest::slurp("$tmp/prerm") : '';
	unlike($prerm, qr/"\$1" = upgrade|stop[^\n]*upgrade/, 'prerm stops nothing on upgrade');
}

# ---- install the previous release, then upgrade to this one
my $prev_commit = '7d33c27659c009f5e3721c7f5ba02d3573b19e58'; # 0.1.0
my ($prev) = glob("$top/obj/deb-prev/hookinbox_0.1.0_*.deb");
if (!$prev) {
	($rc, $out) = sh("rm -rf $top/obj/deb-prev && mkdir -p $top/obj/deb-prev/hookinbox-0.1.0 && "
		. "git -C $top archive $prev_commit | tar -x -C $top/obj/deb-prev/hookinbox-0.1.0 && "
		. "cd $top/obj/deb-prev/hookinbox-0.1.0 && dpkg-buildpackage -us -uc -b");
	($prev) = glob("$top/obj/deb-prev/hookinbox_0.1.0_*.deb");
	ok($prev, 'the previous release built from its commit') or diag $out;
}
SKIP: {
	skip 'no previous release to upgrade from', 3 unless $prev;
	($rc, $out) = dpkg('-i', $prev);
	is($rc, 0, 'dpkg -i of the previous release (0.1.0)') or diag $out;
	$installed = 1;
	is(`/usr/sbin/hookinbox-worker --version`, "hookinbox-worker 0.1.0\n", 'the previous release says 0.1.0');
	is(sprintf('%04o', (stat '/etc/hookinbox/secrets')[2] & 07777), '0755', 'its secrets directory was 0755');
}

# ---- install (an upgrade from the previous release)
($rc, $out) = dpkg('-i', $deb);
is($rc, 0, 'dpkg -i') or diag $out;
$installed = 1;
is(`/usr/sbin/hookinbox-worker --version`, "hookinbox-worker $version\n", "the upgraded worker says $version");
is(sprintf('%04o', (stat '/etc/hookinbox/secrets')[2] & 07777), '0711', 'the upgrade makes /etc/hookinbox/secrets 0711');
ok(defined getpwnam('hookinbox'), 'the hookinbox system user exists');
ok(defined getpwnam('hookinbox-intake'), 'and the responder\'s own, hookinbox-intake');
like(HookTest::slurp('/lib/systemd/system/hookinbox-fcgi.service'), qr/^User=hookinbox-intake$/m,
	'the responder\'s unit runs it as hookinbox-intake');
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
my $d = HookTest::Downstream->new(dir => $dir);
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
like($line // '', qr{^test -x /usr/sbin/hookinbox-worker && /usr/sbin/hookinbox-worker }, 'the cron line runs the installed worker, if installed');
($rc, $out) = sh("cd / && runuser -u hookinbox -- sh -c '$line'");
is($rc, 0, 'the cron line: exit 0') or diag $out;
is($out, '', 'and prints nothing (cron mails nothing)');
is($pg->sql(q{select a.state from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id
	where i.event_id = 'evt_deb_1'}), 'done', 'the event is delivered');
is(scalar(grep { ($_->{event_id} // '') eq 'evt_deb_1' } $d->requests), 1, 'once, downstream');
{
	my $m = "$dir/metrics";
	mkdir $m or die $!;
	chown scalar getpwnam('hookinbox'), 0, $m;
	($rc, $out) = sh("cd / && runuser -u hookinbox -- /usr/sbin/hookinbox-worker --once --metrics-file $m/hookinbox.prom");
	like(HookTest::slurp("$m/hookinbox.prom"), qr/^hookinbox_build_info\{program="hookinbox-worker",version="\Q$version\E"\} 1$/m,
		"the worker's metrics say $version") or diag $out;
}

# the purge line, as postgres (PGHOST and PGPORT point psql at the test cluster)
my ($purge) = HookTest::slurp('/etc/cron.d/hookinbox') =~ /^#17 3 \* \* \*\tpostgres\t(.*)$/m;
like($purge // '', qr{-f /usr/share/hookinbox/sql/purge\.sql}, 'the purge line runs the installed script');
($rc, $out) = sh("cd / && runuser -u postgres -- env PGHOST=$pg->{sock} PGPORT=$pg->{port} sh -c \"$purge\"");
is($rc, 0, 'the purge line: exit 0') or diag $out;
is($out, '', 'and prints nothing');
$pg->stop;

# ---- what docs/install.md has the administrator add: cron lines enabled,
# the mod_proxy_fcgi snippet in Apache, node_exporter's directory writable by
# the hookinbox group (a statoverride), the worker's metrics file
my $apache = -x '/usr/sbin/apache2ctl' && -e '/usr/lib/apache2/modules/mod_proxy_fcgi.so';
my $proxy_fcgi_was_on = -e '/etc/apache2/mods-enabled/proxy_fcgi.load';
my $nodeexp = '/var/lib/prometheus/node-exporter';
my $nodeexp_existed = -d $nodeexp;
my @nodeexp_stat = stat $nodeexp;
my $nodeexp_override = `dpkg-statoverride --list $nodeexp`;
END {
	local $?;
	if ($apache) {
		sh('a2disconf -q hookinbox; rm -f /etc/apache2/conf-available/hookinbox.conf');
		sh('a2dismod -q proxy_fcgi') unless $proxy_fcgi_was_on;
	}
	sh("dpkg-statoverride --remove $nodeexp") if $nodeexp_override eq '' && `dpkg-statoverride --list $nodeexp` ne '';
	if ($nodeexp_existed) {
		unlink "$nodeexp/hookinbox.prom", "$nodeexp/hookinbox.prom.lock";
		chown $nodeexp_stat[4], $nodeexp_stat[5], $nodeexp;
		chmod $nodeexp_stat[2] & 07777, $nodeexp;
	} elsif (-d $nodeexp) {
		sh("rm -rf $nodeexp");
	}
}
{
	my $cron = HookTest::slurp('/etc/cron.d/hookinbox');
	$cron =~ s/^#([*0-9])/$1/mg;
	open my $c, '>', '/etc/cron.d/hookinbox' or die $!;
	print $c $cron;
	close $c;
}
sh("install -d $nodeexp");
($rc, $out) = sh("dpkg-statoverride --list $nodeexp >/dev/null || dpkg-statoverride --update --add root hookinbox 0775 $nodeexp");
is($rc, 0, 'the statoverride of docs/install.md step 7') or diag $out;
open $fh, '>', "$nodeexp/hookinbox.prom" or die $!;
print $fh "hookinbox_worker_last_run_timestamp_seconds 1\n";
close $fh;
open $fh, '>', "$nodeexp/hookinbox.prom.lock" or die $!;
close $fh;
if ($apache) {
	($rc, $out) = sh('cp /usr/share/hookinbox/etc/apache/hookinbox-proxy-fcgi.conf /etc/apache2/conf-available/hookinbox.conf'
		. ' && a2enmod -q proxy_fcgi reqtimeout && a2enconf -q hookinbox && apache2ctl configtest');
	is($rc, 0, 'Apache with the mod_proxy_fcgi snippet enabled: configtest good') or diag $out;
}

# ---- remove, purge
unlink '/etc/hookinbox/secrets/stripe-live'; # the administrator's file, not the package's
($rc, $out) = dpkg('-r', 'hookinbox');
is($rc, 0, 'dpkg -r') or diag $out;
ok(!-e '/usr/sbin/hookinbox.fcgi' && !-e '/usr/share/hookinbox', 'programs and data removed');
ok(-e '/etc/hookinbox/hookinbox.conf', 'the configuration kept');

# the kept cron file: each enabled line, as cron runs it, says nothing
{
	my $cron = HookTest::slurp('/etc/cron.d/hookinbox');
	my ($w) = $cron =~ /^\* \* \* \* \*\thookinbox\t(.*)$/m;
	my ($p) = $cron =~ /^17 3 \* \* \*\tpostgres\t(.*)$/m;
	ok(defined $w && defined $p, 'the cron file is kept, its lines enabled');
	($rc, $out) = sh("cd / && runuser -u hookinbox -- sh -c '$w'");
	is($out, '', 'after removal the worker line prints nothing (cron mails nothing)');
	isnt($rc, 127, 'and runs no missing program');
	($rc, $out) = sh("cd / && runuser -u postgres -- sh -c \"$p\"");
	is($out, '', 'after removal the purge line prints nothing');
	isnt($rc, 127, 'and runs no missing script');
}
if ($apache) {
	ok(!-e '/etc/apache2/conf-enabled/hookinbox.conf', 'the Apache configuration of the removed responder is disabled');
	($rc, $out) = sh('apache2ctl configtest');
	is($rc, 0, 'apache2ctl configtest after removal') or diag $out;
}
ok(!-e "$nodeexp/hookinbox.prom", 'the metrics file is gone (a frozen one pages forever)');
is(`dpkg-statoverride --list | grep -w hookinbox`, '', 'no statoverride names hookinbox any more');
($rc, $out) = dpkg('-P', 'hookinbox');
is($rc, 0, 'dpkg -P') or diag $out;
unlike($out, qr/warning/i, 'purged without a warning') or diag $out;
$installed = 0;
ok(!-e '/etc/hookinbox' && !-e '/etc/cron.d/hookinbox', '/etc/hookinbox and the cron file purged');
is(join(' ', glob('/lib/systemd/system/hookinbox*')), '', 'the units removed');
is(`dpkg-query -W -f='\${Status}' hookinbox 2>/dev/null`, '', 'dpkg knows no hookinbox any more');

# the system user deleted as README.Debian says: dpkg still works for the
# host (a statoverride naming its group would make every dpkg -i fail)
SKIP: {
	skip 'a statoverride names hookinbox: deleting the user would break dpkg on this host', 2
		if `dpkg-statoverride --list | grep -w hookinbox` ne '';
	($rc, $out) = sh('deluser --system --quiet hookinbox && deluser --system --quiet hookinbox-intake');
	is($rc, 0, 'deluser --system hookinbox hookinbox-intake') or diag $out;
	my $pkg = tempdir(CLEANUP => 1);
	mkdir "$pkg/DEBIAN" or die;
	open my $ctl, '>', "$pkg/DEBIAN/control" or die $!;
	print $ctl "Package: hookinbox-t63-unrelated\nVersion: 1\nArchitecture: all\n"
		. "Maintainer: t63 <t63\@example.invalid>\nDescription: an unrelated package\n";
	close $ctl;
	system("dpkg-deb -b $pkg $pkg.deb >/dev/null") == 0 or die;
	($rc, $out) = dpkg('-i', "$pkg.deb");
	is($rc, 0, 'dpkg -i of an unrelated package') or diag $out;
	dpkg('-P', 'hookinbox-t63-unrelated');
	unlink "$pkg.deb";
}
done_testing();
