# SPDX-License-Identifier: ISC
# make install PREFIX=/usr DESTDIR=...: every installed file names the
# installed paths (systemd ExecStart=, FcgidWrapper, lighttpd bin-path, the
# cron lines, the man pages' examples), never /usr/local; each web server
# accepts its installed snippet and systemd-analyze the installed units (with
# the DESTDIR prefix put in front of the installed programs' paths, since
# they are not under / here); make uninstall removes every file it wrote.
use strict;
use warnings;
use Test::More;
use File::Find ();
use File::Temp qw(tempdir);
use HookTest;
use HookTest::WebServers;

my $top = HookTest::top();
my $stage = tempdir(CLEANUP => 1);
my $work = tempdir(CLEANUP => 1);
chmod 0755, $work;
my $share = "$stage/usr/share/hookinbox";

my $out = `make -s -C $top install PREFIX=/usr DESTDIR=$stage 2>&1`;
is($?, 0, 'make install PREFIX=/usr DESTDIR=... succeeds') or diag $out;

sub files_under {
	my ($dir) = @_;
	my @f;
	File::Find::find({ no_chdir => 1, wanted => sub { push @f, $_ if -f $_ } }, $dir) if -d $dir;
	return sort @f;
}
my @installed = files_under($stage);
my @text = grep { -T $_ } @installed;
ok(@text > 20, scalar(@text) . ' text files installed');

# ---- the installed paths, and only those
for my $f (@text) {
	my $t = HookTest::slurp($f);
	my $rel = substr($f, length $stage);
	unlike($t, qr{/usr/local}, "$rel names no /usr/local path");
	# every hookinbox program or script a file names by absolute path is installed there
	while ($t =~ m{(?<![\w./-])(/[\w./-]*/(?:hookinbox\.fcgi|hookinbox-worker|hookinbox-backfill|hookinbox-send|sql/[\w-]+\.sql))\b}g) {
		my $p = $1;
		ok(-e "$stage$p", "$rel: $p is installed");
		ok(-x "$stage$p", "$rel: $p is executable") if $p =~ m{/(?:bin|sbin)/};
	}
}
for my $prog (qw(/usr/sbin/hookinbox.fcgi /usr/sbin/hookinbox-worker /usr/sbin/hookinbox-backfill
	/usr/bin/hookinbox-send)) {
	ok(-x "$stage$prog", "$prog installed");
}
my %named = (
	'etc/systemd/hookinbox-fcgi.service' => qr{^ExecStart=/usr/sbin/hookinbox\.fcgi -c /etc/hookinbox/hookinbox\.conf$}m,
	'etc/systemd/hookinbox-worker.service' => qr{^ExecStart=/usr/sbin/hookinbox-worker }m,
	'etc/cron.d/hookinbox' => qr{^\* \* \* \* \*\thookinbox\ttest -x /usr/sbin/hookinbox-worker && /usr/sbin/hookinbox-worker .*\n(?s:.*)\ttest -r /usr/share/hookinbox/sql/purge\.sql && psql .*-f /usr/share/hookinbox/sql/purge\.sql }m,
);
for my $rel (sort keys %named) {
	like(HookTest::slurp("$share/$rel"), $named{$rel}, "$rel names the installed path");
}
like(HookTest::slurp("$stage/usr/share/man/man8/hookinbox.fcgi.8"), qr{/usr/sbin/hookinbox\.fcgi},
	'the man page example names the installed responder');
ok(-e "$stage/usr/share/man/man1/hookinbox-send.1", 'hookinbox-send(1) installed');

# the installed text with the DESTDIR prefix put before the installed programs
sub mapped {
	my ($rel, %more) = @_;
	my $t = HookTest::slurp("$share/$rel");
	$t =~ s{(?<![\w./-])/usr/(sbin|bin)/hookinbox}{$stage/usr/$1/hookinbox}g;
	$t =~ s/\Q$_\E/$more{$_}/g for keys %more;
	return $t;
}

# ---- apache2 -t
SKIP: {
	skip 'apache2 not installed', 1 unless -x $HookTest::WebServers::BIN{apache2};
	for my $case (['hookinbox-proxy-fcgi.conf', [qw(proxy proxy_fcgi reqtimeout)]]) {
		my ($file, $mods) = @$case;
		my $d = "$work/apache-$file";
		mkdir $d;
		chmod 0755, $d;
		my $conf = HookTest::Apache->new(dir => $d, modules => $mods, include => mapped("etc/apache/$file"), extra => '')
			->write_conf;
		my $o = `$HookTest::WebServers::BIN{apache2} -t -f $conf 2>&1`;
		is($?, 0, "apache2 -t accepts the installed $file") or diag $o;
	}
}

# ---- nginx -t
SKIP: {
	skip 'nginx not installed', 1 unless -x $HookTest::WebServers::BIN{nginx};
	my $d = "$work/nginx";
	mkdir $d;
	chmod 0755, $d;
	my $n = HookTest::Nginx->new(dir => $d, include => mapped('etc/nginx/hookinbox.conf'));
	my $conf = $n->write_conf;
	my $o = `$HookTest::WebServers::BIN{nginx} -t -q -p $d/nginx/ -e $d/nginx.error.log -c $conf 2>&1`;
	is($?, 0, 'nginx -t accepts the installed snippet') or diag $o;
}

# ---- lighttpd -tt (it reports a missing bin-path on stderr, and still exits 0)
SKIP: {
	skip 'lighttpd not installed', 2 unless -x '/usr/sbin/lighttpd';
	my $d = "$work/lighttpd";
	mkdir $d;
	my $snip = mapped('etc/lighttpd/hookinbox.conf', '/var/log/lighttpd/hookinbox.log' => "$d/breakage.log",
		'/run/lighttpd/hookinbox.sock' => "$d/fcgi.sock");
	HookTest::WebServers::write_file("$d/hookinbox.conf", $snip);
	my $port = HookTest::free_port();
	HookTest::WebServers::write_file("$d/lighttpd.conf", qq(server.document-root = "$d"\n)
		. qq(server.bind = "127.0.0.1"\nserver.port = $port\ninclude "$d/hookinbox.conf"\n));
	my $o = `/usr/sbin/lighttpd -tt -f $d/lighttpd.conf 2>&1`;
	is($?, 0, 'lighttpd -tt exits 0');
	is($o, '', 'lighttpd -tt has nothing to say about the installed snippet (bin-path exists)');
}

# ---- systemd-analyze verify
SKIP: {
	my $sa = '/usr/bin/systemd-analyze';
	skip "no $sa (package systemd)", 1 unless -x $sa;
	my $d = "$work/units";
	mkdir $d;
	my @units = map { s{.*/}{}r } glob("$share/etc/systemd/*.{service,socket,timer}");
	for my $u (@units) {
		HookTest::WebServers::write_file("$d/$u", mapped("etc/systemd/$u"));
	}
	for my $u (sort @units) {
		my $o = `cd $d && $sa verify --man=no ./$u 2>&1`;
		is($o, '', "systemd-analyze verify the installed $u: nothing to say");
	}
}

# ---- make uninstall
$out = `make -s -C $top uninstall PREFIX=/usr DESTDIR=$stage 2>&1`;
is($?, 0, 'make uninstall succeeds') or diag $out;
is(join(' ', map { substr($_, length $stage) } files_under($stage)), '', 'make uninstall leaves no file behind');
ok(!-e $share, '/usr/share/hookinbox removed');
done_testing();
