# SPDX-License-Identifier: ISC
# docs/install.md, followed as a script: its ```sh blocks run in order, as
# root, in one bash with set -eu, on this host, against a PostgreSQL cluster
# made for the test (pg_createcluster, a free port) and the package make deb
# builds.  The test's only changes to the page's commands are listed in
# %subst (that cluster's configuration directory, the downstream's URL, the
# secret) and the port in the shipped conninfo; it starts Apache where the
# page says systemctl reload.  Then the delivery sent in step 5 must have
# reached the downstream once, from the worker run as the hookinbox user
# through peer authentication, the responder must run as hookinbox-intake
# (spawn-fcgi stands in for the socket unit, as systemd would start it) with
# the web server's user unable to read its secret or connect as its role,
# and the metrics file and backups must exist.
# Then the uninstall section runs: Apache's configuration tests good, the
# metrics file, the statoverride, the user and the roles are gone.
# Everything is undone at the end (cluster dropped, package purged, Apache
# stopped and its configuration restored).
#
# Root only; not under a sanitizer (the package is the release build).
use strict;
use warnings;
use Test::More;
use Fcntl qw(:flock);
use File::Temp ();
use IO::Socket::INET;
use HookTest;
use HookTest::Downstream;

my $top = HookTest::top();
plan skip_all => 'needs root' if $> != 0;
for my $p (qw(/usr/bin/dpkg-buildpackage /usr/bin/pg_createcluster /usr/sbin/apache2ctl /usr/sbin/a2enconf
	/usr/lib/apache2/modules/mod_proxy_fcgi.so /usr/bin/spawn-fcgi /usr/sbin/runuser)) {
	plan skip_all => "$p missing (tools/install-deps installs it)" unless -e $p;
}
{
	my $bin = HookTest::slurp("$top/obj/test/hookinbox-worker");
	plan skip_all => 'sanitizer build: the walkthrough is tested in the plain run'
		if index($bin, '__asan_init') >= 0 || index($bin, '__tsan_init') >= 0;
}
plan skip_all => 'port 80 is taken (the walkthrough posts to http://localhost/)'
	if IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => 80, Proto => 'tcp');

# one test at a time installs the package (t/63 too)
open my $lock, '>', '/tmp/hookinbox-dpkg-test.lock' or die $!;
flock $lock, LOCK_EX or die $!;

sub sh {
	my ($cmd) = @_;
	my $out = `$cmd 2>&1`;
	return ($? >> 8, $out);
}

my ($ver) = HookTest::pg_bindir() =~ m{/(\d+)/bin};
my $cluster = 'hookinbox_doc';
my $port = HookTest::free_port();
my $proxy_fcgi_was_on = -e '/etc/apache2/mods-enabled/proxy_fcgi.load';
# what "systemctl enable --now hookinbox-fcgi.socket" does, without systemd:
# the socket root:www-data 0660, the responder as hookinbox-intake on it
my $fcgi_pid = '/run/hookinbox-test-fcgi.pid';
my $socket_unit = 'install -d -m 0755 /run/hookinbox && spawn-fcgi -s /run/hookinbox/fcgi.sock -G www-data -M 0660 '
	. "-u hookinbox-intake -g hookinbox-intake -P $fcgi_pid -- /usr/sbin/hookinbox.fcgi -c /etc/hookinbox/hookinbox.conf >/dev/null";
my $stop_responder = "if [ -s $fcgi_pid ]; then kill \$(cat $fcgi_pid); rm -f $fcgi_pid; fi";
my $nodeexp_dir = '/var/lib/prometheus/node-exporter';
my $nodeexp_existed = -d $nodeexp_dir;
my @nodeexp_stat = stat $nodeexp_dir; # (Debian's prometheus-node-exporter makes it)
my $nodeexp_override = `dpkg-statoverride --list $nodeexp_dir`; # the page adds one
my %done;
END {
	local $?;
	sh('apache2ctl stop') if $done{apache};
	sh($stop_responder);
	sh('a2disconf -q hookinbox; rm -f /etc/apache2/conf-available/hookinbox.conf');
	sh('a2dismod -q proxy_fcgi') unless $proxy_fcgi_was_on;
	sh("pg_dropcluster --stop $ver $cluster") if $done{cluster};
	unlink '/etc/hookinbox/secrets/stripe-live';
	sh('dpkg -P hookinbox') if $done{dpkg};
	unlink '/var/backups/hookinbox.dump', '/var/backups/hookinbox-etc.tar.gz', '/tmp/event.json';
	sh("dpkg-statoverride --remove $nodeexp_dir") if $nodeexp_override eq '';
	if ($nodeexp_existed) {
		unlink "$nodeexp_dir/hookinbox.prom", "$nodeexp_dir/hookinbox.prom.lock";
		chown $nodeexp_stat[4], $nodeexp_stat[5], $nodeexp_dir;
		chmod $nodeexp_stat[2] & 07777, $nodeexp_dir;
	} else {
		sh("rm -rf $nodeexp_dir");
	}
}

