# SPDX-License-Identifier: ISC
# Every configuration key is described where an operator looks for it: the
# reference (docs/configuration.md, one table row a key under its section's
# heading), hookinbox.conf(5) (a .TP tag under its section) and the sample
# etc/hookinbox.conf (a line "key =", commented or not, under its section).
# The keys are read from the keys[] table of the configuration code, as text.
use strict;
use warnings;
use Test::More;
use HookTest;

my $top = HookTest::top();
chdir $top or die "$top: $!";

sub slurp { my ($f) = @_; open my $fh, '<', $f or die "$f: $!"; local $/; <$fh> }

# the table: common/conf.c, or wherever it moved under common/ or conf/
my @src = grep { -f $_ && slurp($_) =~ /\bconf_key\s+keys\s*\[\]\s*=/ }
	(glob('common/*.c'), glob('common/*/*.c'), glob('conf/*.c'), glob('conf/*/*.c'));
is(scalar @src, 1, 'one file holds keys[]: ' . join(' ', @src)) or BAIL_OUT('keys[] not found');
my ($table) = slurp($src[0]) =~ /\bconf_key\s+keys\s*\[\]\s*=\s*\{(.*?)\n\};/s
	or BAIL_OUT("$src[0]: keys[] table not parsed");
$table =~ s{/\*.*?\*/}{}gs;
$table =~ s{//[^\n]*}{}g;
my (@keys, %seen);
# a row names its section (K_NAME) and then its key, as the first string
# literal; a conninfo row names only its section
$table =~ s{\bCONNINFO\s*\(\s*K_([A-Z]+)\b}{K_$1 "conninfo"}g;
while ($table =~ /()\bK_([A-Z]+)\b(.*?)(?=\bK_[A-Z]+\b|\z)/gs) {
	my ($conninfo, $sec, $rest) = ($1, lc $2, $3);
	my $name;
	if ($conninfo) {
		$name = 'conninfo';
	} elsif ($rest =~ /^[^"]*?"([a-z_][a-z0-9_-]*)"/s) {
		$name = $1;
	} else {
		fail("keys[]: no key name after K_\U$sec\E");
		next;
	}
	push @keys, [$sec, $name] unless $seen{"$sec $name"}++;
}
cmp_ok(scalar @keys, '>=', 40, 'keys read from keys[]: ' . scalar @keys);

# docs/configuration.md: headings "### [section]" or "### [section NAME]"
# open a section; a table row whose first cell holds `key` documents it
my %doc;
{
	my $sec;
	for (split /\n/, slurp('docs/configuration.md')) {
		if (/^#+ .*?\[([a-z]+)[\] ]/) { $sec = $1; next }
		if (/^#+ /) { undef $sec; next }
		next unless defined $sec && /^\|([^|]*)\|/;
		$doc{"$sec $_"} = 1 for $1 =~ /`([a-z_][a-z0-9_-]*)`/g;
	}
}

# man/hookinbox.conf.5: ".SH [section" opens a section; the line after .TP
# is the tag, naming one or more keys
my %man;
{
	my ($sec, $tag);
	for (split /\n/, slurp('man/hookinbox.conf.5')) {
		if (/^\.SH\s+"?\[([a-z]+)/) { $sec = $1; next }
		if (/^\.SH/) { undef $sec; next }
		if (/^\.TP/) { $tag = 1; next }
		if ($tag && defined $sec) {
			$man{"$sec $_"} = 1 for /([a-z_][a-z0-9_-]*)/g;
		}
		undef $tag;
	}
}

# etc/hookinbox.conf: "[section ...]" (maybe commented) opens a section;
# "key =" (maybe commented) names a key
my %sample;
{
	my $sec;
	for (split /\n/, slurp('etc/hookinbox.conf')) {
		if (/^[;#]?\s*\[([a-z]+)[\] ]/) { $sec = $1; next }
		$sample{"$sec $1"} = 1 if defined $sec && /^[;#]?\s*([a-z_][a-z0-9_-]*)\s*=/;
	}
}

for my $k (@keys) {
	my ($sec, $name) = @$k;
	my $what = $sec =~ /^(?:endpoint|route)$/ ? "[$sec NAME] $name" : "[$sec] $name";
	ok($doc{"$sec $name"}, "$what is in docs/configuration.md");
	ok($man{"$sec $name"}, "$what is in man/hookinbox.conf.5");
	ok($sample{"$sec $name"}, "$what is in etc/hookinbox.conf");
}
done_testing();
