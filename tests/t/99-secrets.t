# SPDX-License-Identifier: ISC
# Runs last: every secret and signature the suite handed to the programs
# must appear in none of the logs and database dumps the suite left behind;
# and no sanitizer (make SANITIZE=...) may have reported anything there.
use strict;
use warnings;
use Test::More;
use HookTest;

my $tmp = HookTest::top() . '/tests/tmp';
my @secrets;
if (open my $fh, '<', "$tmp/secrets.list") {
	chomp(@secrets = <$fh>);
}
my %seen;
@secrets = grep { !$seen{$_}++ } @secrets;
my @files = glob("$tmp/evidence/*.log");
plan skip_all => 'no evidence from earlier tests (run the whole suite)' unless @files && @secrets;

my $text = '';
for my $f (@files) {
	open my $in, '<', $f or next;
	local $/;
	$text .= <$in> // '';
}
ok(length($text) > 0, sprintf('read %d evidence files (%d bytes)', scalar(@files), length($text)));
my @found;
for my $s (@secrets) {
	# a signature header value, or the secret itself, or the bare signature after "v1=" / "sha256="
	my @parts = ($s, $s =~ /(?:v1=|sha256=|v1,|v0=|h1=)([A-Za-z0-9+\/=]{16,})/g);
	for my $p (@parts) {
		push @found, $p if index($text, $p) >= 0;
	}
}
unlike($text, qr/ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|runtime error:/,
	'no sanitizer report in any responder or database log');
is(scalar(@found), 0, sprintf('none of %d secrets and signatures appears in logs or rows', scalar(@secrets)))
	or diag("found: " . join(', ', map { substr($_, 0, 6) . '...' } @found));
done_testing();
