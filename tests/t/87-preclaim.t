# SPDX-License-Identifier: ISC
# A held copy does not own its delivery key.  Where the delivery id and
# type are unsigned headers (GitHub; hmac with id_header and type_header),
# a captured signed body replayed under the next id with another type is
# held for review under that id; the genuine delivery with that id and its
# own body is then stored (a row in PostgreSQL) and delivered at the
# downstream, the held copy stays held, and a true redelivery (same id,
# same body) is still a duplicate of the first.  Content never stored
# under an id owned by other content is stored and held (review_of the
# owner): which of the two is genuine is not known.  A held copy an
# operator releases is delivered under its own key, never collapsed into
# the delivery that owns its id.
use strict;
use warnings;
use Test::More;
use HookTest qw(github_sig);
use HookTest::Downstream;
use HookTest::Worker;
use Digest::SHA qw(hmac_sha256_hex);
use JSON::PP;

my $gh_secret = 'github-preclaim-secret-24680';
my $hm_secret = 'hmac-preclaim-secret-13579';
HookTest::Sign::record_secret($gh_secret, $hm_secret);
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(
	endpoints => {
		gh => { provider => 'github', secrets => [$gh_secret] },
		hm => { provider => 'hmac', secrets => [$hm_secret], header => 'X-Hm-Signature', algorithm => 'sha256',
			encoding => 'hex', id_header => 'X-Delivery', type_header => 'X-Event' },
	},
	routes => {
		ghr => { endpoint => 'gh', url => $d->url('/gh'), timeout => 2 },
		hmr => { endpoint => 'hm', url => $d->url('/hm'), timeout => 2 },
	},
	extra => { no_lighttpd => 0 },
);

my %send = (
	gh => sub {
		my ($body, $id, $type) = @_;
		return $t->post('gh', $body, { 'X-Hub-Signature-256' => github_sig($gh_secret, $body),
			'X-GitHub-Event' => $type, 'X-GitHub-Delivery' => $id, 'Content-Type' => 'application/json' });
	},
	hm => sub {
		my ($body, $id, $type) = @_;
		return $t->post('hm', $body, { 'X-Hm-Signature' => hmac_sha256_hex($body, $hm_secret),
			'X-Event' => $type, 'X-Delivery' => $id, 'Content-Type' => 'application/json' });
	},
);

