# SPDX-License-Identifier: ISC
# Hostile requests: each must get a clear 4xx and change nothing (no row),
# and the responder must keep serving: a valid delivery right after each is
# accepted, and no responder process died along the way.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig github_sig standard_sig);
use IO::Socket::INET;
use JSON::PP;
use MIME::Base64 qw(encode_base64);

my $st_secret = 'whsec_hostile_0a1b2c3d4e5f';
my $gh_secret = 'gh-hostile-secret-13579';
my $gh2_secret = 'gh-other-endpoint-97531';
my $std_secret = 'whsec_' . encode_base64('hostile-standard-key-0123', '');
my $max_body = 4096;
my $t = HookTest->new(
	intake => { max_body => $max_body },
	endpoints => {
		'st' => { provider => 'stripe', secrets => [$st_secret] },
		# room for the deep-JSON bodies, so that they reach the parser
		'stbig' => { provider => 'stripe', secrets => [$st_secret], max_body => 65536 },
		'gh' => { provider => 'github', secrets => [$gh_secret] },
		'gh2' => { provider => 'github', secrets => [$gh2_secret] },
		'std' => { provider => 'standard', secrets => [$std_secret] },
	},
);
my $port = $t->httpd->{port};

sub rows { $t->sql('select count(*) from hookinbox.inbox') }

sub responders {
	my $ppid = $t->httpd->pid;
	return join ',', sort split ' ', `ps --ppid $ppid -o pid= 2>/dev/null`;
}

my $n = 0;
sub stripe_body { encode_json({ id => $_[0] // 'evt_h' . ++$n, object => 'event', type => 'invoice.paid',
	created => 1700000000, data => { object => { id => 'in_1' } } }) }

sub stripe_headers { my ($b, %o) = @_; return { 'Stripe-Signature' => stripe_sig($o{secret} // $st_secret, $b, $o{t}),
	'Content-Type' => 'application/json' } }

sub gh_headers {
	my ($b, $delivery, %o) = @_;
	return { 'X-Hub-Signature-256' => github_sig($o{secret} // $gh_secret, $b), 'X-GitHub-Event' => 'push',
		'X-GitHub-Delivery' => $delivery };
}

# a raw request (for what HTTP::Tiny will not send, and for the giant made-up
# signature headers, which need not go to the secrets list t/99 searches for);
# returns the status or undef
# when the server closed the connection without an answer
sub raw {
	my ($req, %o) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 10) or die "connect: $!";
	binmode $s;
	print $s $req;
	shutdown($s, 1) if $o{half_close};
	my $resp = '';
	eval {
		local $SIG{ALRM} = sub { die "timeout\n" };
		alarm 20;
		while (sysread($s, my $buf, 65536)) { $resp .= $buf }
		alarm 0;
	};
	close $s;
	return $resp =~ m{^HTTP/1\.[01] (\d{3})} ? $1 : undef;
}

sub raw_post {
	my ($path, $headers, $body, %o) = @_;
	my $len = $o{content_length} // length($body);
	my $h = join '', map { "$_: $headers->{$_}\r\n" } sort keys %$headers;
	return raw("POST $path HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: $len\r\n$h\r\n$body", %o);
}

# the check after every hostile request
sub unchanged_and_serving {
	my ($what, $status, $rows_before, %o) = @_;
	if ($o{closed_ok} && !defined $status) {
		pass("$what: connection cut by the server");
	} else {
		ok(defined $status && $status >= 400 && $status <= 499, "$what: a 4xx (" . ($status // 'none') . ')');
	}
	is(rows(), $rows_before, "$what: nothing stored");
	my $b = stripe_body();
	my $r = $t->post('st', $b, stripe_headers($b));
	is($r->{status}, 200, "$what: a valid delivery right after is accepted");
}

sub hostile {
	my ($what, $code, %o) = @_;
	my $before = rows();
	my $status = $code->();
	$status = $status->{status} if ref $status;
	unchanged_and_serving($what, $status, $before, %o);
	return $status;
}

# warm up: both responder processes alive, one row
{
	my $b = stripe_body();
	is($t->post('st', $b, stripe_headers($b))->{status}, 200, 'a valid delivery is accepted');
}
my $procs = responders();
ok($procs ne '', "responder processes running ($procs)");

# ---- signatures
hostile('no signature', sub { $t->post('st', stripe_body(), { 'Content-Type' => 'application/json' }) });
hostile('no signature (github)', sub { my $b = '{"a":1}'; $t->post('gh', $b, { 'X-GitHub-Event' => 'push', 'X-GitHub-Delivery' => 'x-1' }) });
hostile("signature made with another endpoint's secret", sub {
	my $b = '{"ref":"refs/heads/main"}';
	$t->post('gh', $b, gh_headers($b, 'other-1', secret => $gh2_secret));
});
hostile("another endpoint's secret (stripe signed with a github secret)", sub {
	my $b = stripe_body();
	$t->post('st', $b, stripe_headers($b, secret => $gh_secret));
});
for my $dir ([-1, 'stale'], [1, 'future']) {
	my ($sign, $name) = @$dir;
	# 310, not 301: clear of the 300 s window despite whole-second rounding
	for my $off (310, 3600, 86400 * 365) {
		hostile("stripe timestamp $name by $off s", sub {
			my $b = stripe_body();
			$t->post('st', $b, stripe_headers($b, t => time() + $sign * $off));
		});
	}
	hostile("standard webhooks timestamp $name", sub {
		my $b = '{"type":"user.created","data":{"id":"u_1"}}';
		$t->post('std', $b, { standard_sig($std_secret, 'msg_' . $name, $b, time() + $sign * 400) });
	});
}
hostile('stripe timestamp with 13 digits', sub {
	my $b = stripe_body();
	my $sig = stripe_sig($st_secret, $b) =~ s/^t=(\d+)/t=9$1/r;
	$t->post('st', $b, { 'Stripe-Signature' => $sig });
});

# ---- replay of a valid GitHub body under a fresh delivery id: a duplicate of the first
{
	my $b = '{"ref":"refs/heads/main","after":"abc123"}';
	my $r1 = $t->post('gh', $b, gh_headers($b, 'delivery-1'));
	is($r1->{status}, 200, 'github: the first delivery is accepted');
	my $before = rows();
	my $r2 = $t->post('gh', $b, gh_headers($b, 'delivery-2-fresh'));
	is($r2->{status}, 200, 'github replay under a fresh delivery id: 200');
	is($r2->{json}{id}, $r1->{json}{id}, 'github replay: the id of the first');
	is($r2->{json}{duplicate}, JSON::PP::true, 'github replay: duplicate');
	is(rows(), $before, 'github replay: no new row');
	is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'delivery-2-fresh'}), 0,
		'github replay: the fresh delivery id is not stored');
}

