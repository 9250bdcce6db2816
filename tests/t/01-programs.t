# Each program: --help and --version succeed, bad options fail with usage,
# and a broken configuration stops it at start with file:line.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use HookTest;

my $top = HookTest::top();
my $dir = tempdir(CLEANUP => 1);

sub run_prog {
	my (@cmd) = @_;
	my $out = `@{[ join ' ', map { HookTest::shell_quote($_) } @cmd ]} 2>&1`;
	return ($? >> 8, $out);
}

for my $prog ("$top/fcgi/hookinbox.fcgi", "$top/worker/hookinbox-worker", "$top/contrib/hookinbox-send") {
	my $name = $prog =~ s{.*/}{}r;
	my ($rc, $out) = run_prog($prog, '--help');
	is($rc, 0, "$name --help exits 0");
	like($out, qr/Usage/i, "$name --help prints usage");
	($rc, $out) = run_prog($prog, '--version');
	is($rc, 0, "$name --version exits 0");
	like($out, qr/\d+\.\d+/, "$name --version prints a version");
	($rc, $out) = run_prog($prog, '--no-such-option');
	is($rc, 64, "$name with a bad option exits 64");
	like($out, qr/Usage|--help/i, "$name with a bad option points to the usage");
}

sub write_file {
	my ($name, $text, $mode) = @_;
	open my $fh, '>', "$dir/$name" or die $!;
	print $fh $text;
	close $fh;
	chmod $mode // 0600, "$dir/$name";
	return "$dir/$name";
}

write_file('secret', "s3cr3t-value-1\n");
write_file('open-secret', "s3cr3t-value-2\n", 0644);
my $base = "[database]\nconninfo = dbname=x\n";
my @bad = (
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\nfoo = 1\n", 6, qr/unknown key "foo"/],
	["[endpoint a]\nprovider = nosuch\nsecret_file = secret\n", 4, qr/unknown provider/],
	["[endpoint a]\nprovider = square\nsecret_file = secret\n", 3,
		qr/endpoint "a": provider square needs public_url \(the notification URL Square signs\)/],
	["[endpoint a]\nprovider = stripe\n", 3, qr/no secret_file/],
	["[endpoint a]\nprovider = stripe\nsecret_file = open-secret\n", 3, qr/group or world access/],
	["[endpoint a]\nprovider = stripe\nsecret_file = missing\n", 3, qr/could not open secret file/],
	["[intake]\nmax_body = 12x\n", 4, qr/max_body must be/],
	["[nonsense]\n", 3, qr/unknown section/],
	["this is not ini\n", 3, qr/syntax error/],
	["[endpoint a/b]\nprovider = stripe\n", 3, qr/may hold only/],
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\n[route r]\nendpoint = b\nurl = http://x/\n", 6,
		qr/unknown endpoint "b"/],
	["[endpoint a]\nprovider = stripe\nsecret_file = secret\n[route r]\nendpoint = a\nurl = ftp://x/\n", 8,
		qr/url must start/],
);
my $i = 0;
for my $case (@bad) {
	my ($body, $line, $re) = @$case;
	my $conf = write_file('bad' . ++$i . '.conf', $base . $body);
	for my $prog ("$top/fcgi/hookinbox.fcgi", "$top/worker/hookinbox-worker") {
		my $name = $prog =~ s{.*/}{}r;
		# the responder checks and exits; the worker stops at start, before any database work
		my ($rc, $out) = run_prog($prog, '-c', $conf, $name eq 'hookinbox.fcgi' ? '--check' : '--once');
		is($rc, 78, "$name: bad config $i exits 78");
		like($out, qr/\Q$conf\E:$line: /, "$name: bad config $i names $conf:$line");
		like($out, $re, "$name: bad config $i says what is wrong");
		unlike($out, qr/s3cr3t/, "$name: bad config $i does not echo a secret");
	}
}
{
	local $ENV{HOOKINBOX_CONFIG} = "$dir/nonexistent.conf";
	my ($rc, $out) = run_prog("$top/fcgi/hookinbox.fcgi", '--check');
	is($rc, 78, 'missing config (from $HOOKINBOX_CONFIG): exits 78');
	like($out, qr/nonexistent\.conf: could not open/, 'missing config: names the file');
}
my $good = write_file('good.conf', $base . "[endpoint a]\nprovider = stripe\nsecret_file = secret\n");
my ($rc, $out) = run_prog("$top/fcgi/hookinbox.fcgi", '-c', $good, '--check');
is($rc, 0, 'good config: --check exits 0');
done_testing();
