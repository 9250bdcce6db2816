# SPDX-License-Identifier: ISC
# The intake path through lighttpd + the responder + PostgreSQL: every row of
# the acceptance table, each checked against the rows in the database.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig github_sig standard_sig);
use JSON::PP;
use POSIX qw(_exit);
use constant ALLOC_MAX => 8.5;

my $secret = 'whsec_stripe_test_3f9a8b7c6d5e4f';
my $t = HookTest->new(
	intake => { max_body => 4096 },
	endpoints => {
		'stripe-live' => { provider => 'stripe', secrets => [$secret], account => 'acct_1', environment => 'live' },
		'gh' => { provider => 'github', secrets => ['gh-secret-0123456789'] },
		'std' => { provider => 'standard', secrets => ['whsec_' . MIME::Base64::encode_base64('0123456789abcdef0123', '')] },
	},
	procs => $ENV{HOOKINBOX_INTAKE_THREADS} ? 1 : 4,
);
# 11-intake-group.t runs this file again with one process of several
# threads sharing one committing connection (group commit)
if (my $n = $ENV{HOOKINBOX_INTAKE_THREADS}) {
	$t->{o}{intake}{threads} = $n;
	$t->write_config;
	$t->httpd->restart;
}

sub rows { $t->sql('select count(*) from hookinbox.inbox') }

