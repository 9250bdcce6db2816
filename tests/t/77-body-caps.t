# SPDX-License-Identifier: ISC
# Each shipped web-server snippet caps a request body at max_body, no more
# and no less: the sample configuration's max_body (1 MiB, the default) is
# what lighttpd, Apache and nginx refuse above, so that a
# longer declared body is answered 413 by the web server from its
# Content-Length, before the body is read (t/70-74 run each snippet; t/74
# sends such a body through lighttpd).
use strict;
use warnings;
use Test::More;
use HookTest;

my $top = HookTest::top();
my ($max) = HookTest::slurp("$top/etc/hookinbox.conf") =~ /^max_body\s*=\s*(\d+)/m;
is($max, 1048576, 'etc/hookinbox.conf: max_body = 1048576 (the default)');
my %unit = ('' => 1, k => 1024, m => 1024 * 1024);

my $l = HookTest::slurp("$top/etc/lighttpd/hookinbox.conf");
my ($kib) = $l =~ /^server\.max-request-size\s*=\s*(\d+)/m;
is(($kib // 0) * 1024, $max, "lighttpd: server.max-request-size = $kib KiB");

for my $f ('hookinbox-proxy-fcgi.conf') {
	my $a = HookTest::slurp("$top/etc/apache/$f");
	my ($lim) = $a =~ /^\s*LimitRequestBody\s+(\d+)/m;
	is($lim, $max, "apache $f: LimitRequestBody $lim");
}
my $n = HookTest::slurp("$top/etc/nginx/hookinbox.conf");
my ($size, $u) = $n =~ /^\s*client_max_body_size\s+(\d+)([km]?)\s*;/m;
is(($size // 0) * $unit{ lc($u // '') }, $max, "nginx: client_max_body_size $size$u");
done_testing();
