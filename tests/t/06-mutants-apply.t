# SPDX-License-Identifier: ISC
# Every mutant of tests/model/mutants applies to the tree as it is: a
# patch that no longer applies proves nothing, and make mutants would only
# say so when someone runs it (tests/model/README, "Mutants").
use strict;
use warnings;
use Test::More;
use HookTest;

my $top = HookTest::top();
plan skip_all => 'not a git checkout' unless -e "$top/.git" && system("git -C '$top' rev-parse -q HEAD >/dev/null 2>&1") == 0;
my @patches = sort glob("$top/tests/model/mutants/*.patch");
cmp_ok(scalar @patches, '>', 0, 'there are mutants');
for my $p (@patches) {
	my ($name) = $p =~ m{([^/]+)\.patch$};
	my $out = `git -C '$top' apply --check '$p' 2>&1`;
	is($?, 0, "$name applies") or diag $out;
}
done_testing;