sub stripe_event {
	my ($id, %o) = @_;
	return encode_json({ id => $id, object => 'event', type => $o{type} // 'invoice.paid',
		created => $o{created} // 1700000000, data => { object => { id => $o{obj} // 'in_1', object => 'invoice' } } });
}

sub send_stripe {
	my ($body, %o) = @_;
	return $t->post('stripe-live', $body, { 'Stripe-Signature' => stripe_sig($o{secret} // $secret, $body, $o{t}),
		'Content-Type' => 'application/json' });
}

# valid, new
my $body = stripe_event('evt_1');
my $r = send_stripe($body);
is($r->{status}, 200, 'valid delivery: 200');
ok($r->{json}{id} > 0, 'valid delivery: an intake id');
is($r->{json}{duplicate}, JSON::PP::false, 'valid delivery: not a duplicate');
my $id = $r->{json}{id};
is(rows(), 1, 'valid delivery: one row');
is($t->sql("select provider||'|'||account||'|'||environment||'|'||event_id||'|'||event_type||'|'||object_id||'|'||event_version||'|'||state from hookinbox.inbox"),
	'stripe|acct_1|live|evt_1|invoice.paid|in_1|1700000000|pending', 'envelope fields stored');
is($t->sql("select encode(sha256(body), 'hex') || ' ' || length(body) from hookinbox.inbox"),
	Digest::SHA::sha256_hex($body) . ' ' . length($body), 'body stored as the exact bytes');
is($t->sql(q{select count(*) from hookinbox.inbox where headers::text ~* 'signature'}), 0,
	'signature header not stored');

# same event again (fresh signature, as a provider retry would carry)
$r = send_stripe($body);
is($r->{status}, 200, 'redelivery: 200');
is($r->{json}{id}, $id, 'redelivery: same id');
is($r->{json}{duplicate}, JSON::PP::true, 'redelivery: duplicate');
is(rows(), 1, 'redelivery: still one row');

# n children at once, child k (1..n) running $code->(k); returns when all ended
sub in_parallel {
	my ($n, $code) = @_;
	my @pids;
	for my $k (1 .. $n) {
		my $pid = fork // die;
		if (!$pid) {
			$code->($k);
			_exit(0);
		}
		push @pids, $pid;
	}
	waitpid $_, 0 for @pids;
}

# 50 concurrent deliveries of one event (under group commit, each leader
# pausing before its batch so that copies of the event share one)
{
	$t->httpd->restart(HOOKINBOX_FAILPOINT => 'group-commit-pause') if $ENV{HOOKINBOX_INTAKE_THREADS};
	my $b = stripe_event('evt_concurrent');
	my $dir = $t->dir;
	in_parallel(50, sub {
		my ($i) = @_;
		my $res = HTTP::Tiny->new(timeout => 30)->request('POST', $t->url('stripe-live'),
			{ content => $b, headers => { 'Stripe-Signature' => stripe_sig($secret, $b) } });
		open my $fh, '>', "$dir/conc.$i" or _exit(1);
		print $fh "$res->{status} $res->{content}";
		close $fh;
	});
	my (%status, %ids, %dup);
	for my $i (1 .. 50) {
		open my $fh, '<', "$dir/conc.$i" or next;
		my ($st, $json) = split / /, <$fh>, 2;
		$status{$st}++;
		next unless $st == 200;
		my $j = decode_json($json);
		$ids{ $j->{id} }++;
		$dup{ $j->{duplicate} ? 'true' : 'false' }++;
	}
	is_deeply(\%status, { 200 => 50 }, '50 concurrent deliveries: all 200');
	is(scalar(keys %ids), 1, '50 concurrent deliveries: one id');
	is_deeply(\%dup, { false => 1, true => 49 }, '50 concurrent deliveries: one first, 49 duplicates');
	$t->httpd->restart(HOOKINBOX_FAILPOINT => undef) if $ENV{HOOKINBOX_INTAKE_THREADS};
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_concurrent'}), 1,
		'50 concurrent deliveries: one row');
}

# unique deliveries from 8 senders at once, 25 each (under group commit,
# batches one after another, their leaders passing the lead): each is
# answered 200 with the id of its own row, which is there
{
	my $dir = $t->dir;
	in_parallel(8, sub {
		my ($k) = @_;
		my $http = HTTP::Tiny->new(timeout => 30);
		open my $fh, '>', "$dir/uniq.$k" or _exit(1);
		for my $i (1 .. 25) {
			my $b = stripe_event("evt_uniq_${k}_$i", obj => "in_uniq_$i");
			my $res = $http->request('POST', $t->url('stripe-live'),
				{ content => $b, headers => { 'Stripe-Signature' => stripe_sig($secret, $b) } });
			my $id = $res->{status} == 200 ? eval { decode_json($res->{content})->{id} } : undef;
			print $fh "evt_uniq_${k}_$i $res->{status} " . ($id // '-') . "\n";
		}
		close $fh;
	});
	my %row = map { split / / } split /\n/,
		$t->sql(q{select event_id || ' ' || id from hookinbox.inbox where event_id like 'evt_uniq_%'});
	my ($n, $ok) = (0, 0);
	for my $k (1 .. 8) {
		open my $fh, '<', "$dir/uniq.$k" or next;
		while (<$fh>) {
			my ($ev, $st, $id) = split ' ';
			$n++;
			$ok++ if $st == 200 && defined $row{$ev} && $row{$ev} eq $id;
		}
	}
	is($n, 200, 'unique concurrent deliveries: 200 answers');
	is($ok, 200, 'unique concurrent deliveries: each 200 with the id of its own stored row');
}

my $before = rows();

# bad signature, wrong secret, stale and future timestamps: 401, nothing stored
$r = send_stripe(stripe_event('evt_bad'), secret => 'wrong-secret-000');
is($r->{status}, 401, 'wrong secret: 401');
{
	my $b = stripe_event('evt_tamper');
	my $sig = stripe_sig($secret, $b);
	$b =~ s/invoice.paid/invoice.pbid/;
	$r = $t->post('stripe-live', $b, { 'Stripe-Signature' => $sig });
	is($r->{status}, 401, 'tampered body: 401');
}
$r = send_stripe(stripe_event('evt_stale'), t => time() - 3600);
is($r->{status}, 401, 'stale timestamp: 401');
$r = send_stripe(stripe_event('evt_future'), t => time() + 3600);
is($r->{status}, 401, 'future timestamp: 401');
$r = $t->post('stripe-live', stripe_event('evt_unsigned'), {});
is($r->{status}, 401, 'no signature: 401');

# malformed header, no event id: 400
$r = $t->post('stripe-live', stripe_event('evt_malformed'), { 'Stripe-Signature' => 't=abc,v1=zz' });
is($r->{status}, 400, 'malformed signature header: 400');
{
	my $b = encode_json({ object => 'event', type => 'invoice.paid' });
	$r = send_stripe($b);
	is($r->{status}, 400, 'no event id: 400');
	like($r->{content}, qr/event id/, 'no event id: says so');
}
{
	my $b = '{"id":"evt_deep","x":' . ('[' x 10000) . (']' x 10000) . '}';
	$t->post('gh', $b, { 'X-Hub-Signature-256' => github_sig('gh-secret-0123456789', $b), 'X-GitHub-Event' => 'push', 'X-GitHub-Delivery' => 'deep-1' });
}

# body over max_body (4096): 413; exactly at the limit is read
{
	my $big = '{"id":"evt_big","pad":"' . ('x' x 5000) . '"}';
	$r = send_stripe($big);
	is($r->{status}, 413, 'body over max_body: 413');
	my $pad = 4096 - length('{"id":"evt_at","type":"t","pad":""}');
	my $at = '{"id":"evt_at","type":"t","pad":"' . ('y' x $pad) . '"}';
	is(length($at), 4096, 'a body of exactly max_body');
	$r = send_stripe($at);
	is($r->{status}, 200, 'body at max_body: accepted');
	$before++;
}

# unknown endpoint, GET, tricky paths
$r = $t->post('nope', stripe_event('evt_nope'), {});
is($r->{status}, 404, 'unknown endpoint: 404');
$r = $t->post('stripe-live', '', {}, method => 'GET');
is($r->{status}, 405, 'GET: 405');
for my $path ('/hooks/gh/../stripe-live', '/hooks/gh%2Fstripe-live', '/hooks/stripe-live%00') {
	my $b = stripe_event('evt_path');
	$r = $t->post(undef, $b, { 'Stripe-Signature' => stripe_sig($secret, $b) },
		url => 'http://127.0.0.1:' . $t->httpd->{port} . $path);
	isnt($r->{status}, 200, "path $path: refused ($r->{status})");
	ok($r->{status} >= 400 && $r->{status} < 500, "path $path: a 4xx");
}

is(rows(), $before, 'rejected requests stored nothing');

# GitHub and Standard Webhooks through the same path
{
	my $b = '{"action":"opened","number":1}';
	$r = $t->post('gh', $b, { 'X-Hub-Signature-256' => github_sig('gh-secret-0123456789', $b),
		'X-GitHub-Event' => 'pull_request', 'X-GitHub-Delivery' => 'd-1' });
	is($r->{status}, 200, 'github: accepted');
	is($t->sql(q{select event_type from hookinbox.inbox where event_id = 'd-1'}), 'pull_request.opened', 'github: type with action');
	# the same body under a fresh, unsigned delivery id is a duplicate, not a new event
	my $r2 = $t->post('gh', $b, { 'X-Hub-Signature-256' => github_sig('gh-secret-0123456789', $b),
		'X-GitHub-Event' => 'pull_request', 'X-GitHub-Delivery' => 'd-2' });
	is($r2->{json}{id}, $r->{json}{id}, 'github: replayed body under a new delivery id is a duplicate');
	my $std_secret = 'whsec_' . MIME::Base64::encode_base64('0123456789abcdef0123', '');
	my $sb = '{"type":"user.created","timestamp":"2024-01-01T00:00:00Z","data":{"id":"u_1"}}';
	$r = $t->post('std', $sb, { standard_sig($std_secret, 'msg_1', $sb) });
	is($r->{status}, 200, 'standard webhooks: accepted');
	is($t->sql(q{select event_type||'|'||object_id from hookinbox.inbox where event_id = 'msg_1'}), 'user.created|u_1', 'standard webhooks: envelope');
}

# PostgreSQL stopped: 503 with Retry-After, nothing stored; after restart the retry is accepted
{
	my $rows = rows();
	$t->pg->stop('fast');
	my $b = stripe_event('evt_outage');
	$r = send_stripe($b);
	is($r->{status}, 503, 'database down: 503');
	ok(defined $r->{headers}{'retry-after'}, 'database down: Retry-After');
	$t->pg->start;
	is(rows(), $rows, 'database down: nothing stored');
	$r = send_stripe($b);
	is($r->{status}, 200, 'after restart: the retry is accepted');
	is($r->{json}{duplicate}, JSON::PP::false, 'after restart: stored as new');
	is(rows(), $rows + 1, 'after restart: one row');
}

# accept_batch(), the responder's one statement: a batch that holds one
# event twice (and one unsigned-id body twice) stores each once, and the
# later copy is answered with the earlier one's id, as a duplicate
{
	my $out = $t->sql(q{select string_agg(id || ':' || duplicate, ' ' order by ord)
		from hookinbox.accept_batch(
			array['stripe-live', 'stripe-live', 'gh', 'gh', 'stripe-live'],
			array['stripe', 'stripe', 'github', 'github', 'stripe'],
			array['acct_1', 'acct_1', 'gh', 'gh', 'acct_1'],
			array['live', 'live', 'default', 'default', 'live'],
			array['evt_b1', 'evt_b1', 'batch-d1', 'batch-d2', 'evt_b2'],
			array['t', 't', 'push', 'push', 't'], array[null, null, null, null, null]::text[],
			array[null, null, null, null, null]::bigint[], array['{}', '{}', '{}', '{}', '{}']::jsonb[],
			array['a', 'a', 'batch body', 'batch body', 'b']::bytea[], array[false, false, true, true, false])
			with ordinality as b(id, duplicate, ord)});
	my @r = map { [split /:/] } split / /, $out;
	is(scalar(@r), 5, 'accept_batch: one answer per delivery');
	is_deeply([map { $_->[1] } @r], [qw(false true false true false)], 'accept_batch: later copies are duplicates');
	is($r[1][0], $r[0][0], 'accept_batch: a copy of an event gets its id');
	is($r[3][0], $r[2][0], 'accept_batch: a copy of an unsigned-id body gets its id');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id in ('evt_b1', 'batch-d1', 'batch-d2', 'evt_b2')}), 3,
		'accept_batch: three rows for five deliveries');
}

