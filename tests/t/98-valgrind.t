# SPDX-License-Identifier: ISC
# The responder under valgrind (memcheck, full leak check): a small intake
# scenario through lighttpd in process mode and with request threads, then
# every valgrind log must report zero errors and zero definite or indirect
# leaks.  Runs only with HOOKINBOX_VALGRIND=1 (the harness then starts the
# responder under valgrind, one log per process: <testdir>/valgrind.<pid>.log).
#
#   HOOKINBOX_VALGRIND=1 HOOKINBOX_TOP=$PWD prove -v -I tests/lib tests/t/98-valgrind.t
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig github_sig standard_sig);
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(sleep time);

plan skip_all => 'set HOOKINBOX_VALGRIND=1 to run the responder under valgrind' unless $ENV{HOOKINBOX_VALGRIND};
plan skip_all => 'valgrind is not installed' unless -x '/usr/bin/valgrind';

my $st_secret = 'whsec_valgrind_1a2b3c4d5e';
my $gh_secret = 'gh-valgrind-secret-86420';
my $std_secret = 'whsec_' . encode_base64('valgrind-standard-key-01', '');
my $sl_secret = 'slack-valgrind-secret-7531';
my $t = HookTest->new(
	intake => { max_body => 8192 },
	endpoints => {
		'st' => { provider => 'stripe', secrets => ['old-secret-rotated-out', $st_secret] },
		'gh' => { provider => 'github', secrets => [$gh_secret] },
		'std' => { provider => 'standard', secrets => [$std_secret] },
		'sl' => { provider => 'slack', secrets => [$sl_secret] },
	},
);

# Its logs are --quiet (empty when clean), so also have valgrind write XML,
# which records that the run FINISHED (the leak check ran at exit).  The
# responders of the first start served nothing and wrote no XML: their logs,
# when valgrind got to write one before the stop, are not checked.
my %seen;
$t->httpd->stop;
$seen{$_}++ for glob($t->dir . '/valgrind.*.log');
$t->httpd->restart(VALGRIND_OPTS => '--xml=yes --xml-file=' . $t->dir . '/vgxml.%p.xml');