# ---- sizes
hostile('a header of 100 KB', sub {
	my $b = stripe_body();
	$t->post('st', $b, { %{ stripe_headers($b) }, 'X-Padding' => 'a' x 100_000 });
});
hostile('a signature header of 100 KB', sub {
	my $b = stripe_body();
	my $h = stripe_headers($b);
	$h->{'Stripe-Signature'} .= ',v0=' . ('f' x 100_000);
	raw_post('/hooks/st', $h, $b);
});
hostile('10,000 signature entries', sub {
	my $b = stripe_body();
	my $h = stripe_headers($b);
	$h->{'Stripe-Signature'} = 't=' . int(time()) . ',' . join(',', ('v1=' . '0' x 64) x 10_000);
	raw_post('/hooks/st', $h, $b);
});
# what fits in the web server's header limit reaches the responder, which bounds entries itself
hostile('1,500 signature entries (within the header limit)', sub {
	my $b = stripe_body();
	my $h = stripe_headers($b);
	$h->{'Stripe-Signature'} = join(',', ('v1=0') x 1500) . ',' . $h->{'Stripe-Signature'};
	raw_post('/hooks/st', $h, $b);
});
hostile('10,000 standard webhooks signatures', sub {
	my $b = '{"type":"user.created"}';
	my %h = standard_sig($std_secret, 'msg_many', $b);
	$h{'webhook-signature'} = join(' ', ('v1,x') x 10_000) . " $h{'webhook-signature'}";
	raw_post('/hooks/std', \%h, $b);
});
{
	my $fixed = '{"id":"evt_at","object":"event","type":"t","pad":""}';
	my $at = '{"id":"evt_at","object":"event","type":"t","pad":"' . ('y' x ($max_body - length($fixed))) . '"}';
	is(length($at), $max_body, 'a body of exactly max_body');
	my $before = rows();
	my $r = $t->post('st', $at, stripe_headers($at));
	is($r->{status}, 200, 'body exactly at max_body: accepted');
	is(rows(), $before + 1, 'body exactly at max_body: stored');
	my $over = $at =~ s/"pad":"/"pad":"y/r;
	$over =~ s/evt_at/evt_ov/;
	is(length($over), $max_body + 1, 'a body of max_body + 1');
	my $st = hostile('body one byte over max_body', sub { $t->post('st', $over, stripe_headers($over)) });
	is($st, 413, 'body one byte over max_body: 413');
}

