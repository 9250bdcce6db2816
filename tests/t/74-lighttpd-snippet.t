# SPDX-License-Identifier: ISC
# The shipped lighttpd snippet (etc/lighttpd/hookinbox.conf), run as it is
# with only its paths swapped: lighttpd spawns the responder processes, a
# signed delivery is stored, a bad signature and an oversize body are
# refused (over the snippet's 1 MiB by lighttpd itself), and the
# responders' log reaches the breakage log.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::WebServers;

plan skip_all => 'lighttpd is not installed' unless -x '/usr/sbin/lighttpd';
my $secret = 'whsec_lighttpd_snippet_0123456789';
my $t = HookTest->new(no_lighttpd => 1, intake => { threads => 16, max_body => 4096 },
	endpoints => { 'stripe-live' => { provider => 'stripe', secrets => [$secret] } });
my $dir = $t->dir;
my $top = HookTest::top();
my $port = HookTest::free_port();
my $snippet = HookTest::WebServers::snippet('etc/lighttpd/hookinbox.conf',
	'/run/lighttpd/hookinbox.sock' => "$dir/run/hookinbox.sock",
	'/usr/local/sbin/hookinbox.fcgi' => "$top/obj/test/hookinbox.fcgi",
	'/etc/hookinbox/hookinbox.conf' => $t->config,
	'/var/log/lighttpd/hookinbox.log' => "$dir/responder.log");
mkdir "$dir/run";
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
my $body = '{"id":"evt_snip_1","type":"invoice.paid","created":1,"data":{"object":{"id":"in_1"}}}';
my $r = $http->request('POST', $url, { content => $body, headers => { 'Stripe-Signature' => stripe_sig($secret, $body) } });
is($r->{status}, 200, 'signed delivery through the shipped snippet: 200') or diag($r->{content});
like($r->{content}, qr/"duplicate":false/, 'a new event');
is($t->sql(q{select event_type from hookinbox.inbox where event_id = 'evt_snip_1'}), 'invoice.paid', 'the row is there');
$r = $http->request('POST', $url, { content => $body, headers => { 'Stripe-Signature' => stripe_sig('wrong-secret-000', $body) } });
is($r->{status}, 401, 'bad signature: 401 (the header reached the responder)');
my $big = '{"id":"evt_snip_big","pad":"' . ('x' x 5000) . '"}';
$r = $http->request('POST', $url, { content => $big, headers => { 'Stripe-Signature' => stripe_sig($secret, $big) } });
is($r->{status}, 413, 'over max_body: 413');
# over the default max_body (1 MiB), the snippet's own limit: refused by
# lighttpd from the declared length, the responder never sees it
my $over = '{"id":"evt_snip_over","pad":"' . ('x' x 1048576) . '"}';
$r = $http->request('POST', $url, { content => $over, headers => { 'Stripe-Signature' => 't=1,v1=00' } });
is($r->{status}, 413, 'over 1 MiB: 413');
unlike($r->{content} // '', qr/body too large/, 'from lighttpd (its limit is max_body), not the responder after lighttpd read it');
is($t->sql('select count(*) from hookinbox.inbox'), 1, 'nothing else stored');
my @procs = grep { kill 0, $_ } split ' ', `pgrep -f -P $h->{pid} hookinbox.fcgi`;
is(scalar(@procs), 2, 'lighttpd runs the two responder processes the snippet asks for');
$h->stop;
like(HookTest::slurp("$dir/responder.log"), qr/event=request endpoint=stripe-live outcome=accepted status=200/,
	'the request log reaches server.breakagelog');
done_testing();
