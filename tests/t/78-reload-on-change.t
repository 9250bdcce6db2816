# SPDX-License-Identifier: ISC
# A secret rotation needs no command: the responder processes a web server
# spawned (here lighttpd, two of them) reload on their own within seconds
# of the secret file or the configuration changing on disk, as SIGHUP
# would have them (check, then re-execute with the socket kept open).  A
# broken configuration written meanwhile is refused and the running one
# kept, without retrying it until it changes again.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use Time::HiRes qw(sleep time);

my $old = 'whsec_watch_old_0123456789';
my $new = 'whsec_watch_new_9876543210';
my $t = HookTest->new(endpoints => { rot => { provider => 'stripe', secrets => [$old] } }, procs => 2);
my $dir = $t->dir;
my $secret_file = "$dir/secrets/ep-rot";
-f $secret_file or BAIL_OUT("no secret file at $secret_file");
HookTest::record_secret($old, $new);

my $n = 0;
sub post {
	my ($secret) = @_;
	my $body = sprintf '{"id":"evt_watch_%d","type":"invoice.paid","created":1}', ++$n;
	return $t->post('rot', $body, { 'Stripe-Signature' => stripe_sig($secret, $body) })->{status};
}
# every process answers alike: several requests in a row (lighttpd spreads them)
sub all_answer {
	my ($secret, $want) = @_;
	for (1 .. 8) { return 0 if post($secret) != $want }
	return 1;
}
sub replace_file {
	my ($path, $text) = @_;
	my $mode = (stat $path)[2] & 07777;
	open my $fh, '>', "$path.new" or die $!;
	print $fh $text;
	close $fh;
	chmod $mode, "$path.new";
	rename "$path.new", $path or die $!;
}

ok(all_answer($old, 200), 'the old secret is accepted');
is(post($new), 401, 'the new one is not yet');

# the rotation: the new secret replaces the old in the file, and nothing else is done
replace_file($secret_file, "$new\n");
my $t0 = time;
my $until = $t0 + 30;
sleep 0.5 until all_answer($new, 200) || time > $until;
my $took = time - $t0;
ok(all_answer($new, 200), sprintf('the new secret is accepted by every process, %.1f s after the file changed, no signal sent', $took));
cmp_ok($took, '<', 15, 'within the watch interval (5 s) and a reload');
ok(all_answer($old, 401), 'the old one is refused');
like($t->responder_log, qr/configuration or secret file changed: reloading/, 'the responders say why they reloaded');

# a broken configuration: refused, the running one kept
my $conf = HookTest::slurp($t->config);
my $reloads = () = $t->responder_log =~ /configuration reloaded/g;
replace_file($t->config, $conf . "this is not a key\n");
sleep 0.5 until $t->responder_log =~ /configuration not reloaded/ || time > $until + 30;
like($t->responder_log, qr/syntax error .*\n.*configuration not reloaded: keeping the running one/,
	'a broken configuration is refused, with its line');
sleep 6; # more than one watch interval: not retried while unchanged
ok(all_answer($new, 200), 'deliveries are still accepted with the running configuration');
my $refusals = () = $t->responder_log =~ /configuration not reloaded/g;
cmp_ok($refusals, '<=', 2, "refused once per process ($refusals), not every interval");
replace_file($t->config, $conf);
done_testing();
