# SPDX-License-Identifier: ISC
# Poisoned deliveries: a signed delivery that is valid must be stored, not
# refused forever.  Through lighttpd, one responder of eight threads that
# share one committing connection (group commit), and PostgreSQL.
#   - a header byte that is not UTF-8 (a Latin-1 User-Agent) is stored
#     escaped, and does not fail the batch it shares with other deliveries;
#   - an optional field that does not parse is stored NULL with a note;
#   - an event id over the limit is refused with a reason that says so.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig standard_sig);
use IO::Socket::INET;
use JSON::PP;
use POSIX qw(_exit);

my $secret = 'whsec_poison_test_5e6f7a8b9c';
my $std_secret = 'whsec_' . MIME::Base64::encode_base64('poison-standard-key-0123', '');
my $t = HookTest->new(
	intake => { threads => 8 },
	endpoints => {
		'st' => { provider => 'stripe', secrets => [$secret] },
		'std' => { provider => 'standard', secrets => [$std_secret] },
	},
	procs => 1,
	env => { HOOKINBOX_FAILPOINT => 'group-commit-pause' },
);

sub stripe_event {
	my ($id, %o) = @_;
	return encode_json({ id => $id, object => 'event', type => $o{type} // 'invoice.paid',
		created => $o{created} // 1700000000, data => { object => { id => 'in_1' } } });
}

sub send_stripe {
	my ($body, %h) = @_;
	return $t->post('st', $body, { 'Stripe-Signature' => stripe_sig($secret, $body),
		'Content-Type' => 'application/json', %h });
}

# a signed Stripe delivery sent as raw bytes (HTTP::Tiny refuses header
# bytes that are not ASCII); returns the status
sub raw_stripe {
	my ($body, %h) = @_;
	%h = ('Stripe-Signature' => stripe_sig($secret, $body), 'Content-Type' => 'application/json', %h);
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $t->httpd->{port}, Timeout => 30)
		or die "connect: $!";
	binmode $s;
	print $s "POST /hooks/st HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: "
		. length($body) . "\r\n" . join('', map { "$_: $h{$_}\r\n" } sort keys %h) . "\r\n$body";
	my $resp = '';
	while (sysread($s, my $buf, 65536)) { $resp .= $buf }
	close $s;
	return $resp =~ m{^HTTP/1\.[01] (\d{3})} ? $1 : 0;
}

# ---- a Latin-1 User-Agent, alone and in a batch with others
{
	is(raw_stripe(stripe_event('evt_latin1'), 'User-Agent' => "Caf\xe9-Hooks/1.0"), 200, 'Latin-1 User-Agent: 200');
	is($t->sql(q{select headers->>'User-Agent' from hookinbox.inbox where event_id = 'evt_latin1'}),
		'Caf\xe9-Hooks/1.0', 'Latin-1 User-Agent: stored with the byte escaped');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_latin1' and headers ? 'Content-Type'}),
		1, 'Latin-1 User-Agent: the other headers are kept');

	# twelve deliveries at once (each leader pauses before its batch so that
	# they share batches), every third with a Content-Type that is not UTF-8
	my $dir = $t->dir;
	my @pids;
	for my $i (1 .. 12) {
		my $pid = fork // die;
		if (!$pid) {
			my $st = raw_stripe(stripe_event("evt_batch_$i"),
				'Content-Type' => $i % 3 ? 'application/json' : "application/json; charset=\xff\xfe");
			open my $fh, '>', "$dir/batch.$i" or _exit(1);
			print $fh $st;
			close $fh;
			_exit(0);
		}
		push @pids, $pid;
	}
	waitpid $_, 0 for @pids;
	my %status;
	$status{ HookTest::slurp("$dir/batch.$_") }++ for 1 .. 12;
	is_deeply(\%status, { 200 => 12 }, 'a batch with bad header bytes: all twelve answered 200');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id like 'evt_batch_%'}), 12,
		'a batch with bad header bytes: all twelve stored');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id like 'evt_batch_%'
		and headers->>'Content-Type' = 'application/json; charset=\xff\xfe'}), 4,
		'a batch with bad header bytes: the four bad headers stored escaped');
}

# ---- optional fields that do not parse: stored NULL, with a note
{
	my $long_type = 'a' x 300;
	my $r = send_stripe(stripe_event('evt_long_type', type => $long_type));
	is($r->{status}, 200, 'type over 255 bytes: stored (200)');
	is($t->sql(q{select coalesce(event_type, 'NULL') || '|' || intake_note from hookinbox.inbox
		where event_id = 'evt_long_type'}), 'NULL|type: over 255 bytes', 'type over 255 bytes: NULL, with a note');

	$r = send_stripe(stripe_event('evt_bad_created', created => 'yesterday'));
	is($r->{status}, 200, 'created that is not a number: stored (200)');
	is($t->sql(q{select coalesce(event_version::text, 'NULL') || '|' || event_type || '|' || intake_note
		from hookinbox.inbox where event_id = 'evt_bad_created'}),
		'NULL|invoice.paid|created: not an integer or RFC 3339 time', 'created that is not a number: NULL, with a note');

	my $sb = '{"type":"user.created","timestamp":"2024-01-01T00:00:00","data":{"id":"u_1"}}';
	$r = $t->post('std', $sb, { standard_sig($std_secret, 'msg_no_offset', $sb) });
	is($r->{status}, 200, 'Standard Webhooks timestamp without an offset: stored (200)');
	is($t->sql(q{select coalesce(event_version::text, 'NULL') || '|' || event_type || '|' || object_id || '|' || intake_note
		from hookinbox.inbox where event_id = 'msg_no_offset'}),
		'NULL|user.created|u_1|timestamp: not an integer or RFC 3339 time',
		'timestamp without an offset: version NULL, the other fields kept, a note');

	is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_latin1' and intake_note is null}), 1,
		'a delivery whose fields all parse has no note');
	like($t->responder_log, qr/outcome=accepted status=200 .*note="type: over 255 bytes"/,
		'the log line says what did not parse');
}

# ---- the event id: the one field that refuses, with a true reason
{
	my $rows = $t->sql('select count(*) from hookinbox.inbox');
	my $r = send_stripe(stripe_event('evt_' . ('x' x 300)));
	is($r->{status}, 400, 'event id over 255 bytes: 400');
	like($r->{content}, qr/event id over 255 bytes/, 'event id over 255 bytes: the reason says so');
	$r = send_stripe(encode_json({ id => 12, type => 't' }));
	like($r->{content}, qr/event id is not a string/, 'a numeric Stripe event id: the reason says so');
	is($t->sql('select count(*) from hookinbox.inbox'), $rows, 'refused ids stored nothing');
}

done_testing();
