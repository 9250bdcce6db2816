# SPDX-License-Identifier: ISC
# A group-commit batch (of 3 or more) whose ids are all signed is stored by
# one statement (accept_batch()'s set path): its answers are those of the deliveries
# stored one at a time, in turn.  Checked as the responder's role: repeats
# inside the batch, a key stored before, a key the ledger knows (its row
# deleted: the whole batch then takes the steps of one delivery at a
# time), ids in batch order, and every row read back byte for byte.
use strict;
use warnings;
use Test::More;
use HookTest;
use File::Temp qw(tempdir);
use Digest::SHA qw(sha256_hex);
use Digest::MD5 ();

my $dir = tempdir('batch-signed-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $dir;
my $pg = HookTest::Pg->new(dir => $dir)->init(fsync => 'off')->start;
$pg->create_db;

# a statement as the responder's role (through a file: a 256 KB body is
# longer than a command line may be)
my $n_sql = 0;
sub intake {
	my ($sql) = @_;
	my $f = "$dir/q" . ++$n_sql . '.sql';
	HookTest::Proc::write_file($f, "$sql;\n", 0644);
	my $out = HookTest::Proc::run("$pg->{bin}/psql", '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', $pg->{sock},
		'-p', $pg->{port}, '-U', 'hookinbox_intake', '-d', 'hookinbox', '-f', $f);
	chomp $out;
	return $out;
}

# one call of accept_batch() for the deliveries [endpoint, event_id, body]:
# its rows as [id, duplicate, held]
sub batch {
	my (@d) = @_;
	my $arr = sub { my ($f, $type) = @_; 'array[' . join(', ', map { $f->($_) } @d) . "]::$type\[]" };
	my $q = sub { "'" . ($_[0] =~ s/'/''/gr) . "'" };
	my $sql = 'select id, duplicate, held from hookinbox.accept_batch('
		. join(', ', $arr->(sub { $q->($_[0][0]) }, 'text'), $arr->(sub { "'stripe'" }, 'text'),
			$arr->(sub { "'acct_1'" }, 'text'), $arr->(sub { "'live'" }, 'text'),
			$arr->(sub { $q->($_[0][1]) }, 'text'), $arr->(sub { "'invoice.paid'" }, 'text'),
			$arr->(sub { "'in_1'" }, 'text'), $arr->(sub { '7' }, 'bigint'),
			$arr->(sub { $q->(qq({"X-Id": "$_[0][1]"})) }, 'jsonb'),
			$arr->(sub { "'\\x" . unpack('H*', $_[0][2]) . "'" }, 'bytea'),
			$arr->(sub { 'false' }, 'boolean'), $arr->(sub { 'null' }, 'bytea'), $arr->(sub { 'null' }, 'text'))
		. ')';
	return [map { [split /\|/] } split /\n/, intake($sql)];
}

# the same deliveries, one call each (the steps of one delivery at a time)
sub one_by_one { return [map { @{ batch($_) } } @_] }

# the answers' shape: duplicate and held flags, and which earlier answer
# (or which id stored before, by name) each id repeats
sub shape {
	my ($rows, $known) = @_;
	my %first;
	my @s;
	for my $i (0 .. $#$rows) {
		my ($id, $dup, $held) = @{ $rows->[$i] };
		my $same = $known->{$id} // (exists $first{$id} ? "row $first{$id}" : 'new');
		$first{$id} //= $i;
		push @s, "$dup/$held/$same";
	}
	return \@s;
}

my $body = sub { my ($n) = @_; '{"id":"evt_' . $n . '","data":{"object":"' . ('x' x (2000 + $n)) . "\"}}\n" };
my ($old) = @{ batch(['a', 'evt_old', $body->(0)]) };
my ($old2) = @{ batch(['b', 'evt_old', $body->(0)]) };
my %known = ($old->[0] => 'old a', $old2->[0] => 'old b');

my @d = map { [$_->[0], $_->[1], $body->($_->[2])] } (['a', 'evt_1', 1], ['a', 'evt_2', 2], ['a', 'evt_1', 3],
	['a', 'evt_old', 4], ['a', 'evt_3', 5], ['b', 'evt_1', 6], ['a', 'evt_2', 7]);
my $set = batch(@d);
is_deeply(shape($set, \%known), ['f/f/new', 'f/f/new', 't/f/row 0', 't/f/old a', 'f/f/new', 'f/f/new', 't/f/row 1'],
	'a batch of signed ids: repeats, a key stored before, the same id on another endpoint');
my @new = map { $set->[$_][0] } 0, 1, 4, 5;
is_deeply(\@new, [sort { $a <=> $b } @new], 'stored in batch order');
my $again = batch(@d);
is(join(',', map { $_->[1] } @$again), join(',', ('t') x @d), 'the same batch again: all duplicates');
is(join(',', map { $_->[0] } @$again), join(',', map { $_->[0] } @$set), 'of the same ids');

# the same deliveries one at a time (endpoints c and d for a and b)
my @d2 = map { [$_->[0] eq 'a' ? 'c' : 'd', $_->[1], $_->[2]] } @d;
my ($old3) = @{ batch(['c', 'evt_old', $body->(0)]) };
is_deeply(shape(one_by_one(@d2), { $old3->[0] => 'old a' }), shape($set, \%known),
	'the answers of the deliveries stored one at a time');

# every row as sent
my $rows = $pg->sql("select endpoint, event_id, encode(body, 'hex'), encode(body_sha256, 'hex'), headers->>'X-Id', "
	. "event_version, state, review_of is null from hookinbox.inbox where id in (" . join(',', @new) . ') order by id');
my @want = map { join '|', $d[$_][0], $d[$_][1], unpack('H*', $d[$_][2]), sha256_hex($d[$_][2]), $d[$_][1], 7,
	'pending', 't' } 0, 1, 4, 5;
is($rows, join("\n", @want), 'each row read back byte for byte, its hash of its body');

# the ledger knows one key of the batch: its row is deleted (purge), so
# that delivery stores nothing and is answered with its first id, while
# the others are stored, in order
$pg->sql("delete from hookinbox.inbox where endpoint = 'a' and event_id = 'evt_1'");
my $led = batch(['a', 'evt_9', $body->(9)], ['a', 'evt_1', $body->(1)], ['a', 'evt_10', $body->(10)]);
is_deeply([map { $_->[1] } @$led], ['f', 't', 'f'], 'a batch the ledger knows one of');
is($led->[1][0], $set->[0][0], 'the ledger answers with the first id');
cmp_ok($led->[0][0], '<', $led->[2][0], 'the others stored in batch order');
is($pg->sql("select count(*) from hookinbox.inbox where endpoint = 'a' and event_id = 'evt_1'"), 0,
	'a replay of a purged signed id stores nothing');

# a 256 KB body (compressed and moved out of line by TOAST) reads back whole
my $big = join '', map { sprintf '%08x', ($_ * 2654435761) % 4294967296 } 1 .. 32768;
my $bb = batch(['a', 'evt_big', $big], ['a', 'evt_small', $body->(11)], ['a', 'evt_small2', $body->(12)]);
is($pg->sql("select md5(body), length(body) from hookinbox.inbox where id = $bb->[0][0]"),
	Digest::MD5::md5_hex($big) . '|' . length($big), 'a 256 KB body of a batch reads back whole');

done_testing();
