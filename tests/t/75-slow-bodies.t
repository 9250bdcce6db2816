# SPDX-License-Identifier: ISC
# Slow senders through the shipped web-server snippets: bodies that trickle
# in at 600 B/s, one per request thread of the responder, must not make it
# unavailable.  nginx (fastcgi_request_buffering) and lighttpd read the
# whole body before the responder gets the request, so a signed
# delivery sent meanwhile is stored at once.  Apache's mod_proxy_fcgi
# streams a body after its first 16 KB, so its snippet cuts a body that
# takes over 5 s (mod_reqtimeout): the delivery waits that long at most,
# not the 33 s the slow bodies take (it did with body=20,MinRate=500).
# Each snippet bounds how long a slow body may take.
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;
use HTTP::Tiny;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes ();

my $top = HookTest::top();
for my $f ('etc/apache/hookinbox-proxy-fcgi.conf', 'etc/nginx/hookinbox.conf', 'etc/lighttpd/hookinbox.conf') {
	my $text = HookTest::slurp("$top/$f");
	like($text, qr/^\s*(RequestReadTimeout .*body=|client_body_timeout |server\.max-read-idle )/m,
		"$f bounds a slow body");
}
like(HookTest::slurp("$top/etc/apache/hookinbox-proxy-fcgi.conf"), qr/^RequestReadTimeout .*body=5$/m,
	'the Apache proxy_fcgi snippet: a whole body within 5 s, outside any IfModule');
unlike(HookTest::slurp("$top/etc/lighttpd/hookinbox.conf"), qr/^\s*server\.stream-request-body\s*=\s*[12]/m,
	'the lighttpd snippet does not stream bodies to the responder');

SKIP: {
	skip 'apache2, mod_proxy_fcgi or spawn-fcgi missing', 3
		unless HookTest::WebServers::have(qw(apache2 mod_proxy_fcgi spawn-fcgi));
	my $t = HookTest::Web->new(endpoints => { HookTest::Web::endpoints() });
	$t->spawn_fcgi;
	$t->apache(snippet => 'etc/apache/hookinbox-proxy-fcgi.conf', modules => [qw(proxy proxy_fcgi reqtimeout)]);
	$t->slow_body_check(label => 'apache+proxy_fcgi', within => 6);
}
SKIP: {
	skip 'nginx or spawn-fcgi missing', 3 unless HookTest::WebServers::have(qw(nginx spawn-fcgi));
	my $t = HookTest::Web->new(endpoints => { HookTest::Web::endpoints() });
	$t->spawn_fcgi;
	$t->nginx(snippet => 'etc/nginx/hookinbox.conf');
	$t->slow_body_check(label => 'nginx');
}
# lighttpd running the shipped snippet, in front of one responder process with one thread
SKIP: {
	skip 'lighttpd or spawn-fcgi is not installed', 3
		unless -x '/usr/sbin/lighttpd' && HookTest::WebServers::have('spawn-fcgi');
	my $secret = $HookTest::Web::STRIPE;
	my $t = HookTest::Web->new(intake => { threads => 1 }, endpoints => { HookTest::Web::endpoints() });
	$t->spawn_fcgi;
	my $dir = $t->dir;
	my $port = HookTest::free_port();
	my $snippet = HookTest::WebServers::snippet('etc/lighttpd/hookinbox.conf',
		'/run/hookinbox/fcgi.sock' => $t->socket_path);
	HookTest::WebServers::write_file("$dir/snippet.conf", $snippet);
	HookTest::WebServers::write_file("$dir/lighttpd.conf", "server.document-root = \"$dir\"\n"
		. "server.bind = \"127.0.0.1\"\nserver.port = $port\nserver.errorlog = \"$dir/lighttpd.error.log\"\n"
		. "server.pid-file = \"$dir/lighttpd.pid\"\ninclude \"$dir/snippet.conf\"\n");
	my $h = HookTest::Lighttpd->new(dir => $dir, port => $port);
	HookTest::run('/usr/sbin/lighttpd', '-f', "$dir/lighttpd.conf");
	$h->{running} = 1;
	HookTest::WebServers::wait_port($port, 'lighttpd');
	$h->{pid} = $h->pid;
	$HookTest::LIVE{"$h"} = $h;
	my @kids;
	for my $k (1 .. 2) {
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or POSIX::_exit(1);
			$s->autoflush(1);
			local $SIG{PIPE} = 'IGNORE';
			print $s "POST /hooks/stripe-live HTTP/1.1\r\nHost: localhost\r\nContent-Length: 40000\r\n\r\n",
				'x' x 20000;
			for (1 .. 333) { print $s ('x' x 60) or last; Time::HiRes::sleep(0.1) }
			POSIX::_exit(0);
		}
		push @kids, $pid;
	}
	Time::HiRes::sleep(1);
	my $body = '{"id":"evt_slow_l","type":"invoice.paid","created":1,"data":{"object":{"id":"in_1"}}}';
	my $t0 = Time::HiRes::time();
	my $r = HTTP::Tiny->new(timeout => 60)->request('POST', "http://127.0.0.1:$port/hooks/stripe-live",
		{ content => $body, headers => { 'Stripe-Signature' => HookTest::stripe_sig($secret, $body) } });
	my $took = Time::HiRes::time() - $t0;
	is($r->{status}, 200, 'lighttpd: a delivery while 2 bodies trickle in at 600 B/s: 200');
	cmp_ok($took, '<', 2, sprintf('lighttpd: at once (%.2f s)', $took));
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_slow_l'}), 1, 'lighttpd: and stored');
	kill 'TERM', @kids;
	waitpid($_, 0) for @kids;
	$h->stop;
}
done_testing;