# ---- contents (all validly signed: the body itself is the attack)
hostile('invalid UTF-8 in the body', sub {
	my $b = qq({"id":"evt_bad\xff\xfe","object":"event","type":"invoice.paid"});
	$t->post('st', $b, stripe_headers($b));
});
hostile('overlong UTF-8 and a surrogate in the event id', sub {
	my $b = qq({"id":"evt_\xc0\xaf\xed\xa0\x80","object":"event"});
	$t->post('st', $b, stripe_headers($b));
});
hostile('invalid UTF-8 in the delivery id header', sub {
	my $b = '{"ref":"refs/heads/utf8"}';
	raw_post('/hooks/gh', gh_headers($b, "d-\xff\xfe"), $b);
});
hostile('JSON nested 10,000 deep', sub {
	my $b = '{"id":"evt_deep","x":' . ('[' x 10_000) . (']' x 10_000) . '}';
	my $r = $t->post('stbig', $b, stripe_headers($b));
	is($r->{status}, 400, 'deep JSON reaches the parser: 400 (' . $r->{status} . ')');
	$r;
});
hostile('JSON objects nested 10,000 deep', sub {
	my $b = '{"id":"evt_deep2","x":' . ('{"a":' x 10_000) . '1' . ('}' x 10_000) . '}';
	my $r = $t->post('stbig', $b, stripe_headers($b));
	is($r->{status}, 400, 'deep JSON reaches the parser: 400 (' . $r->{status} . ')');
	$r;
});
hostile('NUL byte inside a JSON string', sub {
	my $b = qq({"id":"evt_nul\x00x","object":"event"});
	$t->post('st', $b, stripe_headers($b));
});
hostile('NUL bytes after the JSON', sub {
	my $b = stripe_body() . "\x00\x00";
	$t->post('st', $b, stripe_headers($b));
});
hostile('NUL byte in a header', sub {
	my $b = '{"ref":"refs/heads/nul"}';
	raw_post('/hooks/gh', gh_headers($b, "d-nul\x00evil"), $b);
}, closed_ok => 1);
hostile('NUL byte in the signature header', sub {
	my $b = stripe_body();
	my $h = stripe_headers($b);
	$h->{'Stripe-Signature'} =~ s/,v1=/\x00,v1=/;
	raw_post('/hooks/st', $h, $b);
}, closed_ok => 1);

# ---- paths that try to name another endpoint (each validly signed for the endpoint named last)
{
	my $b = stripe_body();
	my $h = stripe_headers($b);
	for my $path ('/hooks/gh/../st', '/hooks/a/../st', '/hooks/gh%2Fst', '/hooks/gh%2fst', '/hooks/%2e%2e/st',
		'/hooks/gh/%2e%2e/st', '/hooks/gh/%2E%2E/st', '/hooks/gh/./st', '/hooks/st%00', '/hooks/st/',
		'/hooks/st?x=/../gh', '/hooks//st', '/hooks/gh\\..\\st', '/hooks/%73t') {
		my $before = rows();
		my $st = raw_post($path, $h, $b);
		if ($path eq '/hooks//st' || $path eq '/hooks/st?x=/../gh') {
			# names st itself (an empty segment; a query): not another endpoint
			ok(defined $st, "path $path: answered ($st)");
			is($t->sql(q{select count(*) from hookinbox.inbox where endpoint <> 'st' and event_id like 'evt_h%'}), 0,
				"path $path: nothing stored under another endpoint");
			next;
		}
		unchanged_and_serving("path $path", $st, $before);
	}
}

# ---- CONTENT_LENGTH lies
hostile('Content-Length longer than the body (client half-closes)', sub {
	my $b = stripe_body();
	raw_post('/hooks/st', stripe_headers($b), $b, content_length => length($b) + 100, half_close => 1);
}, closed_ok => 1);
hostile('Content-Length shorter than the body', sub {
	# the server reads Content-Length bytes: the signature is over the whole body, so it cannot match
	my $b = stripe_body();
	raw_post('/hooks/st', stripe_headers($b), $b, content_length => length($b) - 5);
});
hostile('negative Content-Length', sub {
	my $b = stripe_body();
	raw_post('/hooks/st', stripe_headers($b), $b, content_length => -1);
}, closed_ok => 1);
hostile('Content-Length not a number', sub {
	my $b = stripe_body();
	raw_post('/hooks/st', stripe_headers($b), $b, content_length => '12abc');
}, closed_ok => 1);
hostile('Content-Length with 30 digits', sub {
	my $b = stripe_body();
	raw_post('/hooks/st', stripe_headers($b), $b, content_length => '9' x 30);
}, closed_ok => 1);
hostile('two Content-Length headers', sub {
	my $b = stripe_body();
	my $h = stripe_headers($b);
	my $hd = join '', map { "$_: $h->{$_}\r\n" } sort keys %$h;
	raw("POST /hooks/st HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\nContent-Length: "
		. length($b) . "\r\n$hd\r\n$b");
}, closed_ok => 1);

# ---- methods
hostile('GET', sub { $t->post('st', '', {}, method => 'GET') });
hostile('PUT with a valid signature', sub { my $b = stripe_body(); $t->post('st', $b, stripe_headers($b), method => 'PUT') });

is(responders(), $procs, 'no responder process died or was replaced');
like($t->responder_log, qr/outcome=accepted/, 'the responder logged its requests');
unlike($t->responder_log, qr/failpoint|AddressSanitizer|runtime error|Segmentation/, 'no crash reported');

done_testing();
