# SPDX-License-Identifier: ISC
# Route URLs that carry credentials (user:password@, ?api_key=, a Slack hook
# path) are never kept plainly in hookinbox.worker_routes (a pg_dump shows
# it) nor logged: a redacted form with a fingerprint of the url, which still
# tells two configurations apart.
use strict;
use warnings;
use Test::More;
use HookTest;
use HookTest::Worker;

my $t = HookTest::Worker::setup(routes => {
	basic => { endpoint => 'shop', events => 'a.*', url => 'http://alice:pw-Zq81x@127.0.0.1:9/hooks', timeout => 1 },
	query => { endpoint => 'shop', events => 'b.*', url => 'http://127.0.0.1:9/in?api_key=KEY-77fw0c&x=1', timeout => 1 },
	slack => { endpoint => 'shop', events => 'c.*', url => 'https://hooks.slack.com/services/T00/B00/XOXB-s3cr3t', timeout => 1 },
	plain => { endpoint => 'shop', events => 'd.*', url => 'http://127.0.0.1:9/plain', timeout => 1 },
});
my ($rc, $out) = HookTest::Worker::worker($t, '--once');
is($rc, 0, 'a run registers the routes') or diag $out;
my $routes = $t->sql('select string_agg(routes, E\'\n\') from hookinbox.worker_routes');
for my $secret ('pw-Zq81x', 'KEY-77fw0c', 'XOXB-s3cr3t', 'T00/B00') {
	unlike($routes, qr/\Q$secret\E/, "worker_routes does not hold $secret");
	unlike($out, qr/\Q$secret\E/, "the log does not hold $secret");
}
like($routes, qr{basic\|.*http://\*\*\*\@127\.0\.0\.1:9/hooks#sha256:[0-9a-f]{16}}, 'user:password@ redacted, with a fingerprint');
like($routes, qr{query\|.*http://127\.0\.0\.1:9/in\?\*\*\*#sha256:[0-9a-f]{16}}, 'the query string redacted');
like($routes, qr{slack\|.*https://hooks\.slack\.com/\*\*\*#sha256:[0-9a-f]{16}}, 'a Slack hook path redacted');
like($routes, qr{plain\|.*http://127\.0\.0\.1:9/plain\|}, 'a url without credentials kept as it is');
done_testing;
