# SPDX-License-Identifier: ISC
# Apache 2.4 + mod_proxy_fcgi, running etc/apache/hookinbox-proxy-fcgi.conf
# as shipped (paths and body limit swapped for the test's), in front of the
# responder on a unix socket served by spawn-fcgi: signed events from
# Stripe, GitHub, Standard Webhooks and a scheme signing in Authorization
# reach the responder and are stored; bad signatures are 401 (so the headers
# got through), bodies over max_body or over LimitRequestBody are 413.
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;

HookTest::WebServers::need(qw(apache2 mod_proxy_fcgi spawn-fcgi));

my $max_body = 4096;
my $limit = 8192;
my $t = HookTest::Web->new(intake => { max_body => $max_body }, endpoints => { HookTest::Web::endpoints() });
$t->spawn_fcgi;
$t->apache(snippet => 'etc/apache/hookinbox-proxy-fcgi.conf', modules => [qw(proxy proxy_fcgi reqtimeout)],
	subst => { 'LimitRequestBody 1048576' => "LimitRequestBody $limit" });

$t->intake_checks(label => 'apache+proxy_fcgi', max_body => $max_body, limit => $limit);

# A chunked body: mod_proxy_fcgi passes no CONTENT_LENGTH for it, so the
# responder answers 411 (providers send Content-Length); never a 5xx, never
# a partial row.
{
	my $b = HookTest::Web::stripe_event('evt_web_chunked');
	my $r = $t->post_chunked('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	if ($r->{status} == 411) {
		is($t->rows(q{event_id = 'evt_web_chunked'}), 0, "chunked body: 411, nothing stored");
	} else {
		is($r->{status}, 200, 'chunked body: 200 (this Apache passes its length)');
		is($t->rows(q{event_id = 'evt_web_chunked'}), 1, 'chunked body: stored whole');
	}
}

# The responder runs as an unprivileged user when the suite runs as root.
SKIP: {
	skip 'not run as root', 1 if $> != 0;
	my $pid = ($t->{fcgi}->pids)[0];
	my $uid = (stat("/proc/$pid"))[4];
	is(scalar(getpwuid($uid)), $HookTest::PG_USER, 'the responder runs as the unprivileged user');
}

# The pitfall CGIPassAuth handles is real: without it Authorization never
# reaches the responder (401), while the providers' own headers still do.
{
	$t->web->stop;
	$t->apache(snippet => 'etc/apache/hookinbox-proxy-fcgi.conf', modules => [qw(proxy proxy_fcgi reqtimeout)],
		subst => { 'LimitRequestBody 1048576' => "LimitRequestBody $limit", 'CGIPassAuth On' => 'CGIPassAuth Off' });
	my $b = JSON::PP::encode_json({ id => 'auth_web_off', type => 'thing.done' });
	my $auth = 'HMAC-SHA256=' . Digest::SHA::hmac_sha256_hex($b, $HookTest::Web::AUTH);
	HookTest::record_secret($auth);
	my $r = $t->post('auth', $b, { Authorization => $auth });
	is($r->{status}, 401, 'CGIPassAuth Off: Authorization withheld, 401');
	$b = HookTest::Web::stripe_event('evt_web_off');
	$r = $t->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	is($r->{status}, 200, 'CGIPassAuth Off: Stripe-Signature still passes');
}

unlike($t->web->log, qr/\[proxy_fcgi:error\]|AH01071/, 'no proxy_fcgi errors in the error log');
done_testing;
