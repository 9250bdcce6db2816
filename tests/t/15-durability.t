# SPDX-License-Identifier: ISC
# Durability and liveness that do not depend on the server's settings.
#   - synchronous_commit: the role says off, the responder's session says on;
#     an immediate stop right after the deliveries loses none that was
#     answered 200 (the WAL writer is slowed to 10 s, so that with the
#     role's setting acknowledged commits would still sit in WAL buffers);
#   - a held lock, then a slow statement: 503 with Retry-After after
#     lock_timeout / statement_timeout, nothing stored, and the retry after
#     the lock is gone is stored;
#   - configuration lines longer than libinih's 200-byte buffer.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use JSON::PP;
use POSIX qw(_exit);
use Time::HiRes qw(sleep);

my $secret = 'whsec_durable_test_1a2b3c4d5e';
my $t = HookTest->new(
	intake => { lock_timeout => 300, statement_timeout => 60000 },
	endpoints => { 'st' => { provider => 'stripe', secrets => [$secret] } },
	pg => { extra => "wal_writer_delay = 10000ms\nwal_writer_flush_after = 0\n" },
	procs => 2,
);

sub deliver {
	my ($id) = @_;
	my $b = encode_json({ id => $id, type => 'invoice.paid', created => 1700000000 });
	return $t->post('st', $b, { 'Stripe-Signature' => stripe_sig($secret, $b) });
}

# ---- synchronous_commit = off for the role: nothing acknowledged is lost
{
	$t->sql('alter role hookinbox_intake set synchronous_commit = off');
	$t->httpd->restart; # new sessions pick up the role's setting
	my @acked;
	for my $i (1 .. 40) {
		my $r = deliver("evt_sync_$i");
		push @acked, "evt_sync_$i" if $r->{status} == 200;
	}
	is(scalar(@acked), 40, 'forty deliveries answered 200');
	$t->pg->stop('immediate');
	$t->pg->start;
	my $in = $t->sql(q{select count(*) from hookinbox.inbox where event_id like 'evt_sync_%'});
	is($in, 40, 'after an immediate stop every acknowledged delivery is there');
	$t->sql('alter role hookinbox_intake reset synchronous_commit');
}

# a psql session that holds an ACCESS EXCLUSIVE lock on the inbox until killed
sub hold_lock {
	my $pg = $t->pg;
	my $pid = fork // die;
	if (!$pid) {
		open STDERR, '>', '/dev/null';
		open STDOUT, '>', '/dev/null';
		exec("$pg->{bin}/psql", '-X', '-q', '-h', $pg->{sock}, '-p', $pg->{port}, '-U', 'postgres',
			'-d', $pg->{dbname}, '-c', 'begin; lock table hookinbox.inbox in access exclusive mode; '
			. 'select pg_sleep(120)') or _exit(1);
	}
	for (1 .. 200) {
		last if $t->sql(q{select count(*) from pg_locks where relation = 'hookinbox.inbox'::regclass
			and mode = 'AccessExclusiveLock' and granted}) > 0;
		sleep 0.05;
	}
	return $pid;
}

sub release_lock {
	my ($pid) = @_;
	$t->sql(q{select pg_terminate_backend(pid) from pg_stat_activity where query like '%pg_sleep(120)%'
		and pid <> pg_backend_pid()});
	waitpid $pid, 0;
}

# ---- a held lock: lock_timeout (300 ms) answers 503 with Retry-After
for my $case (['lock_timeout', { lock_timeout => 300, statement_timeout => 60000 }],
	['statement_timeout', { lock_timeout => 60000, statement_timeout => 300 }]) {
	my ($what, $intake) = @$case;
	$t->{o}{intake} = $intake;
	$t->write_config;
	$t->httpd->restart;
	my $rows = $t->sql('select count(*) from hookinbox.inbox');
	my $pid = hold_lock();
	my $r = deliver("evt_$what");
	is($r->{status}, 503, "$what: a delivery behind a held lock is answered 503");
	ok(defined $r->{headers}{'retry-after'}, "$what: with Retry-After");
	release_lock($pid);
	is($t->sql('select count(*) from hookinbox.inbox'), $rows, "$what: nothing stored");
	$r = deliver("evt_$what");
	is($r->{status}, 200, "$what: the retry after the lock is gone is stored");
	is($r->{json}{duplicate}, JSON::PP::false, "$what: as a new delivery");
}
like($t->responder_log, qr/could not store delivery .*(lock timeout|statement timeout)/,
	'the log says the statement timed out');

# ---- configuration lines longer than 200 bytes
{
	my $long_name = 'hookinbox-' . ('x' x 230);
	(my $conf = HookTest::slurp($t->config)) =~ s/^(conninfo = .*)$/$1 application_name=$long_name/m;
	$conf .= "[endpoint tw]\nprovider = twilio\nsecret_file = " . $t->write_secret('tw', 'tw-token-0123456789')
		. "\npublic_url = https://hooks.example.com/" . ('p' x 250) . "   ; a long URL\n";
	open my $fh, '>', $t->config or die $!;
	print $fh $conf;
	close $fh;
	my @long = grep { length($_) > 200 } split /\n/, $conf;
	is(scalar(@long), 2, 'two configuration lines over 200 bytes');
	my $out = `$t->{top}/obj/test/hookinbox.fcgi -c @{[ $t->config ]} --check 2>&1`;
	is($? >> 8, 0, 'long lines: --check accepts them') or diag $out;
	$t->httpd->restart;
	my $r = deliver('evt_long_conninfo');
	is($r->{status}, 200, 'a delivery through a responder whose conninfo is 300 bytes long');
	is($t->sql(q{select count(*) from pg_stat_activity where application_name like 'hookinbox-xxxx%'}) > 0 ? 1 : 0, 1,
		'the long conninfo was read whole (its application_name is the session\'s)');
	$conf =~ s/^provider = twilio$/provider = nosuch/m;
	$conf .= "[intake]\nbogus_" . ('k' x 220) . " = 1\n";
	open $fh, '>', $t->config or die $!;
	print $fh $conf;
	close $fh;
	$out = `$t->{top}/obj/test/hookinbox.fcgi -c @{[ $t->config ]} --check 2>&1`;
	isnt($? >> 8, 0, 'a bad long line is still an error');
	like($out, qr/unknown provider "nosuch"/, 'and the errors read as for short lines');
}

done_testing();
