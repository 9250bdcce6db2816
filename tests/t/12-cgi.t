# SPDX-License-Identifier: ISC
# Plain CGI, for hosts that allow nothing else: lighttpd's mod_cgi runs the
# responder once per request; the same verify-and-insert rules hold.  This
# one also logs as JSON ([log] format = json).
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig);

my $secret = 'gh-cgi-secret-0123456789';
my $t = HookTest->new(cgi => 1, endpoints => { gh => { provider => 'github', secrets => [$secret] } },
	extra_config => "[log]\nformat = json\n");
my $body = '{"action":"opened","pull_request":{"id":7}}';
my %h = ('X-GitHub-Event' => 'pull_request', 'X-GitHub-Delivery' => 'cgi-1');

my $r = $t->post('gh', $body, { %h, 'X-Hub-Signature-256' => github_sig($secret, $body) });
is($r->{status}, 200, 'cgi: signed delivery accepted') or diag($r->{content});
my $id = $r->{json}{id};
$r = $t->post('gh', $body, { %h, 'X-Hub-Signature-256' => github_sig($secret, $body) });
ok($id, 'cgi: an intake id');
is($r->{json}{id}, $id, 'cgi: redelivery answers the same id');
ok($r->{json}{duplicate}, 'cgi: redelivery is a duplicate');
$r = $t->post('gh', $body, { %h, 'X-GitHub-Delivery' => 'cgi-2', 'X-Hub-Signature-256' => github_sig('other-secret-000', $body) });
is($r->{status}, 401, 'cgi: bad signature refused');
is($t->sql('select count(*) from hookinbox.inbox'), 1, 'cgi: one row');
is($t->sql(q{select event_type from hookinbox.inbox}), 'pull_request.opened', 'cgi: envelope stored');

# [log] format = json: one JSON object a line, the same fields, no secret
my @lines = grep { /\S/ } split /\n/, $t->responder_log;
my @req = grep { ($_->{event} // '') eq 'request' } map { eval { JSON::PP::decode_json($_) } // {} } @lines;
is(scalar(@req), 3, 'three request lines, each a JSON object');
is_deeply([map { $_->{status} } @req], [200, 200, 401], 'with the status of each request');
is($req[0]{endpoint}, 'gh', 'and the endpoint');
unlike($t->responder_log, qr/\Q$secret\E|sha256=[0-9a-f]{64}/, 'no secret, no signature');
done_testing();