sub post_stripe {
	my ($b, %o) = @_;
	return $t->post('st', $b, { 'Stripe-Signature' => stripe_sig($o{secret} // $st_secret, $b, $o{t}),
		'Content-Type' => 'application/json' });
}

sub scenario {
	my ($mode) = @_;
	my $ev = encode_json({ id => "evt_vg_$mode", object => 'event', type => 'invoice.paid', created => 1700000000,
		data => { object => { id => 'in_1' } } });
	is(post_stripe($ev)->{status}, 200, "$mode: stripe accepted");
	is(post_stripe($ev)->{json}{duplicate}, JSON::PP::true, "$mode: stripe redelivery is a duplicate");
	is(post_stripe($ev, secret => 'wrong-secret-000000')->{status}, 401, "$mode: wrong secret: 401");
	is(post_stripe($ev, t => time() - 3600)->{status}, 401, "$mode: stale: 401");
	is(post_stripe('{"object":"event"}')->{status}, 400, "$mode: no event id: 400");
	is(post_stripe('{"id":"x","a":' . ('[' x 2000) . (']' x 2000) . '}')->{status}, 400, "$mode: deep JSON: 400");
	is(post_stripe('{"id":"' . ('z' x 9000) . '"}')->{status}, 413, "$mode: too large: 413");
	is($t->post('nope', '{}', {})->{status}, 404, "$mode: unknown endpoint: 404");
	is($t->post('st', '', {}, method => 'GET')->{status}, 405, "$mode: GET: 405");

	my $gb = encode_json({ action => 'opened', pull_request => { id => 7 }, m => $mode });
	my %gh = ('X-Hub-Signature-256' => github_sig($gh_secret, $gb), 'X-GitHub-Event' => 'pull_request');
	is($t->post('gh', $gb, { %gh, 'X-GitHub-Delivery' => "vg-$mode-1" })->{status}, 200, "$mode: github accepted");
	is($t->post('gh', $gb, { %gh, 'X-GitHub-Delivery' => "vg-$mode-2" })->{json}{duplicate}, JSON::PP::true,
		"$mode: github body replay is a duplicate");

	my $sb = encode_json({ type => 'user.created', timestamp => '2024-01-01T00:00:00Z', data => { id => "u_$mode" } });
	is($t->post('std', $sb, { standard_sig($std_secret, "msg_vg_$mode", $sb) })->{status}, 200,
		"$mode: standard webhooks accepted");

	my $cb = '{"type":"url_verification","challenge":"vg-challenge-' . $mode . '"}';
	my $ts = int(time());
	my $r = $t->post('sl', $cb, { 'X-Slack-Request-Timestamp' => $ts,
		'X-Slack-Signature' => 'v0=' . Digest::SHA::hmac_sha256_hex("v0:$ts:$cb", $sl_secret),
		'Content-Type' => 'application/json' });
	is($r->{json}{challenge}, "vg-challenge-$mode", "$mode: slack challenge echoed") or diag("$r->{status} $r->{content}");

	# the database goes away and comes back: 503, then the retry is stored
	$t->pg->stop('fast');
	my $ob = encode_json({ id => "evt_vg_outage_$mode", object => 'event', type => 't' });
	is(post_stripe($ob)->{status}, 503, "$mode: database down: 503");
	$t->pg->start;
	is(post_stripe($ob)->{status}, 200, "$mode: after the restart: accepted");
}

# stop lighttpd, which stops its responders; wait until every valgrind'ed
# process has exited (its log is complete only then), then check the logs
sub check_logs {
	my ($mode, $seen) = @_;
	my @logs = grep { !$seen->{$_}++ } glob($t->dir . '/valgrind.*.log');
	ok(@logs > 0, "$mode: valgrind logs written (" . scalar(@logs) . ')');
	my @pids = map { /valgrind\.(\d+)\.log$/ ? $1 : () } @logs;
	# the responders really run under memcheck (its logs stay empty when clean)
	for my $pid (@pids) {
		my $exe = readlink("/proc/$pid/exe") // '';
		like($exe, qr/memcheck/, "$mode: responder $pid runs under memcheck");
	}
	# lighttpd stops its responders with SIGTERM: they drain, free and exit,
	# and valgrind does its leak check at that exit
	$t->httpd->stop;
	my $deadline = time() + 90;
	while (grep { kill 0, $_ } @pids) {
		last if time() > $deadline;
		sleep 0.2;
	}
	is(scalar(grep { kill 0, $_ } @pids), 0, "$mode: every responder under valgrind has exited");
	for my $log (@logs) {
		open my $fh, '<', $log or die "$log: $!";
		my $text = do { local $/; <$fh> } // '';
		close $fh;
		my $name = $log =~ s{.*/}{}r;
		my @errors = $text =~ /^==\d+== (Invalid (?:read|write|free).*|Conditional jump.*|Use of uninitialised.*|Syscall param.*|Mismatched free.*|Source and destination overlap.*|Argument .* of function .* has a fishy.*)$/mg;
		is(scalar @errors, 0, "$mode: $name: no memory errors") or diag($text);
		my ($definite) = $text =~ /definitely lost: ([\d,]+) bytes/;
		my ($indirect) = $text =~ /indirectly lost: ([\d,]+) bytes/;
		ok(!$definite || $definite eq '0', "$mode: $name: no definite leaks") or diag($text);
		ok(!$indirect || $indirect eq '0', "$mode: $name: no indirect leaks") or diag($text);
		unlike($text, qr/ERROR SUMMARY: [1-9]/, "$mode: $name: error summary clean");
		note("$name:\n$text") if length $text;
		my ($pid) = $log =~ /valgrind\.(\d+)\.log$/;
		my $xml = do { local $/; open my $x, '<', $t->dir . "/vgxml.$pid.xml" or return fail("$mode: $pid: no XML"); <$x> } // '';
		like($xml, qr{<state>FINISHED</state>}, "$mode: $name: valgrind finished its run (leak check done)");
		unlike($xml, qr{<error>}, "$mode: $name: no error in the XML report") or diag($xml);
	}
}

# configuration load and free, checked directly (not quiet: the summary must be there)
{
	my $out = `/usr/bin/valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=42 @{[ $t->{top} ]}/obj/test/hookinbox.fcgi --check -c @{[ $t->config ]} 2>&1`;
	is($? >> 8, 0, '--check under valgrind: exit 0, no errors or leaks') or diag($out);
	like($out, qr/ERROR SUMMARY: 0 errors/, '--check under valgrind: error summary clean');
	like($out, qr/All heap blocks were freed|definitely lost: 0 bytes/, '--check under valgrind: no leak');
}

scenario('process');
check_logs('process', \%seen);

$t->{o}{intake}{threads} = 4;
$t->write_config;
$t->httpd->{procs} = 1;
$t->httpd->start;
scenario('threads');
check_logs('threads', \%seen);

done_testing();
