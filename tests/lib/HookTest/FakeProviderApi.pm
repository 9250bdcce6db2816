# SPDX-License-Identifier: ISC
# HookTest::FakeProviderApi - a small, real HTTP server answering as Stripe's
# and GitHub's APIs do, for hookinbox-backfill's tests.
#
#   my $api = HookTest::FakeProviderApi->new(dir => $dir, token => 'sk_test_...');
#   $api->stripe_events(@events);        # each { id, created, text, delivered }
#   $api->github_deliveries(@deliveries); # each { id, guid, delivered_at, event,
#                                         #   action, redelivery, status_code,
#                                         #   headers => {...}, payload => TEXT }
#   $api->set(page_size => 2, link_base => 'http://elsewhere', fail => 1,
#             rate_limited => 1, loop => 1);
#   (loop: Stripe answers has_more with the same first page whatever
#   starting_after says; GitHub's next link points to the page itself)
#   ... run hookinbox-backfill --api-url $api->url ...
#   my @req = $api->requests;            # { method, path, query, auth }
#
# The shapes are the documented ones: Stripe's list object (object "list",
# url, has_more, data) with delivery_success, created[gte], created[lte],
# limit and starting_after; GitHub's array of deliveries (id, guid,
# delivered_at, redelivery, duration, status, status_code, event, action,
# installation_id, repository_id) paginated by a Link header with a cursor,
# and one delivery with request { headers, payload } and response.  An
# event's text is sent exactly as given, so a test can compare the stored
# body byte for byte.  A request without "Authorization: Bearer <token>"
# gets 401 with the provider's error shape.  The fixtures and settings live
# in files under dir, read on every request, so a test can change them
# while the server runs.  One process (forked), one connection at a time.
package HookTest::FakeProviderApi;

use strict;
use warnings;
use IO::Socket::INET;
use JSON::PP;
use POSIX ();

sub new {
	my ($class, %o) = @_;
	my $dir = $o{dir} // die 'dir';
	my $listen = IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0,
		Proto => 'tcp', ReuseAddr => 1) or die "fake api: listen: $!";
	my $self = bless { dir => $dir, port => $listen->sockport, file => "$dir/fakeapi.json",
		log => "$dir/fakeapi.log" }, $class;
	$self->_save({ token => $o{token}, page_size => 2, stripe => [], github => [] });
	open my $fh, '>', $self->{log} or die $!;
	close $fh;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		$self->_serve($listen);
		POSIX::_exit(0);
	}
	$self->{pid} = $pid;
	close $listen;
	return $self;
}

sub url { "http://127.0.0.1:$_[0]{port}" }

sub _load {
	my ($self) = @_;
	open my $fh, '<', $self->{file} or die "$self->{file}: $!";
	local $/;
	return JSON::PP->new->decode(<$fh>);
}

sub _save {
	my ($self, $state) = @_;
	open my $fh, '>', "$self->{file}.tmp" or die $!;
	print $fh JSON::PP->new->canonical->encode($state);
	close $fh;
	rename "$self->{file}.tmp", $self->{file} or die $!;
}

sub set {
	my ($self, %kv) = @_;
	my $s = $self->_load;
	$s->{$_} = $kv{$_} for keys %kv;
	$self->_save($s);
}

# newest first, as both APIs list them
sub stripe_events { my ($self, @e) = @_; $self->set(stripe => [sort { $b->{created} <=> $a->{created} } @e]) }
sub github_deliveries { my ($self, @d) = @_; $self->set(github => [sort { $b->{id} <=> $a->{id} } @d]) }

sub requests {
	my ($self) = @_;
	open my $fh, '<', $self->{log} or return ();
	return map { JSON::PP->new->decode($_) } <$fh>;
}

