# SPDX-License-Identifier: ISC
# nginx, running etc/nginx/hookinbox.conf as shipped (paths and body limit
# swapped for the test's), in front of the responder on a unix socket:
# first served by spawn-fcgi -n, then as systemd's socket unit
# (StandardInput=socket) hands it over: a listening socket opened by
# someone else on fd 0, shared by two responder processes.  Signed events
# are stored, bad signatures are 401 (so the headers got through), bodies
# over max_body or client_max_body_size are 413, a chunked body arrives
# whole with its length (fastcgi_request_buffering).
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;

HookTest::WebServers::need(qw(nginx spawn-fcgi));

my $max_body = 4096;
my $limit = 8192;
my $t = HookTest::Web->new(intake => { max_body => $max_body }, endpoints => { HookTest::Web::endpoints() });
$t->spawn_fcgi;
$t->nginx(snippet => 'etc/nginx/hookinbox.conf',
	subst => { 'client_max_body_size 1m' => 'client_max_body_size 8k',
		'client_body_buffer_size 1m' => 'client_body_buffer_size 8k' });

$t->intake_checks(label => 'nginx+spawn-fcgi', max_body => $max_body, limit => $limit);

sub stripe {
	my ($id, @pad) = @_;
	my $b = HookTest::Web::stripe_event($id, @pad);
	return ($b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
}

# a chunked body: nginx buffers it and passes its real length
{
	my ($b, $h) = stripe('evt_web_chunked');
	my $r = $t->post_chunked('stripe-live', $b, $h);
	is($r->{status}, 200, 'chunked body: 200');
	is($t->sql(q{select encode(sha256(body), 'hex') from hookinbox.inbox where event_id = 'evt_web_chunked'}),
		Digest::SHA::sha256_hex($b), 'chunked body: stored whole');
	($b, $h) = stripe('evt_web_chunked_huge', pad => 'x' x ($limit * 4));
	$r = $t->post_chunked('stripe-live', $b, $h);
	is($r->{status}, 413, 'chunked body over client_max_body_size: 413');
	is($t->rows(q{event_id = 'evt_web_chunked_huge'}), 0, 'chunked body over the limit: nothing stored');
}

# a header name with "_" is dropped by nginx (underscores_in_headers off):
# the responder never sees it
{
	my ($b) = stripe('evt_web_underscore');
	my $r = $t->post('stripe-live', $b, { 'Stripe_Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	is($r->{status}, 401, 'Stripe_Signature (underscore) does not reach the responder: 401');
}

# systemd-style: the socket opened by someone else, on fd 0 of two processes
$t->stop_fcgi;
my $fcgi = $t->socket_activated(procs => 2);
{
	my ($b, $h) = stripe('evt_web_socket_unit');
	my $r = $t->post('stripe-live', $b, $h);
	is($r->{status}, 200, 'socket handed over on fd 0: 200') or diag($r->{content});
	is($t->rows(q{event_id = 'evt_web_socket_unit'}), 1, 'socket handed over on fd 0: the row');
	($b) = stripe('evt_web_socket_bad');
	$r = $t->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig('not-the-secret-123', $b) });
	is($r->{status}, 401, 'socket handed over on fd 0: bad signature 401');

	# both processes accept on the shared socket: 20 concurrent deliveries
	my $dir = $t->dir;
	my @pids;
	for my $i (1 .. 20) {
		my $pid = fork // die;
		if (!$pid) {
			my ($cb, $ch) = stripe("evt_web_conc_$i");
			my $res = HTTP::Tiny->new(timeout => 20)->request('POST', $t->url('stripe-live'),
				{ content => $cb, headers => $ch });
			open my $fh, '>', "$dir/conc.$i" or POSIX::_exit(1);
			print $fh $res->{status};
			close $fh;
			POSIX::_exit(0);
		}
		push @pids, $pid;
	}
	waitpid $_, 0 for @pids;
	my %st;
	$st{ HookTest::slurp("$dir/conc.$_") }++ for 1 .. 20;
	is_deeply(\%st, { 200 => 20 }, '20 concurrent deliveries over the shared socket: all 200');
	is($t->rows(q{event_id like 'evt_web_conc_%'}), 20, '20 rows');

	# SIGTERM (systemctl stop) between requests: the processes exit
	$t->stop_fcgi;
	ok(!(grep { kill 0, $_ } $fcgi->pids), 'SIGTERM: the responder processes exited');
}

my @errors = grep { /\[(error|crit|alert|emerg)\]/ && !/client intended to send too large/ } split /\n/, $t->web->log;
is_deeply(\@errors, [], 'no errors in the nginx error log but the refused bodies');
done_testing;
