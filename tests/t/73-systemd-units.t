# SPDX-License-Identifier: ISC
# The systemd units under etc/systemd: systemd-analyze verify finds nothing
# to say about any of them (with the built programs standing in for the
# installed ones), the responder's units take the listening socket on
# standard input and keep stdout off it, the responder's run as hookinbox-intake and
# the worker's as hookinbox (neither reads the other's secret files), only
# the worker's may write (node_exporter's textfile directory, UMask 0022),
# and every ExecStart command line is accepted by its program.  (What the responder does with a socket on
# fd 0 is tested through nginx in t/72-nginx.t.)
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use HookTest;

my $sa = '/usr/bin/systemd-analyze';
plan skip_all => "no $sa (package systemd)" unless -x $sa;
my $top = HookTest::top();
my %bin = ('/usr/local/sbin/hookinbox.fcgi' => "$top/fcgi/hookinbox.fcgi",
	'/usr/local/sbin/hookinbox-worker' => "$top/worker/hookinbox-worker");
plan skip_all => 'programs not built (make)' if grep { !-x } values %bin;

my $dir = tempdir(CLEANUP => 1);
my @units = map { s{.*/}{}r } glob("$top/etc/systemd/*.{service,socket,timer}");
ok(@units >= 6, 'units: ' . join(' ', @units));

my %text;
for my $u (@units) {
	open my $in, '<', "$top/etc/systemd/$u" or die $!;
	local $/;
	my $t = <$in>;
	$text{$u} = $t;
	$t =~ s/\Q$_\E/$bin{$_}/g for keys %bin;
	open my $out, '>', "$dir/$u" or die $!;
	print $out $t;
	close $out;
}
for my $u (sort @units) {
	my $out = `cd $dir && $sa verify --man=no ./$u 2>&1`;
	is($out, '', "systemd-analyze verify $u: nothing to say");
}

for my $u (grep { /^hookinbox-fcgi.*\.service$/ } @units) {
	like($text{$u}, qr/^StandardInput=socket$/m, "$u: the listening socket on fd 0");
	like($text{$u}, qr/^StandardOutput=journal$/m, "$u: stdout is not the socket");
	like($text{$u}, qr/^Requires=hookinbox-fcgi\.socket$/m, "$u: requires the socket unit");
}
like($text{'hookinbox-fcgi.socket'}, qr{^ListenStream=/run/hookinbox/fcgi\.sock$}m,
	'the socket the web-server snippets name');
like($text{'hookinbox-worker.service'}, qr/--once --max-runtime 50/, 'timer run: --once --max-runtime 50');
like($text{'hookinbox-worker.timer'}, qr/^OnCalendar=\*-\*-\* \*:\*:00$/m, 'timer: every minute');
like($text{'hookinbox-worker-loop.service'}, qr/--loop/, 'loop service: --loop');
for my $u (grep { /\.service$/ } @units) {
	like($text{$u}, qr/^NoNewPrivileges=yes$/m, "$u: NoNewPrivileges");
	like($text{$u}, qr/^ProtectSystem=strict$/m, "$u: ProtectSystem=strict (no write access)");
	if ($u =~ /^hookinbox-worker/) {
		# the metrics file, readable by node_exporter; nothing else
		is(join(' ', $text{$u} =~ /^(?:ReadWritePaths|StateDirectory|LogsDirectory)=(.*)$/mg),
			'-/var/lib/prometheus/node-exporter', "$u: writes only node_exporter's textfile directory");
		like($text{$u}, qr/^UMask=0022$/m, "$u: the metrics file readable by node_exporter");
		like($text{$u}, qr/^User=hookinbox\nGroup=hookinbox$/m, "$u: runs as hookinbox");
		like($text{$u}, qr/^ExecStart=\S+ -c \S+ -v /m, "$u: -v, the journal is its log");
	} else {
		unlike($text{$u}, qr/^(ReadWritePaths|StateDirectory|LogsDirectory)=/m, "$u: writes nowhere");
		like($text{$u}, qr/^UMask=0077$/m, "$u: UMask=0077");
		# its own user: not the worker's (neither reads the other's secret
		# files), not the web server's (nothing else it runs reads them)
		like($text{$u}, qr/^User=hookinbox-intake\nGroup=hookinbox-intake$/m,
			"$u: runs as hookinbox-intake, neither the web server's user nor the worker's");
	}
}

# every ExecStart/ExecStartPre line parses: the same options plus --help exit 0
for my $u (sort grep { /\.service$/ } @units) {
	while ($text{$u} =~ /^(ExecStart(?:Pre)?)=(\S+)(.*)$/mg) {
		my ($key, $prog, $args) = ($1, $2, $3);
		next unless $bin{$prog};
		my @cmd = ($bin{$prog}, split(' ', $args), '--help');
		my $out = `@{[ join ' ', map { HookTest::shell_quote($_) } @cmd ]} 2>&1`;
		is($? >> 8, 0, "$u: $key options accepted by " . ($prog =~ s{.*/}{}r)) or diag($out);
	}
}
done_testing;
