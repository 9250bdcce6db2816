# Plain CGI, for hosts that allow nothing else: lighttpd's mod_cgi runs the
# responder once per request; the same verify-and-insert rules hold.
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig);

my $secret = 'gh-cgi-secret-0123456789';
my $t = HookTest->new(cgi => 1, endpoints => { gh => { provider => 'github', secrets => [$secret] } });
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
done_testing();