# ---- the package and the cluster the page assumes
# (unless t/63 just built it from this very tree: no file is newer than the .deb)
my ($deb) = glob("$top/obj/deb/hookinbox_*_*.deb");
my ($rc, $out) = (0, 'up to date');
if (!$deb || `find $top -path $top/obj -prune -o -path $top/.git -prune -o -path $top/tests/tmp -prune -o -path $top/var -prune -o -type f -newer $deb -print -quit` ne '') {
	($rc, $out) = sh("make -s -C $top deb");
	($deb) = glob("$top/obj/deb/hookinbox_*_*.deb");
}
is($rc, 0, 'make deb') or diag $out;
sh('dpkg -P hookinbox');
($rc, $out) = sh("dpkg -i $deb");
is($rc, 0, 'the package installed (step 1)') or diag $out;
$done{dpkg} = 1;
($rc, $out) = sh("pg_createcluster --start -p $port $ver $cluster");
is($rc, 0, "a PostgreSQL cluster $ver/$cluster on port $port") or diag $out;
$done{cluster} = 1;
# the shipped conninfos name the default socket directory; the port is the test's
{
	my $c = HookTest::slurp('/etc/hookinbox/hookinbox.conf');
	is(($c =~ s{host=/run/postgresql dbname=hookinbox}{host=/run/postgresql port=$port dbname=hookinbox}g), 2,
		'the port of the test cluster in both conninfos');
	open my $fh, '>', '/etc/hookinbox/hookinbox.conf' or die $!;
	print $fh $c;
	close $fh;
}

