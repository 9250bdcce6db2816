# SPDX-License-Identifier: ISC
# Apache 2.4 + mod_fcgid, running etc/apache/hookinbox-fcgid.conf as shipped
# (paths and body limits swapped for the test's): Apache starts the
# responder itself (FcgidWrapper ... virtual, HOOKINBOX_CONFIG from
# FcgidInitialEnv) as its unprivileged user.  Signed events are stored,
# bad signatures are 401 (so the headers got through, Authorization
# included), bodies over max_body or over LimitRequestBody are 413, chunked
# ones too (not mod_fcgid's 500 for a body over FcgidMaxRequestLen, not a
# 401 for the empty body mod_fcgid passes on), and the responder's request
# log lands in Apache's error log.
use strict;
use warnings;
use Test::More;
use HookTest::WebServers;

HookTest::WebServers::need(qw(apache2 mod_fcgid));

my $max_body = 4096;
my $limit = 8192;
my $t = HookTest::Web->new(intake => { max_body => $max_body }, endpoints => { HookTest::Web::endpoints() });
my $d = $t->dir;
mkdir "$d/fcgid";
HookTest::WebServers::give("$d/fcgid");
$t->apache(snippet => 'etc/apache/hookinbox-fcgid.conf', modules => [qw(alias fcgid)],
	subst => { 'LimitRequestBody 1048576' => "LimitRequestBody $limit",
		'-gt 1048576' => "-gt $limit",
		'FcgidMaxRequestLen 2097152' => 'FcgidMaxRequestLen ' . ($limit * 2),
		'FcgidMaxRequestInMem 1048576' => "FcgidMaxRequestInMem $limit" },
	extra => "FcgidIPCDir $d/fcgid\nFcgidProcessTableFile $d/fcgid/shm\n");

$t->intake_checks(label => 'apache+fcgid', max_body => $max_body, limit => $limit);

# mod_fcgid reads the whole body first, so a chunked body arrives with its
# length (or is refused with 411); never a 5xx, never a partial row.
{
	my $b = HookTest::Web::stripe_event('evt_web_chunked');
	my $r = $t->post_chunked('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	if ($r->{status} == 411) {
		is($t->rows(q{event_id = 'evt_web_chunked'}), 0, 'chunked body: 411, nothing stored');
	} else {
		is($r->{status}, 200, 'chunked body: 200');
		is($t->rows(q{event_id = 'evt_web_chunked'}), 1, 'chunked body: stored whole');
	}
}

# A chunked body over LimitRequestBody (and FcgidMaxRequestLen) declares no
# length to refuse early: a 4xx all the same (not mod_fcgid's 500, which
# the snippet avoids by keeping FcgidMaxRequestLen above LimitRequestBody),
# and nothing is stored.
{
	my $b = HookTest::Web::stripe_event('evt_web_chunked_huge', pad => 'x' x ($limit * 10));
	my $r = $t->post_chunked('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($HookTest::Web::STRIPE, $b) });
	ok($r->{status} >= 400 && $r->{status} < 500, "chunked body over LimitRequestBody: a 4xx ($r->{status})");
	is($t->rows(q{event_id = 'evt_web_chunked_huge'}), 0, 'chunked body over LimitRequestBody: nothing stored');
}

# the processes Apache started: the responder, as the unprivileged user
{
	my @procs = grep { (readlink("/proc/$_/exe") // '') eq $t->fcgi_bin } map { m{/proc/(\d+)$} ? $1 : () } glob('/proc/[0-9]*');
	ok(@procs >= 1, 'mod_fcgid started responder processes (' . scalar(@procs) . ')');
	SKIP: {
		skip 'not run as root', 1 if $> != 0;
		is(scalar(getpwuid((stat("/proc/$procs[0]"))[4])), $HookTest::PG_USER, 'they run as the unprivileged user');
	}
}

like($t->web->log, qr/prog=hookinbox\.fcgi event=request endpoint=gh outcome=accepted/,
	"the responder's request log is in Apache's error log");
unlike($t->web->log, qr/\[fcgid:(error|emerg)\]/, 'no mod_fcgid errors in the error log');
done_testing;