# the batch's one statement for new signed ids beside the per-delivery path,
# in one batch: a key stored before, a key twice, a key only the ledger
# knows (its row purged), a signed id beside an unsigned-id body, new keys;
# each answer is its own delivery's row
{
	my $b2 = $t->sql(q{select id from hookinbox.inbox where event_id = 'evt_b2'});
	$t->sql(q{insert into hookinbox.ledger (endpoint, digest, first_id, seen, first_type)
		values ('stripe-live', hookinbox.key_digest('stripe', 'acct_1', 'live', 'evt_gone'), 424242,
		current_date, 't')});
	my @ev = qw(evt_f1 evt_b2 evt_f2 evt_f1 evt_gone batch-f3 evt_f3);
	my $n = @ev;
	my $arr = sub { 'array[' . join(', ', map { "'$_'" } @_) . ']' };
	my $out = $t->sql("select string_agg(id || ':' || duplicate, ' ' order by ord)
		from hookinbox.accept_batch(
			" . $arr->(map { $_ eq 'batch-f3' ? 'gh' : 'stripe-live' } @ev) . ",
			" . $arr->(map { $_ eq 'batch-f3' ? 'github' : 'stripe' } @ev) . ",
			" . $arr->(map { $_ eq 'batch-f3' ? 'gh' : 'acct_1' } @ev) . ",
			" . $arr->(map { $_ eq 'batch-f3' ? 'default' : 'live' } @ev) . ",
			" . $arr->(@ev) . ", " . $arr->(('t') x $n) . ", array_fill(null::text, array[$n]),
			array_fill(null::bigint, array[$n]), array_fill('{}'::jsonb, array[$n]),
			" . $arr->(map { "body $_" } @ev) . "::bytea[],
			array[" . join(', ', map { $_ eq 'batch-f3' ? 'true' : 'false' } @ev) . "])
		with ordinality as b(id, duplicate, ord)");
	my @r = map { [split /:/] } split / /, $out;
	is(scalar(@r), $n, 'mixed batch: one answer per delivery');
	is_deeply([map { $_->[1] } @r], [qw(false true false true true false false)],
		'mixed batch: new, stored before, new, second copy, ledger, body, new');
	is($r[1][0], $b2, 'mixed batch: the key stored before answers its first id');
	is($r[3][0], $r[0][0], 'mixed batch: the second copy answers the first\'s id');
	is($r[4][0], 424242, 'mixed batch: the ledger\'s key answers the ledger\'s first id');
	for my $k (0, 2, 5, 6) {
		is($t->sql("select event_id || ' ' || convert_from(body, 'UTF8') from hookinbox.inbox where id = $r[$k][0]"),
			"$ev[$k] body $ev[$k]", "mixed batch: answer $k is the row of $ev[$k]");
	}
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id in ('evt_f1', 'evt_f2', 'evt_f3', 'batch-f3', 'evt_gone')}),
		4, 'mixed batch: four new rows, none for the ledger\'s key');
}

