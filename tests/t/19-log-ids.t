# SPDX-License-Identifier: ISC
# What the request log says about ids, through the real responder with
# [log] format = json: an event id in UTF-8 is written as UTF-8 (it was
# written byte by byte as \u00XX, mojibake); a GitHub duplicate found by its
# signed body under another, unsigned delivery id does not log that id as
# its event_id (the stored delivery is its id; the request's guid is
# request_event_id).
use strict;
use warnings;
use utf8;
use Test::More;
use HookTest qw(stripe_sig github_sig);
use JSON::PP;
use Encode ();

my $st = 'whsec_logids_0123456789abcdef';
my $gh = 'gh-logids-secret-0123456789';
my $t = HookTest->new(endpoints => { st => { provider => 'stripe', secrets => [$st] },
	gh => { provider => 'github', secrets => [$gh] } }, extra_config => "[log]\nformat = json\n");

my $evid = "evt_é日本";
my $body = JSON::PP->new->utf8->encode({ id => $evid, object => 'event', type => 'invoice.paid', created => 1700000000,
	data => { object => { id => 'in_1' } } });
my $r = $t->post('st', $body, { 'Stripe-Signature' => stripe_sig($st, $body), 'Content-Type' => 'application/json' });
is($r->{status}, 200, 'a UTF-8 event id is stored');

my $gb = '{"action":"opened","issue":{"number":89}}';
my %h = ('X-Hub-Signature-256' => github_sig($gh, $gb), 'X-GitHub-Event' => 'issues', 'Content-Type' => 'application/json');
my $first = $t->post('gh', $gb, { %h, 'X-GitHub-Delivery' => 'aaaa-0001' });
is($first->{status}, 200, 'github: first delivery stored');
my $dup = $t->post('gh', $gb, { %h, 'X-GitHub-Delivery' => 'bbbb-0002' });
is($dup->{status}, 200, 'github: the same signed body under another guid');
ok($dup->{json}{duplicate}, '... is a duplicate of the first');

my @lines = grep { /^\{/ } split /\n/, $t->responder_log;
my ($stl) = grep { /"endpoint":"st"/ && /"event":"request"/ } @lines;
ok(index($stl, Encode::encode('UTF-8', "\"event_id\":\"$evid\"")) >= 0, 'json: the event id is written as UTF-8')
	or diag($stl);
unlike($stl, qr/\\u00/, 'json: no byte escaped as \u00XX');
is(JSON::PP->new->utf8->decode($stl)->{event_id}, $evid, 'json: and reads back as the same id');
my @gl = map { JSON::PP->new->utf8->decode($_) } grep { /"endpoint":"gh"/ && /"event":"request"/ } @lines;
is(scalar(@gl), 2, 'github: two request lines');
is($gl[0]{event_id}, 'aaaa-0001', 'github: the first logs its event id');
ok(!exists $gl[1]{event_id}, "github: the duplicate does not log the request's unsigned guid as its event id");
is($gl[1]{request_event_id}, 'bbbb-0002', '... but as request_event_id');
is($gl[1]{id}, $gl[0]{id}, '... with the stored delivery\'s id');
done_testing();
