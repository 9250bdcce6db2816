# SPDX-License-Identifier: ISC
# Hosts that disagree.  Worker A lacks route "b" that worker B has: A fans
# out b's events as unrouted and leaves b's actions alone; each worker
# remembers its routes' fingerprint and a worker whose routes differ from
# another's says so once per run (without -v too: it is a warning);
# sql/reroute.sql (dry run first) fans the unrouted events out again, and B
# delivers them, each exactly once.
use strict;
use warnings;
use Test::More;
use HookTest;
use Downstream;
use WorkerHelp;

my $top = HookTest::top();
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = Downstream->new(dir => $tmpd);
my $t = WorkerHelp::setup(routes => {
	a => { endpoint => 'shop', events => 'a.*', url => $d->url('/a'), timeout => 3 },
	b => { endpoint => 'shop', events => 'b.*', url => $d->url('/b'), timeout => 3 },
}, worker => { lease => 20 });
my $conf_b = $t->config;
my $conf_a = $t->dir . '/a.conf';
my $c = HookTest::slurp($conf_b);
$c =~ s/\[route b\].*?(?=^\[|\z)//ms;
open my $fh, '>', $conf_a or die $!;
print $fh $c;
close $fh;

sub run {
	my ($conf) = @_;
	my $out = `@{[ WorkerHelp::bin() ]} -v -c $conf --once 2>&1`;
	return ($? >> 8, $out);
}
sub reroute {
	my (%v) = @_;
	return $t->pg->psql_file("$top/sql/reroute.sql", role => 'hookinbox_admin', vars => \%v);
}

# A alone: its fingerprint, no warning
WorkerHelp::accept_many($t, 3, prefix => 'ea', type => 'a.x');
WorkerHelp::accept_many($t, 4, prefix => 'eb', type => 'b.x');
my ($rc, $out) = run($conf_a);
is($rc, 0, 'worker A runs') or diag $out;
unlike($out, qr/routes-differ/, 'A: nothing to compare with yet');
is($t->sql("select count(*) from hookinbox.inbox where state = 'unrouted'"), 4, "A: b's events unrouted");
is(scalar(grep { $_->{path} eq '/a' } $d->requests), 3, "A: a's events delivered");

# B: its routes differ from A's: one line, naming A's fingerprint
($rc, $out) = run($conf_b);
is($rc, 0, 'worker B runs') or diag $out;
my @lines = grep { /event=routes-differ/ } split /\n/, $out;
is(scalar @lines, 1, 'B: routes-differ said once') or diag $out;
my $fp_a = $t->sql("select fingerprint from hookinbox.worker_routes where routes not like '%b|order%'");
like($lines[0] // '', qr/other=\Q$fp_a\E/, "B: names A's fingerprint");
is($t->sql('select count(*) from hookinbox.worker_routes'), 2, 'two fingerprints remembered');
is(scalar(grep { $_->{path} eq '/b' } $d->requests), 0, 'B: unrouted events are not routed by themselves');

# A again: it sees B's fingerprint too; without -v (as from cron) that
# warning is all it prints, on stderr, and the run still succeeds
my $quiet = `@{[ WorkerHelp::bin() ]} -c $conf_a --once 2>&1 >/dev/null`;
is($? >> 8, 0, 'A without -v: exit 0');
like($quiet, qr/\A[^\n]* level=warning event=routes-differ [^\n]*\n\z/,
	'A without -v: the routes-differ warning, one line on stderr, nothing else') or diag $quiet;
($rc, $out) = run($conf_a);
is(scalar(grep { /event=routes-differ/ } split /\n/, $out), 1, 'A: routes-differ said once');

# reroute: usage error, dry run, then for real
($rc, $out) = reroute();
isnt($rc, 0, 'reroute.sql without a filter: usage error');
($rc, $out) = reroute(endpoint => 'shop');
is($rc, 0, 'reroute.sql dry run') or diag $out;
like($out, qr/\b4 unrouted events match; dry run/, 'dry run: counts 4');
is($t->sql("select count(*) from hookinbox.inbox where state = 'unrouted'"), 4, 'dry run: nothing changed');
($rc, $out) = reroute(endpoint => 'shop', type => 'b.%', go => 1);
is($rc, 0, 'reroute.sql go=1') or diag $out;
like($out, qr/\b4 unrouted events are pending again/, 'go: 4 pending again');
($rc, $out) = run($conf_b);
is($t->sql("select count(*) from hookinbox.action where route = 'b' and state = 'done'"), 4,
	'B routes and delivers them');
my %eff = $d->effects;
my @keys = split /\n/, $t->sql("select idem_key from hookinbox.action");
is(scalar(grep { ($eff{$_} // 0) == 1 } @keys), 7, 'every event: exactly one effect downstream');
is(scalar($d->requests), 7, 'no event of route a was sent again');
is($t->sql("select count(*) from hookinbox.inbox where state <> 'dispatched'"), 0, 'nothing left unrouted');

done_testing;
