# SPDX-License-Identifier: ISC
# The shipped lighttpd snippet (etc/lighttpd/hookinbox.conf), run as it is
# with only its socket path swapped: lighttpd connects to a responder it
# did not start (spawn-fcgi here, the systemd socket unit in production,
# running as its own user), a signed delivery is stored, a bad signature
# and an oversize body are refused (over the snippet's 1 MiB by lighttpd
# itself), and lighttpd starts no responder of its own.
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;

HookTest::WebServers::need('/usr/sbin/lighttpd', 'spawn-fcgi');
my $t = HookTest::Web->new(intake => { threads => 16, max_body => 4096 }, endpoints => { HookTest::Web::endpoints() });
my $dir = $t->dir;
my $fcgi = $t->spawn_fcgi;
my $port = HookTest::free_port();
my $snippet = HookTest::WebServers::snippet('etc/lighttpd/hookinbox.conf', '/run/hookinbox/fcgi.sock' => $t->socket_path);
unlike($snippet, qr/bin-path/, 'the snippet starts no responder (no bin-path)');
HookTest::WebServers::write_file("$dir/snippet.conf", $snippet);
HookTest::WebServers::write_file("$dir/lighttpd.conf", <<"CONF");
server.document-root = "$dir"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$dir/lighttpd.error.log"
server.pid-file = "$dir/lighttpd.pid"
include "$dir/snippet.conf"
CONF
my $h = HookTest::Lighttpd->new(dir => $dir, port => $port);
HookTest::run('/usr/sbin/lighttpd', '-f', "$dir/lighttpd.conf");
$h->{running} = 1;
HookTest::WebServers::wait_port($port, 'lighttpd');
$h->{pid} = $h->pid;
$HookTest::LIVE{"$h"} = $h;

my $http = HTTP::Tiny->new(timeout => 20);
my $url = "http://127.0.0.1:$port/hooks/stripe-live";
my $secret = $HookTest::Web::STRIPE;
my $body = '{"id":"evt_snip_1","type":"invoice.paid","created":1,"data":{"object":{"id":"in_1"}}}';
my $r = $http->request('POST', $url, { content => $body, headers => { 'Stripe-Signature' => HookTest::stripe_sig($secret, $body) } });
is($r->{status}, 200, 'signed delivery through the shipped snippet: 200') or diag($r->{content});
like($r->{content}, qr/"duplicate":false/, 'a new event');
is($t->sql(q{select event_type from hookinbox.inbox where event_id = 'evt_snip_1'}), 'invoice.paid', 'the row is there');
$r = $http->request('POST', $url, { content => $body, headers => { 'Stripe-Signature' => HookTest::stripe_sig('wrong-secret-000', $body) } });
is($r->{status}, 401, 'bad signature: 401 (the header reached the responder)');
my $big = '{"id":"evt_snip_big","pad":"' . ('x' x 5000) . '"}';
$r = $http->request('POST', $url, { content => $big, headers => { 'Stripe-Signature' => HookTest::stripe_sig($secret, $big) } });
is($r->{status}, 413, 'over max_body: 413');
# over the default max_body (1 MiB), the snippet's own limit: refused by
# lighttpd from the declared length, the responder never sees it
my $over = '{"id":"evt_snip_over","pad":"' . ('x' x 1048576) . '"}';
$r = $http->request('POST', $url, { content => $over, headers => { 'Stripe-Signature' => 't=1,v1=00' } });
is($r->{status}, 413, 'over 1 MiB: 413');
unlike($r->{content} // '', qr/body too large/, 'from lighttpd (its limit is max_body), not the responder after lighttpd read it');
is($t->sql('select count(*) from hookinbox.inbox'), 1, 'nothing else stored');
my @own = grep { kill 0, $_ } split ' ', `pgrep -P $h->{pid} 2>/dev/null`;
is(scalar(@own), 0, 'lighttpd runs no process of its own');
$h->stop;
like(HookTest::slurp("$dir/responder.log"), qr/event=request endpoint=stripe-live outcome=accepted status=200/,
	'the responder (not lighttpd) logs the request');
done_testing();