# Allocations per delivery in steady state, counted in the whole responder
# process (every library) by an LD_PRELOAD shim: one responder, a warm-up,
# then the count over a series of unique deliveries, sent one at a time (so
# one per batch in group commit).  None is the responder's own (request,
# reply, headers, body, batch); what is left is named below.  Not under
# valgrind or a sanitizer (their own allocators).
SKIP: {
	my $shim = HookTest::top() . '/obj/test/malloccount.so';
	my $bin = do { local $/; open my $fh, '<', HookTest::top() . '/obj/test/hookinbox.fcgi' or die; <$fh> };
	skip 'allocation count: valgrind or a sanitizer build', 3
		if $ENV{HOOKINBOX_VALGRIND} || $ENV{SANITIZE} || $bin =~ /__(?:asan|tsan|ubsan)_/ || !-e $shim;
	my $count_file = $t->dir . '/malloc.count';
	my $procs = $t->httpd->{procs};
	$t->httpd->{procs} = 1;
	$t->httpd->restart(LD_PRELOAD => $shim, MALLOCCOUNT_FILE => $count_file);
	my ($resp) = $t->httpd->signalable_responders(60);
	my $count = sub {
		unlink $count_file;
		kill 'USR2', $resp;
		for (1 .. 100) { last if -s $count_file; select(undef, undef, undef, 0.02) }
		open my $fh, '<', $count_file or return;
		my $n = <$fh>;
		chomp $n;
		return $n;
	};
	my $send = sub {
		my ($tag, $n) = @_;
		my $ok = 0;
		for my $i (1 .. $n) {
			my $r = send_stripe(stripe_event("evt_alloc_${tag}_$i", obj => "in_alloc_$i"));
			$ok++ if $r->{status} == 200;
		}
		return $ok;
	};
	$send->('warm', 30);
	my $n0 = $count->();
	my $n = 100;
	is($send->('run', $n), $n, "allocation count: $n unique deliveries stored");
	my $n1 = $count->();
	ok(defined $n0 && defined $n1, 'allocation count: the shim answered');
	my $per = (($n1 // 0) - ($n0 // 0)) / $n;
	diag(sprintf('allocations per delivery in steady state: %.1f (%s)', $per,
		$ENV{HOOKINBOX_INTAKE_THREADS} ? 'group commit' : 'single-row'));
	# 3 libpq, its result (PQgetResult: the result, its tuple block, the
	# row's values); 5 OpenSSL's HMAC provider, though its context is kept
	# (EVP_MAC_init copies the key, HMAC_Init_ex and HMAC_Final duplicate
	# their digest contexts); the envelope's fields none (each is unescaped
	# into the envelope itself: providers/envelope.h); the half is for the
	# counters written every 10 s (their libpq results)
	cmp_ok($per, '<=', ALLOC_MAX, 'allocation count: at most ' . ALLOC_MAX . ' per delivery');
	$t->httpd->{procs} = $procs;
	$t->httpd->restart(LD_PRELOAD => undef, MALLOCCOUNT_FILE => undef);
}

# the log says what happened, never the secret or a signature
my $log = $t->responder_log;
like($log, qr/event=request endpoint=stripe-live outcome=accepted status=200/, 'one line per request');
like($log, qr/reason="signature mismatch"/, 'rejections logged with their reason');
unlike($log, qr/\Q$secret\E/, 'secret not logged');
unlike($log, qr/v1=[0-9a-f]{64}/, 'signature not logged');
# rejection counts are written every ten seconds and when the responder stops
$t->httpd->stop;
is($t->sql(q{select count from hookinbox.rejection where endpoint = 'stripe-live' and reason = 'signature mismatch'}),
	2, 'rejections counted by endpoint and reason');
is($t->sql(q{select count from hookinbox.rejection where endpoint = '(unknown)' and reason = 'unknown endpoint'}), 1,
	'unknown endpoints counted under one name');

done_testing();