# ---- the page, as a script
my $d = HookTest::Downstream->new(dir => File::Temp::tempdir(CLEANUP => 1));
my $secret = 'whsec_install_doc_0123456789abcdef';
HookTest::record_secret($secret);
my %subst = (
	'/etc/postgresql/15/main' => "/etc/postgresql/$ver/$cluster",
	'https://api.example.internal/hooks' => $d->url('/hooks'),
	'whsec_REPLACE_WITH_THE_ENDPOINT_SECRET' => $secret,
	"a2enconf -q hookinbox\napache2ctl configtest\n" => "a2enconf -q hookinbox\napache2ctl configtest\napache2ctl start\n",
	'apt-get install ./hookinbox_NEW_amd64.deb' => "dpkg -i $deb",
	'hookinbox_NEW_amd64.deb' => $deb,
	'apt-get remove hookinbox' => "$stop_responder\ndpkg -r hookinbox",
	'systemctl enable --now hookinbox-fcgi.socket' => $socket_unit,
	'apt-get purge hookinbox' => 'dpkg -P hookinbox',
);
my $doc = HookTest::slurp("$top/docs/install.md");
# the uninstall section runs last, after the checks of what the rest promised
my ($before, $uninstall) = split /^## \d+\. Uninstalling$/m, $doc, 2;
ok(defined $uninstall, 'the page has an uninstall section');
my @blocks = $before =~ /^```sh\n(.*?)^```$/msg;
my @ublocks = ($uninstall // '') =~ /^```sh\n(.*?)^```$/msg;
ok(@blocks >= 10, scalar(@blocks) . ' blocks to run, then ' . scalar(@ublocks) . ' to uninstall');
my $script = "set -eu\n" . join('', map { "echo '>>> step " . ($_ + 1) . "'\n$blocks[$_]" } 0 .. $#blocks);
my $uscript = "set -eu\n" . join('', map { "echo '>>> uninstall " . ($_ + 1) . "'\n$ublocks[$_]" } 0 .. $#ublocks);
for my $from (sort keys %subst) {
	my $n = ($script =~ s/\Q$from\E/$subst{$from}/g) + ($uscript =~ s/\Q$from\E/$subst{$from}/g);
	ok($n, "the page still holds \"$from\"");
}
open my $fh, '>', "$d->{dir}/install.sh" or die $!;
print $fh $script;
close $fh;
$done{apache} = 1;
($rc, $out) = sh("cd / && env PGCLUSTER=$ver/$cluster bash $d->{dir}/install.sh");
is($rc, 0, 'every block of docs/install.md runs') or diag $out;
like($out, qr/^1 200 \{"id":\d+,"duplicate":false\}$/m, 'step 5: the signed test delivery is accepted by the responder under Apache');
like($out, qr{ok \(1 endpoints, 1 routes\); database: connected as "hookinbox_intake"}, 'step 4: the responder as hookinbox_intake');
like($out, qr{database: connected as "hookinbox_worker"}, 'step 4: the worker as hookinbox_worker');
like($out, qr/event=summary .*done=1 /, 'step 6: the worker run delivers it');

# ---- what the page promised
is(scalar(grep { ($_->{event_id} // '') eq 'evt_install_1' } $d->requests), 1, 'the event reached the route once');
my $st = `runuser -u postgres -- env PGCLUSTER=$ver/$cluster psql -X -A -t -d hookinbox -c "select a.state from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id where i.event_id = 'evt_install_1'"`;
is($st, "done\n", 'its action is done');
unlike(HookTest::slurp('/etc/cron.d/hookinbox'), qr/^#[*0-9]/m, 'step 6: the cron lines are enabled');
my @m = stat "$nodeexp_dir/hookinbox.prom";
ok(@m, 'step 7: the metrics file is written');
like(`dpkg-statoverride --list $nodeexp_dir`, qr/^root hookinbox 0?775 \Q$nodeexp_dir\E$/m,
	'step 7: the textfile directory\'s group and mode survive upgrades of prometheus-node-exporter');
is(sprintf('%04o', ($m[2] // 0) & 07777), '0644', 'readable by node_exporter');
like(HookTest::slurp("$nodeexp_dir/hookinbox.prom"), qr/^hookinbox_worker_last_run_ok 1$/m, 'a good run');
ok(-s '/var/backups/hookinbox.dump' && -s '/var/backups/hookinbox-etc.tar.gz', 'step 8: both backups written');
{
	my ($n) = grep { $blocks[$_] =~ /pg_restore/ } 0 .. $#blocks;
	my $step = defined $n ? $n + 1 : 0;
	my ($restored) = $out =~ /^>>> step $step\n(.*?)(?:^>>> step|\z)/ms;
	like($restored // '', qr/^[1-9]\d*$/m, "step 8: the dump restores as the page says, as root (block $step: its inbox rows)")
		or diag $restored;
}
is((stat '/etc/hookinbox/secrets/stripe-live')[2] & 07777, 0640, 'the secret file: 0640');
is(getgrgid((stat '/etc/hookinbox/secrets/stripe-live')[5]), 'hookinbox-intake', 'group hookinbox-intake, not the web server\'s');
is(sprintf('%04o', (stat '/etc/hookinbox/secrets')[2] & 07777), '0711', 'the secrets directory: not listable');
{
	my $pid = HookTest::slurp($fcgi_pid) =~ s/\s+//gr;
	is(`ps -o user= -p $pid` =~ s/\s+//gr, 'hookinbox-intake', 'the responder runs as hookinbox-intake');
	($rc, my $o) = sh('runuser -u www-data -- cat /etc/hookinbox/secrets/stripe-live');
	isnt($rc, 0, 'www-data cannot read the endpoint secret');
	($rc, $o) = sh("runuser -u www-data -- env PGCLUSTER=$ver/$cluster psql -X -d hookinbox -U hookinbox_intake -c 'select 1'");
	like($o, qr/authentication failed/, 'www-data cannot connect as hookinbox_intake');
}
like($out, qr{^Unpacking hookinbox \([^)]+\) over }m, 'step 9: the new package installed over the old one, after its schema script');

# ---- the uninstall section: the host stays healthy
open $fh, '>', "$d->{dir}/uninstall.sh" or die $!;
print $fh $uscript;
close $fh;
($rc, $out) = sh("cd / && env PGCLUSTER=$ver/$cluster bash $d->{dir}/uninstall.sh");
is($rc, 0, 'every block of the uninstall section runs (apache2ctl configtest good after removal)') or diag $out;
$done{dpkg} = 0 if $rc == 0;
ok(!-e '/etc/apache2/conf-enabled/hookinbox.conf', 'the Apache configuration of the responder is disabled');
($rc, $out) = sh('apache2ctl configtest');
is($rc, 0, 'apache2ctl configtest') or diag $out;
ok(!-e "$nodeexp_dir/hookinbox.prom", 'the metrics file is gone');
is(`dpkg-statoverride --list | grep -w hookinbox`, '', 'no statoverride names hookinbox');
ok(!-e '/etc/hookinbox' && !-e '/etc/cron.d/hookinbox', '/etc/hookinbox and the cron file are gone');
ok(!defined getpwnam('hookinbox'), 'the system user is gone');
is(`runuser -u postgres -- env PGCLUSTER=$ver/$cluster psql -X -A -t -d postgres -c "select count(*) from pg_roles where rolname like 'hookinbox%'"`,
	"0\n", 'the roles are gone');
done_testing();
