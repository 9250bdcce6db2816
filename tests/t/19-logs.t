# SPDX-License-Identifier: ISC
# The responder's log lines ("quiet when well, loud when not"):
# a start line per process with version, configuration file, endpoints as
# name:provider and the commit mode, never a secret; one request line per
# request with a request id unique in the run, the web server's
# X-Request-Id only when it is a plain token, the event id of stored
# deliveries and never of rejected ones (their bodies are not trusted);
# and with [log] format = json, numbers written as JSON numbers.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use JSON::PP;

my $secret = 'whsec_logs_test_5e6f7a8b9c0d';
my $t = HookTest->new(
	endpoints => {
		'pay' => { provider => 'stripe', secrets => [$secret] },
		'gh' => { provider => 'github', secrets => ['gh-logs-secret-0123456789'] },
	},
	procs => 2,
);

sub event { my ($id) = @_; return encode_json({ id => $id, object => 'event', type => 'invoice.paid',
	created => time, data => { object => { id => 'in_1', object => 'invoice' } } }) }
sub send_pay {
	my ($body, %o) = @_;
	return $t->post('pay', $body, { 'Stripe-Signature' => stripe_sig($o{secret} // $secret, $body),
		'Content-Type' => 'application/json', %{ $o{headers} // {} } });
}

my $r = send_pay(event('evt_logs_accepted_1'), headers => { 'X-Request-Id' => 'lb-7f3a:01.x_y' });
is($r->{status}, 200, 'accepted');
my $id = $r->{json}{id};
is(send_pay(event('evt_logs_accepted_1'))->{status}, 200, 'redelivery');
is(send_pay(event('evt_logs_rejected_sig'), secret => 'whsec_wrong_000000000000')->{status}, 401,
	'a bad signature is rejected');
is($t->post('nowhere', event('evt_logs_rejected_404'))->{status}, 404, 'an unknown endpoint is rejected');
is(send_pay(event('evt_logs_bad_xrid'), headers => { 'X-Request-Id' => 'evil"xrid marker' })->{status}, 200,
	'accepted with an X-Request-Id that is no plain token');
is(send_pay(event('evt_logs_long_xrid'), headers => { 'X-Request-Id' => 'L' x 65 })->{status}, 200,
	'accepted with an X-Request-Id over 64 bytes');
is($t->sql(q{select count(*) from hookinbox.inbox where event_id like 'evt_logs_rejected%'}), 0,
	'no rejected delivery stored');

my $log = $t->responder_log;
my @start = grep { /event=start / } split /\n/, $log;
is(scalar(@start), 2, 'one start line per responder process') or diag $log;
my $config = $t->config;
for (@start) {
	like($_, qr/ version=\d+\.\d+\.\d+ config=\Q$config\E endpoints=gh:github,pay:stripe mode=single-row threads=1 pid=\d+$/,
		'start line: version, configuration file, endpoints, mode');
}
unlike($log, qr/\Q$secret\E|gh-logs-secret|secrets\/ep-/, 'no secret and no secret file in the log');

my @req = grep { /event=request / } split /\n/, $log;
is(scalar(@req), 6, 'one request line per request');
my %rid;
for (@req) {
	my ($rid) = /request_id=(\d+-\d+)(?: |$)/;
	ok(defined $rid, "request id pid-n on: $_");
	$rid{$rid // ''}++;
	like($_, qr/ status=\d{3} /, 'status');
	like($_, qr/ ms=\d+\.\d\d /, 'duration');
	like($_, qr/^ts=\S+ prog=hookinbox\.fcgi event=request endpoint=\S+ /, 'endpoint');
}
is(scalar(keys %rid), 6, 'request ids are unique');
like($req[0], qr/endpoint=pay outcome=accepted status=200 id=$id secret=0 event_id=evt_logs_accepted_1 .*upstream_request_id=lb-7f3a:01\.x_y$/,
	'accepted: the event id and the web server\'s request id');
like($req[1], qr/outcome=duplicate status=200 id=$id .*event_id=evt_logs_accepted_1 /, 'duplicate: the event id');
like($req[2], qr/outcome=rejected status=401 /, 'bad signature line');
like($req[3], qr/endpoint=\(unknown\) outcome=rejected status=404 /, 'unknown endpoint line');
unlike($log, qr/evt_logs_rejected/, 'never the event id of a rejected request');
unlike($log, qr/xrid marker|LLLLLLLL/, 'an X-Request-Id that is no plain token is not logged');
like($req[4], qr/event_id=evt_logs_bad_xrid .*request_id=\d+-\d+$/, 'such a request still has its own id');

# SIGHUP: each process re-executes itself with the same pid; its start line
# comes again and its request count goes on, so request ids stay unique
my @pids = map { /pid=(\d+)$/ } @start;
kill 'HUP', @pids;
for (1 .. 200) {
	last if (() = $t->responder_log =~ /event=start /g) >= 4;
	select(undef, undef, undef, 0.05);
}
my @restart = grep { /event=start / } split /\n/, $t->responder_log;
is_deeply([sort map { /pid=(\d+)$/ } @restart], [sort((@pids) x 2)], 'after SIGHUP a start line per process, same pids');
is(send_pay(event("evt_logs_after_hup_$_"))->{status}, 200, "accepted after the reload ($_)") for 1 .. 4;
my @all = map { /request_id=(\d+-\d+)/ } grep { /event=request / } split /\n/, $t->responder_log;
is(scalar(@all), 10, 'ten request lines');
my %seen;
is(scalar(grep { !$seen{$_}++ } @all), 10, 'request ids unique across the reload') or diag join(' ', @all);
for my $pid (@pids) {
	my @n = map { /-(\d+)$/ } grep { /^$pid-/ } @all;
	is_deeply(\@n, [sort { $a <=> $b } @n], "process $pid counts on: @n");
}

# group commit, [log] format = json: the start line says so; numbers are numbers
$t->{o}{intake}{threads} = 3;
$t->{o}{extra_config} = "[log]\nformat = json\n";
$t->write_config;
truncate "$t->{dir}/responder.log", 0;
$t->httpd->restart;
is(send_pay(event('evt_logs_json_1'))->{status}, 200, 'json: accepted');
is(send_pay(event('evt_logs_json_rej'), secret => 'whsec_wrong_000000000000')->{status}, 401, 'json: rejected');
my @lines = grep { /^\{/ } split /\n/, $t->responder_log;
my @objs = map { my $o = eval { JSON::PP::decode_json($_) }; $o // { bad => $_ } } @lines;
is_deeply([grep { $_->{bad} } @objs], [], 'every JSON line parses');
my @js = grep { ($_->{event} // '') eq 'start' } @objs;
ok(scalar(@js) >= 1, 'json: start lines');
is($js[0]{mode}, 'group-commit', 'json: group commit');
like($lines[0], qr/"threads":3[,}]/, 'json: threads is a number');
my @jr = grep { ($_->{event} // '') eq 'request' } @objs;
is(scalar(@jr), 2, 'json: two request lines');
my ($acc) = grep { /"event":"request"/ && /"outcome":"accepted"/ } @lines;
like($acc, qr/"status":200,/, 'json: status is a number');
like($acc, qr/"id":\d+,/, 'json: id is a number');
like($acc, qr/"secret":0,/, 'json: secret index is a number');
like($acc, qr/"ms":\d+\.\d+,/, 'json: ms is a number');
like($acc, qr/"request_id":"\d+-\d+"/, 'json: the request id is a string');
is($jr[0]{event_id}, 'evt_logs_json_1', 'json: the event id');
ok(!exists $jr[1]{event_id}, 'json: no event id when rejected');
unlike($t->responder_log, qr/evt_logs_json_rej|\Q$secret\E/, 'json: no rejected event id, no secret');
done_testing();