sub _serve {
	my ($self, $listen) = @_;
	while (my $c = $listen->accept) {
		my ($line, %h) = (scalar <$c>);
		next unless defined $line;
		while (my $l = <$c>) {
			last if $l =~ /^\r?\n$/;
			$h{lc $1} = $2 if $l =~ /^([^:]+):\s*(.*?)\r?\n$/;
		}
		my ($method, $target) = $line =~ /^(\S+) (\S+)/;
		my ($path, $query) = split /\?/, $target // '', 2;
		my $s = $self->_load;
		my $auth = $h{authorization} // '';
		open my $log, '>>', $self->{log} or die $!;
		print $log JSON::PP->new->canonical->encode({ method => $method, path => $path,
			query => $query // '', auth => $auth eq "Bearer $s->{token}" ? 1 : 0,
			accept => $h{accept} // '' }), "\n";
		close $log;
		my ($status, $body, @hdr) = $self->_answer($s, $method, $path, $query // '', $auth);
		print $c "HTTP/1.1 $status X\r\nContent-Type: application/json\r\n",
			map({ "$_\r\n" } @hdr), "Content-Length: " . length($body) . "\r\nConnection: close\r\n\r\n",
			$body;
		close $c;
	}
}

sub _query {
	my ($q) = @_;
	my %p;
	for (split /&/, $q) {
		my ($k, $v) = split /=/, $_, 2;
		s/%([0-9A-Fa-f]{2})/chr hex $1/ge for $k, $v;
		$p{$k} = $v;
	}
	return \%p;
}

sub _answer {
	my ($self, $s, $method, $path, $query, $auth) = @_;
	my $p = _query($query);
	my $n = $s->{page_size};
	my $github = $path =~ m{^/repos/};
	if ($auth ne "Bearer $s->{token}") {
		return (401, $github
			? '{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}'
			: '{"error":{"message":"Invalid API Key provided","type":"invalid_request_error"}}');
	}
	return (500, '{"error":{"message":"boom"}}') if $s->{fail};
	# over the rate limit: GitHub answers 403 with X-RateLimit-Remaining: 0, Stripe 429
	if ($s->{rate_limited}) {
		return $github
			? (403, '{"message":"API rate limit exceeded for user ID 1."}', 'X-RateLimit-Limit: 5000',
				'X-RateLimit-Remaining: 0', 'X-RateLimit-Reset: ' . (time + 600))
			: (429, '{"error":{"message":"Too many requests","type":"rate_limit_error"}}');
	}
	if ($method eq 'GET' && $path eq '/v1/events') {
		my @e = grep { !$_->{delivered} && $_->{created} >= ($p->{'created[gte]'} // 0)
			&& $_->{created} <= ($p->{'created[lte]'} // 9e18) } @{ $s->{stripe} };
		return (400, '{"error":{"message":"delivery_success must be false"}}')
			unless ($p->{delivery_success} // '') eq 'false';
		$n = $p->{limit} if $p->{limit} && $p->{limit} < $n;
		if ($s->{loop}) {
			splice @e, $n if @e > $n;
			return (200, qq({"object": "list", "data": [) . join(",", map { $_->{text} } @e)
				. qq(], "has_more": true, "url": "/v1/events"}));
		}
		if (my $after = $p->{starting_after}) {
			my ($i) = grep { $e[$_]{id} eq $after } 0 .. $#e;
			return (400, '{"error":{"message":"No such event"}}') unless defined $i;
			splice @e, 0, $i + 1;
		}
		my $more = @e > $n ? 'true' : 'false';
		splice @e, $n if @e > $n;
		return (200, qq({\n  "object": "list",\n  "data": [\n)
			. join(",\n", map { $_->{text} } @e)
			. qq(\n  ],\n  "has_more": $more,\n  "url": "/v1/events"\n}));
	}
	if ($method eq 'GET' && $path =~ m{^/repos/([^/]+/[^/]+)/hooks/(\d+)/deliveries(?:/(\d+))?$}) {
		my ($repo, $hook, $one) = ($1, $2, $3);
		return (404, '{"message":"Not Found"}') unless $repo eq ($s->{repo} // 'o/r') && $hook eq ($s->{hook} // '7');
		my @d = @{ $s->{github} };
		my $item = sub {
			my ($d) = @_;
			return JSON::PP->new->canonical->encode({ id => $d->{id} + 0, guid => $d->{guid},
				delivered_at => $d->{delivered_at}, redelivery => $d->{redelivery} ? JSON::PP::true : JSON::PP::false,
				duration => 0.27, status => $d->{status_code} == 200 ? 'OK' : 'failed to connect',
				status_code => $d->{status_code} + 0, event => $d->{event}, action => $d->{action},
				installation_id => undef, repository_id => 123, throttled_at => undef });
		};
		if (defined $one) {
			my ($d) = grep { $_->{id} == $one } @d;
			return (404, '{"message":"Not Found"}') unless $d;
			my $head = $item->($d);
			$head =~ s/\}$//;
			return (200, $head . ',"url":"https://example.com/hook","request":{"headers":'
				. JSON::PP->new->canonical->encode($d->{headers}) . ',"payload":' . $d->{payload}
				. '},"response":{"headers":{},"payload":"bad gateway"}}');
		}
		my $from = $p->{cursor} // 0;
		my @page = grep { defined } @d[$from .. ($from + $n - 1 < $#d ? $from + $n - 1 : $#d)];
		my @hdr;
		if ($s->{loop}) {
			my $base = $s->{link_base} // $self->url;
			push @hdr, qq(Link: <$base/repos/$repo/hooks/$hook/deliveries?per_page=100&cursor=$from>; rel="next");
		} elsif ($from + $n <= $#d) {
			my $base = $s->{link_base} // $self->url;
			push @hdr, qq(Link: <$base/repos/$repo/hooks/$hook/deliveries?per_page=100&cursor=)
				. ($from + $n) . qq(>; rel="next", <$base/repos/$repo/hooks/$hook/deliveries?per_page=100>; rel="first");
		}
		return (200, '[' . join(',', map { $item->($_) } @page) . ']', @hdr);
	}
	return (404, '{"message":"Not Found"}');
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	if ($self->{pid}) {
		kill 'TERM', $self->{pid};
		waitpid $self->{pid}, 0;
	}
}

1;
