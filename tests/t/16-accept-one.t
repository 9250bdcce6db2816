# SPDX-License-Identifier: ISC
# accept_one(), the responder's call in single-row mode, answers and stores
# exactly as accept_batch() does for that one delivery.  The same script
# of deliveries runs against two clusters, one calling accept_batch() with
# arrays of one, the other accept_one(), as the responder's role: new and
# repeated signed ids, one id on two endpoints, unsigned ids judged by
# content (a repeat, other types held up to the cap, an id owned by other
# content), a signed-content hash, rows deleted (the ledger answers), NULL
# fields and a note.  Then the answers' shapes (duplicate and held flags,
# which earlier answer an id repeats) and the inbox rows must be the same;
# ids themselves may differ, as a refused insert takes a sequence number.
use strict;
use warnings;
use Test::More;
use HookTest;
use File::Temp qw(tempdir);
use Digest::SHA qw(sha256_hex);

my $dir = tempdir('accept-one-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $dir;

my $q = sub { defined $_[0] ? "'" . ($_[0] =~ s/'/''/gr) . "'" : 'null' };
my $hex = sub { defined $_[0] ? "'\\x" . unpack('H*', $_[0]) . "'" : 'null' };

# a delivery: endpoint, provider, event id, type, body, body_dedup, signed hash, note
sub args {
	my ($d) = @_;
	my ($ep, $prov, $id, $type, $body, $dedup, $signed, $note) = @$d;
	return ($q->($ep), $q->($prov), "'acct_1'", "'live'", $q->($id), $q->($type),
		defined $type ? "'obj_1'" : 'null', defined $type ? '7' : 'null',
		$q->(qq({"X-Id": "$id"})), $hex->($body), $dedup ? 'true' : 'false', $hex->($signed), $q->($note));
}
my @types = qw(text text text text text text text bigint jsonb bytea boolean bytea text);

my %how = (
	batch => sub {
		my @a = args(@_);
		'select id, duplicate, held from hookinbox.accept_batch('
			. join(', ', map { "array[$a[$_]]::$types[$_]\[]" } 0 .. $#a) . ')';
	},
	one => sub {
		my @a = args(@_);
		'select id, duplicate, held from hookinbox.accept_one('
			. join(', ', map { "$a[$_]::$types[$_]" } 0 .. $#a) . ')';
	},
);

my $body = sub { '{"id":"' . $_[0] . '","data":{"object":"' . ('x' x 300) . "\"}}\n" };
my $form = 'AccountSid=AC1&CallSid=CA9&Body=hello';
my @script = (
	['st', 'stripe', 'evt_1', 'invoice.paid', $body->('evt_1'), 0],
	['st', 'stripe', 'evt_1', 'invoice.paid', $body->('evt_1'), 0],
	['st', 'stripe', 'evt_1', 'invoice.paid', $body->('evt_1b'), 0],
	['st2', 'stripe', 'evt_1', 'invoice.paid', $body->('evt_1'), 0],
	['st', 'stripe', 'evt_2', undef, $body->('evt_2'), 0, undef, 'type: not a string'],
	['sh', 'shopify', 'sh_1', 'orders/create', $body->('sh_1'), 1],
	['sh', 'shopify', 'sh_1', 'orders/create', $body->('sh_1'), 1],
	['sh', 'shopify', 'sh_1', 'orders/paid', $body->('sh_1'), 1],
	(map { ['sh', 'shopify', "sh_t$_", "orders/t$_", $body->('sh_1'), 1] } 1 .. 4),
	['sh', 'shopify', 'sh_t2b', 'orders/t2', $body->('sh_1'), 1],
	['sh', 'shopify', 'sh_1', 'orders/create', $body->('sh_other'), 1],
	['sh', 'shopify', 'sh_2', 'orders/paid', $body->('sh_1'), 1],
	['tw', 'twilio', 'CA9', 'sms', $form, 1, pack('H*', sha256_hex("https://x/tw$form"))],
	['tw', 'twilio', 'CA9', 'sms', $form, 1, pack('H*', sha256_hex("https://x/tw$form"))],
	'delete evt_1 st',
	['st', 'stripe', 'evt_1', 'invoice.paid', $body->('evt_1'), 0],
	['st', 'stripe', 'evt_1', 'invoice.paid', $body->('evt_1c'), 0],
	'delete sh_1 orders/create',
	['sh', 'shopify', 'sh_1', 'orders/create', $body->('sh_1'), 1],
	['sh', 'shopify', 'sh_t9', 'orders/t9', $body->('sh_1'), 1],
	'delete held',
	['sh', 'shopify', 'sh_t1', 'orders/t1', $body->('sh_1'), 1],
	['sh', 'shopify', 'sh_t1c', 'orders/t1', $body->('sh_1'), 1],
	['st', 'stripe', 'evt_3', 'invoice.paid', '', 0],
);

my (%answers, %rows);
for my $how (sort keys %how) {
	mkdir "$dir/$how";
	chmod 0755, "$dir/$how";
	my $pg = HookTest::Pg->new(dir => "$dir/$how")->init(fsync => 'off')->start;
	$pg->create_db;
	my (@ans, $n);
	for my $step (@script) {
		if (!ref $step) {
			my $where = {
				'delete evt_1 st' => q{endpoint = 'st' and event_id = 'evt_1'},
				'delete sh_1 orders/create' => q{event_id = 'sh_1' and event_type = 'orders/create' and review_of is null},
				'delete held' => q{state = 'review' and event_type = 'orders/t1'},
			}->{$step};
			$pg->sql("delete from hookinbox.inbox where $where");
			push @ans, $step;
			next;
		}
		my $f = "$dir/$how-" . ++$n . '.sql';
		HookTest::Proc::write_file($f, $how{$how}->($step) . ";\n", 0644);
		my $out = HookTest::Proc::run("$pg->{bin}/psql", '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h',
			$pg->{sock}, '-p', $pg->{port}, '-U', 'hookinbox_intake', '-d', 'hookinbox', '-f', $f);
		chomp $out;
		push @ans, [split /\|/, $out];
	}
	# ids by order of first appearance, so that the two runs compare
	my (%nth, $k);
	my $name = sub { defined $_[0] && length $_[0] ? ($nth{ $_[0] } //= 'r' . ++$k) : '-' };
	$answers{$how} = [map { ref $_ ? "$_->[1]/$_->[2]/" . $name->($_->[0]) : $_ } @ans];
	my @r = map { [split /\|/] } split /\n/, $pg->sql(q{select id, endpoint, provider, event_id, coalesce(event_type, '-'),
		coalesce(object_id, '-'), coalesce(event_version::text, '-'), state, review_of, body_dedup,
		encode(body_sha256, 'hex'), coalesce(encode(signed_sha256, 'hex'), '-'), coalesce(intake_note, '-'),
		headers::text, md5(body) from hookinbox.inbox order by id});
	$rows{$how} = [map { join '|', $name->($_->[0]), @$_[1 .. 7], $name->($_->[8]), @$_[9 .. $#$_] } @r];
	$rows{"$how ledger"} = [map { my @l = split /\|/; join '|', @l[0, 1], $name->($l[2]), $l[3] }
		split /\n/, $pg->sql(q{select endpoint, encode(digest, 'hex'), first_id, coalesce(first_type, '-')
		from hookinbox.ledger order by endpoint, digest})];
	$pg->stop;
}

is(scalar(@{ $answers{one} }), scalar(@script), 'accept_one: an answer for every step');
note(join ' ', @{ $answers{one} });
is_deeply($answers{one}, $answers{batch}, 'accept_one answers as accept_batch does, step by step')
	or diag explain { one => $answers{one}, batch => $answers{batch} };
is_deeply($rows{one}, $rows{batch}, 'accept_one stores the rows accept_batch stores')
	or diag explain { one => $rows{one}, batch => $rows{batch} };
is_deeply($rows{'one ledger'}, $rows{'batch ledger'}, 'the same ledger entries')
	or diag explain { one => $rows{'one ledger'}, batch => $rows{'batch ledger'} };
# the script reaches what it is for: duplicates, held copies, the ledger
my %seen;
m{^([tf])/([tf])/} and $seen{"$1/$2"}++ for @{ $answers{one} };
ok($seen{'t/f'} >= 5 && $seen{'f/t'} >= 4 && $seen{'f/f'} >= 5, 'the script has duplicates, held copies and new rows')
	or diag explain \%seen;
cmp_ok(scalar @{ $rows{'one ledger'} }, '>=', 3, 'the script has ledger entries to answer from');

done_testing();
