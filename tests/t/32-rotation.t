# SPDX-License-Identifier: ISC
# Rolling a secret while deliveries keep flowing: none is rejected.
#
# Two background senders post signed Stripe deliveries without a pause,
# first with the old secret.  The new secret is appended to the secret file
# and this test's responder processes get SIGHUP (each checks the
# configuration, finishes the requests in progress and re-executes itself;
# the listening socket stays open).  The senders switch to the new secret,
# the old one is removed and the responders get SIGHUP again.  Every
# response must be a 2xx, every 2xx a row, and the log must say which
# secret index matched: 0 (old), then 1 (new beside old), then 0 again (new
# alone) -- never the secret itself.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use JSON::PP;
use HTTP::Tiny;
use POSIX qw(_exit);
use Time::HiRes qw(sleep time);

my $old = 'whsec_rotation_old_0123456789';
my $new = 'whsec_rotation_new_9876543210';
my $t = HookTest->new(endpoints => { rot => { provider => 'stripe', secrets => [$old] } }, procs => 2);
my $dir = $t->dir;
my $secret_file = "$dir/secrets/ep-rot";
-f $secret_file or BAIL_OUT("no secret file at $secret_file");
HookTest::record_secret($old, $new);

sub responder_pids { return $t->httpd->responders }

sub reloads { my @n = $t->responder_log =~ /configuration reloaded/g; return scalar @n }

sub set_which {
	my ($which) = @_;
	open my $fh, '>', "$dir/which.tmp" or die $!;
	print $fh $which;
	close $fh;
	rename "$dir/which.tmp", "$dir/which" or die $!;
}

sub results {
	my @r;
	for my $f (glob "$dir/results.*") {
		open my $fh, '<', $f or next;
		push @r, map { chomp; [ split / / ] } <$fh>;
	}
	return @r;
}

sub wait_for {
	my ($what, $cond, $secs) = @_;
	my $until = time + ($secs // 30);
	while (time < $until) {
		return 1 if $cond->();
		sleep 0.05;
	}
	diag("timed out waiting for $what");
	return 0;
}

# ---------------------------------------------------------------- the senders

set_which('old');
my @senders;
for my $s (1, 2) {
	my $pid = fork // die;
	if (!$pid) {
		my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
		my %key = (old => $old, new => $new);
		open my $out, '>', "$dir/results.$s" or _exit(1);
		$out->autoflush(1);
		my $t0 = time;
		for (my $i = 1; $i <= 5000 && time - $t0 < 120 && !-e "$dir/stop"; $i++) {
			open my $w, '<', "$dir/which" or next;
			my $which = <$w>;
			close $w;
			my $body = encode_json({ id => "evt_rot_${s}_$i", type => 'rotation.tick', created => int(time),
				data => { object => { id => "obj_$s" } } });
			my $r = $http->request('POST', $t->url('rot'), { content => $body,
				headers => { 'Stripe-Signature' => stripe_sig($key{$which}, $body), 'Content-Type' => 'application/json' } });
			my $id = eval { decode_json($r->{content})->{id} } // '-';
			print $out "evt_rot_${s}_$i $r->{status} $id $which\n";
		}
		close $out;
		_exit(0);
	}
	push @senders, $pid;
}

my @pids = $t->httpd->signalable_responders(60);
is(scalar(@pids), 2, 'two responder processes found under this test\'s lighttpd') or diag("pids: @pids");
ok(wait_for('deliveries with the old secret', sub { results() >= 30 }), 'deliveries flowing with the old secret');

# 1. the new secret beside the old one
{
	open my $fh, '>>', $secret_file or die $!;
	print $fh "$new\n";
	close $fh;
}
my $reloads = reloads();
kill 'HUP', @pids;
ok(wait_for('the first reload', sub { reloads() >= $reloads + @pids }), 'every responder reloaded with both secrets');
my $n = results();
ok(wait_for('deliveries after the first reload', sub { results() >= $n + 30 }), 'deliveries flow on after the reload');

# 2. the senders switch to the new secret
set_which('new');
$n = results();
ok(wait_for('deliveries with the new secret', sub { (grep { $_->[3] eq 'new' } results()) >= 30 }),
	'deliveries flowing with the new secret');

# 3. the old secret removed
{
	open my $fh, '>', "$secret_file.tmp" or die $!;
	print $fh "$new\n";
	close $fh;
	chmod 0600, "$secret_file.tmp";
	rename "$secret_file.tmp", $secret_file or die $!;
}
$reloads = reloads();
is_deeply([ sort { $a <=> $b } responder_pids() ], [ sort { $a <=> $b } @pids ], 'the responders kept their process ids through re-exec');
kill 'HUP', @pids;
ok(wait_for('the second reload', sub { reloads() >= $reloads + @pids }), 'every responder reloaded with the new secret alone');
$n = results();
ok(wait_for('deliveries after the second reload', sub { results() >= $n + 30 }), 'deliveries flow on after the second reload');

open my $stop, '>', "$dir/stop" or die $!;
close $stop;
waitpid $_, 0 for @senders;

# ---------------------------------------------------------------- what happened

my @r = results();
my @bad = grep { $_->[1] !~ /^2\d\d$/ } @r;
ok(@r > 100, 'over a hundred deliveries sent (' . scalar(@r) . ')');
is(scalar(@bad), 0, 'no delivery was refused during the rotation')
	or diag(join "\n", map { "@$_" } @bad[0 .. ($#bad < 9 ? $#bad : 9)]);
my %ids = map { ($_->[2] => $_->[0]) } grep { $_->[1] =~ /^2/ } @r;
is($t->sql('select count(*) from hookinbox.inbox'), scalar(@r), 'every 2xx is a row, one per delivery');
my $stored = $t->sql(q{select string_agg(id || '=' || event_id, ',') from hookinbox.inbox});
my %row = map { split /=/ } split /,/, $stored;
is(scalar(grep { ($row{$_} // '') ne $ids{$_} } keys %ids), 0, 'each answered id is the row of that delivery');
ok((grep { $_->[3] eq 'old' } @r) && (grep { $_->[3] eq 'new' } @r), 'both secrets were used');

# the log says which secret matched: 0 (old), then 1 (new beside old), then 0 (new alone)
my $log = $t->responder_log;
my (@idx, $before_reload);
for my $line (split /\n/, $log) {
	$before_reload //= [@idx] if $line =~ /configuration reloaded/;
	push @idx, $1 if $line =~ /endpoint=rot outcome=accepted .*secret=(\d+)/;
}
is(scalar(@idx), scalar(@r), 'log: one line with a secret index per delivery');
is($idx[0], 0, 'log: the first deliveries matched secret 0 (the old one)');
is(scalar(grep { $_ != 0 } @{ $before_reload // [1] }), 0, 'log: before the first reload only secret 0 matched');
ok(scalar(grep { $_ == 1 } @idx) >= 30, 'log: with both secrets, the new one matched as secret 1');
is_deeply([ @idx[-20 .. -1] ], [ (0) x 20 ], 'log: with the new secret alone it is secret 0');
unlike($log, qr/\Q$old\E|\Q$new\E/, 'log: neither secret');
unlike($log, qr/v1=[0-9a-f]{64}/, 'log: no signature');

done_testing();