my %held_id;
for my $ep (qw(gh hm)) {
	my $post = $send{$ep};
	my $captured = qq({"action":"opened","n":1,"ep":"$ep"});
	my $genuine = qq({"action":"closed","n":2,"ep":"$ep"});
	# GitHub's type is the event and the body's action
	my $gtype = $ep eq 'gh' ? 'issues.closed' : 'issues';
	my $first = $post->($captured, "$ep-1001", 'issues');
	is($first->{json}{duplicate}, JSON::PP::false, "$ep: the first delivery is stored");
	# the attacker's replay of the captured body under the next id, another type
	my $held = $post->($captured, "$ep-1002", 'push');
	$held_id{$ep} = $held->{json}{id};
	is($held->{json}{review}, JSON::PP::true, "$ep: the replay under the next id and another type is held");
	is($t->sql("select state || '|' || review_of from hookinbox.inbox where id = $held->{json}{id}"),
		"review|$first->{json}{id}", "$ep: held in review, review_of the first");
	# the genuine delivery with that id
	my $g = $post->($genuine, "$ep-1002", 'issues');
	is($g->{status}, 200, "$ep: the genuine delivery 2xx");
	is($g->{json}{duplicate}, JSON::PP::false, "$ep: the genuine delivery is not a duplicate");
	isnt($g->{json}{id}, $held->{json}{id}, "$ep: its own row");
	is($t->sql("select state || '|' || event_type || '|' || (review_of is null)::text || '|' || "
		. "(body = convert_to(" . HookTest::Worker::sqlq($genuine) . ", 'UTF8'))::text "
		. "from hookinbox.inbox where endpoint = '$ep' and event_id = '$ep-1002' and review_of is null"),
		"pending|$gtype|true|true", "$ep: the genuine body is a row in PostgreSQL");
	# redeliveries
	my $r = $post->($genuine, "$ep-1002", 'issues');
	is($r->{json}{id}, $g->{json}{id}, "$ep: a redelivery of the genuine one: its id");
	is($r->{json}{duplicate}, JSON::PP::true, "$ep: and a duplicate");
	$r = $post->($captured, "$ep-1001", 'issues');
	is($r->{json}{id}, $first->{json}{id}, "$ep: a true duplicate of the first: the first id");
	is($r->{json}{duplicate}, JSON::PP::true, "$ep: and a duplicate");
	$r = $post->($captured, "$ep-1002", 'push');
	is($r->{json}{id}, $held->{json}{id}, "$ep: the replay again: the held row's id, not the genuine one's");
	is($r->{json}{duplicate}, JSON::PP::true, "$ep: and a duplicate");
	$r = $post->($captured, "$ep-1002", 'issues');
	is($r->{json}{id}, $first->{json}{id}, "$ep: the captured body under the genuine id and its first type: the first id");
	is($r->{json}{duplicate}, JSON::PP::true, "$ep: and a duplicate");
	# the captured body under the (now owned) id with a third type: judged by
	# its content as if the id were free, so held like the first replay
	$r = $post->($captured, "$ep-1002", 'release');
	is($r->{json}{review}, JSON::PP::true, "$ep: under the owned id with a third type: held");
	is($t->sql("select state || '|' || review_of from hookinbox.inbox where id = " . ($r->{json}{id} // 0)),
		"review|$first->{json}{id}", "$ep: review_of the first");
	is($t->sql("select count(*) from hookinbox.inbox where endpoint = '$ep'"), 4, "$ep: four rows");
	# a body never stored took an id first (a capture whose own delivery was
	# lost or purged): the genuine delivery under that id is stored too, held
	my $took = $post->(qq({"action":"opened","n":3,"ep":"$ep"}), "$ep-2001", 'issues');
	is($took->{json}{duplicate}, JSON::PP::false, "$ep: a body under an unused id is stored");
	my $later = $post->(qq({"action":"opened","n":4,"ep":"$ep"}), "$ep-2001", 'issues');
	is($later->{json}{duplicate}, JSON::PP::false, "$ep: other signed content under that id: not a duplicate");
	is($later->{json}{review}, JSON::PP::true, "$ep: but held (which is genuine is not known)");
	is($t->sql("select state || '|' || review_of from hookinbox.inbox where id = " . ($later->{json}{id} // 0)),
		"review|$took->{json}{id}", "$ep: its body is a row, review_of the id's owner");
	$r = $post->(qq({"action":"opened","n":4,"ep":"$ep"}), "$ep-2001", 'issues');
	is($r->{json}{id}, $later->{json}{id}, "$ep: its redelivery: its duplicate");
}

HookTest::Worker::drain($t, timeout => 30);
my %calls;
$calls{"$_->{path} $_->{event_id} $_->{type}"}++ for grep { $_->{status} =~ /^2/ } $d->requests;
is_deeply(\%calls, { '/gh gh-1001 issues.opened' => 1, '/gh gh-1002 issues.closed' => 1,
	'/gh gh-2001 issues.opened' => 1, '/hm hm-1001 issues' => 1, '/hm hm-1002 issues' => 1, '/hm hm-2001 issues' => 1 },
	'the downstream got the first and the genuine delivery of each endpoint once, never the held copy')
	or diag explain \%calls;
is($t->sql(q{select string_agg(endpoint || ':' || state, ',' order by endpoint) from hookinbox.inbox
	where review_of is not null}), 'gh:review,gh:review,gh:review,hm:review,hm:review,hm:review',
	'the held copies stay held');
is($t->sql(q{select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id
	where i.event_id like '%-1002' and a.state = 'done'}), 2, 'the genuine deliveries\' actions are done');

# an operator releases the held copies: each is its own action, not
# collapsed into the genuine delivery that owns the id
my $top = HookTest::top();
for my $ep (qw(gh hm)) {
	my ($rc, $out) = $t->pg->psql_file("$top/sql/review.sql", role => 'hookinbox_admin',
		vars => { release => $held_id{$ep}, go => 1 });
	is($rc, 0, "$ep: review.sql releases the held copy") or diag $out;
}
HookTest::Worker::drain($t, timeout => 30);
my %by_id;
$by_id{ $_->{event_id} }{ $_->{key} } += $_->{effect} for $d->requests;
for my $ep (qw(gh hm)) {
	is(scalar(keys %{ $by_id{"$ep-1002"} }), 2, "$ep-1002: the genuine delivery and the released copy, two keys");
	is(join(',', values %{ $by_id{"$ep-1002"} }), '1,1', "$ep-1002: one effect each");
}
is($t->sql(q{select count(*) from hookinbox.action_collapse}), 0, 'nothing collapsed');

done_testing();
