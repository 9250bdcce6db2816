# SPDX-License-Identifier: ISC
# Every source file says its licence in one line (SPDX), so a file copied out
# of the tree still carries it; LICENSE holds the text.
use strict;
use warnings;
use Test::More;
use HookTest;

my $top = HookTest::top();
chdir $top or die "$top: $!";
my @files;
if (-d '.git' || -f '.git') {
	@files = split /\n/, `git ls-files`;
} else {
	@files = split /\n/, `find . -type f -not -path './obj/*' | sed 's|^\\./||'`;
}
my $source = qr{(?:\.(?:c|h|sql|inc|t|pm|pl|mk|mjs)|^Makefile|^debian/rules|^tools/[a-z-]+|^\.ci/run)$};
my @src = grep { $_ =~ $source && !m{^tests/(?:fuzz/corpus|data)/} && -f $_ } @files;
cmp_ok(scalar @src, '>', 200, 'source files found: ' . scalar @src);
my @missing = grep {
	open my $fh, '<', $_ or die "$_: $!";
	my $head = join '', grep { defined } map { scalar <$fh> } 1 .. 3;
	$head !~ /SPDX-License-Identifier: ISC/;
} @src;
is_deeply(\@missing, [], 'every source file has an SPDX-License-Identifier: ISC line in its first three lines');
like(do { local (@ARGV, $/) = ('LICENSE'); <> }, qr/^ISC License/, 'LICENSE is the ISC licence');
done_testing();
