# SPDX-License-Identifier: ISC
# Duplicate deliveries (a provider redelivering what was already stored,
# answered 200 with the first id) are counted per endpoint, apart from the
# refusals and the storage failures: in hookinbox.rejection under reason
# 'duplicate', flushed like the refusals while the responder idles, shown
# by stats.sql in a section of their own, and exported by the worker as
# hookinbox_inbox_duplicates_total{endpoint}, never as a rejection.  The
# request-duration histogram counts them too, also after the install is
# run again (an upgrade keeps the grants the responder's counting needs).
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::Worker;
use JSON::PP;

my $secret = 'whsec_duplicates_0123456789abcdef';
my $t = HookTest::Worker::setup(routes => { local => { endpoint => 'shop', handler => 'sql:app.apply', timeout => 2 } },
	endpoints => { shop => { provider => 'stripe', secrets => [$secret] }, other => { provider => 'stripe', secrets => [$secret] } },
	extra => { no_lighttpd => 0, procs => 1 });
$t->sql($HookTest::Worker::APPLY_SQL);

my $body = '{"id":"evt_dup_1","type":"invoice.paid","created":1}';
my $first;
for my $i (1 .. 4) {
	my $r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig($secret, $body) });
	is($r->{status}, 200, "delivery $i answered 200");
	my $j = eval { decode_json($r->{content}) } // {};
	$first //= $j->{id};
	is($j->{duplicate} ? 1 : 0, $i > 1 ? 1 : 0, $i > 1 ? "delivery $i is a duplicate of id $first" : 'the first is stored');
}
my $other = '{"id":"evt_dup_other","type":"invoice.paid","created":1}';
$t->post('other', $other, { 'Stripe-Signature' => stripe_sig($secret, $other) }) for 1 .. 2;
my $forged = '{"id":"evt_dup_forged","type":"invoice.paid","created":1}';
is($t->post('shop', $forged, { 'Stripe-Signature' => stripe_sig('whsec_not_the_secret_00', $forged) })->{status}, 401,
	'a forged delivery refused');

my $dups = sub {
	$t->sql(q{select coalesce(sum(count), 0) from hookinbox.rejection where endpoint = 'shop' and reason = 'duplicate'});
};
my $waited = 0;
while ($dups->() < 3 && $waited < 25) {
	sleep 1;
	$waited++;
}
is($dups->(), 3, "the 3 duplicates of endpoint shop counted while the responder idles (after ${waited} s)");
is($t->sql(q{select count(*) from hookinbox.inbox where endpoint = 'shop'}), 1, 'one row stored for shop');

my ($rc, $out) = $t->pg->psql_file(HookTest::top() . '/sql/stats.sql', role => 'hookinbox_admin');
is($rc, 0, 'stats.sql as hookinbox_admin') or diag $out;
my ($dup_section) = $out =~ /^(duplicates answered.*?)(?:\n\n|\z)/ms;
like($dup_section // '', qr/^\s*shop\s*\|\s*3\s*\|/m, 'stats.sql: 3 duplicates for shop in their own section') or diag $out;
like($dup_section // '', qr/^\s*other\s*\|\s*1\s*\|/m, 'stats.sql: 1 for other') or diag $out;
my ($ref_section) = $out =~ /^(refused and not stored.*?)(?:\n\n|\z)/ms;
like($ref_section // '', qr/^\s*shop\s*\|\s*signature mismatch\s*\|\s*1\s*\|/m, 'the refusal among the refusals') or diag $out;
unlike($ref_section // '', qr/duplicate/, 'and no duplicate among them') or diag $out;

my $file = $t->dir . '/hookinbox.prom';
($rc, my $log) = HookTest::Worker::worker($t, '--once', '--metrics-file', $file);
is($rc, 0, 'a worker run') or diag $log;
my $m = HookTest::slurp($file);
like($m, qr/^# TYPE hookinbox_inbox_duplicates_total counter$/m, 'hookinbox_inbox_duplicates_total is a counter');
like($m, qr/^hookinbox_inbox_duplicates_total\{endpoint="shop"\} 3$/m, 'the worker exports 3 duplicates for shop');
like($m, qr/^hookinbox_inbox_duplicates_total\{endpoint="other"\} 1$/m, 'and 1 for other');
like($m, qr/^hookinbox_rejections_total\{endpoint="shop",reason="signature mismatch"\} 1$/m, 'the refusal as a rejection');
unlike($m, qr/^hookinbox_rejections_total\{[^}]*reason="duplicate"/m, 'a duplicate is not a rejection');

# the install run again (an upgrade): the responder still counts
($rc, $out) = $t->pg->psql_file(HookTest::top() . '/sql/install.sql');
is($rc, 0, 'install.sql run a second time') or diag $out;
my $n_dups = sub {
	$t->sql(q{select coalesce(sum(b), 0) from hookinbox.request_duration, unnest(buckets) b
		where endpoint = 'shop' and outcome = 'duplicate' and status = 200});
};
my $was = $n_dups->();
is($was, 3, 'the duration histogram counted the 3 duplicates too');
is($t->post('shop', $body, { 'Stripe-Signature' => stripe_sig($secret, $body) })->{status}, 200, 'one more duplicate');
$waited = 0;
while ($n_dups->() < 4 && $waited < 25) {
	sleep 1;
	$waited++;
}
is($n_dups->(), 4, "counted after the reinstall (after ${waited} s)");
is($dups->(), 4, 'as a duplicate too');
done_testing();
