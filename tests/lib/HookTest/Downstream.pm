# SPDX-License-Identifier: ISC
# HookTest::Downstream - a small, real HTTP/1.1 server that plays an idempotent API.
#
#   my $d = HookTest::Downstream->new(dir => $t->dir, plan => { '/hooks' => '500,200' },
#                           secret => 'whsec_...');
#   my $url = $d->url('/hooks');
#   ... run the worker ...
#   my @req = $d->requests;          # every request, in arrival order
#   my %eff = $d->effects;           # Idempotency-Key => effects (0 or 1)
#
# One process (forked from the test), select-based, keep-alive, many
# concurrent connections, on 127.0.0.1.  Every request is recorded as one
# JSON line in $dir/downstream.log: method, path, Idempotency-Key, attempt,
# event type and id, the Standard Webhooks headers (and whether the
# signature verifies when a secret is given), the body's SHA-256, the
# status answered, whether it caused a new effect and whether it was a
# replay (and, for planned answers, the delay before the answer; for a 409
# because the key was still in progress, inprogress = 1).
#
# Idempotency as a real API does it: the first request with a key that is
# answered 2xx causes one effect and its response is stored; later requests
# with that key get the stored response ("Idempotent-Replayed: true") and
# cause nothing.  While the first request with a key is still being
# processed ("sleep"), another with that key gets 409.  Non-2xx answers
# cause no effect and are not stored.
#
# Plans, per path or per key ("key:<Idempotency-Key>"), else the default:
# a comma-separated list walked once per key (the last item repeats):
#   200 | 500 | 400 | "429 Retry-After: 3" (a status and optional headers)
#   "200 body=TEXT"             that status with TEXT as the body (2xx
#                               answers are otherwise {"ok":true,"seq":N})
#   "sleep 5" or "sleep 5 201": take that long (the effect happens at once
#                               when the status is 2xx), then answer
#   reset                       close the connection without an answer
#   garbage                     answer bytes that are not HTTP
# GET /_reconcile/<key> answers whether a key had its effect (200 with its
# X-Request-Id, else 404), as a downstream's lookup by idempotency key would.
# latency => seconds adds a fixed delay to every answer.  Plans can be
# changed while running with $d->plan($target, $plan).
package HookTest::Downstream;

use strict;
use warnings;
use Digest::SHA qw(sha256_hex hmac_sha256);
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use HTTP::Tiny;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use MIME::Base64 qw(decode_base64 encode_base64);
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(time sleep);

sub new {
	my ($class, %o) = @_;
	my $dir = $o{dir} // die 'dir';
	my $listen = IO::Socket::INET->new(Listen => 512, LocalAddr => '127.0.0.1', LocalPort => 0,
		Proto => 'tcp', ReuseAddr => 1) or die "downstream: listen: $!";
	my $self = bless {
		dir => $dir,
		log => "$dir/downstream.log",
		port => $listen->sockport,
		plan => { %{ $o{plan} // {} } },
		default => $o{default} // '200',
		latency => $o{latency} // 0,
		secret => $o{secret},
	}, $class;
	open my $fh, '>', $self->{log} or die "downstream: $self->{log}: $!";
	close $fh;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		$SIG{TERM} = sub { POSIX::_exit(0) };
		eval { $self->serve($listen) };
		print STDERR "downstream: $@" if $@;
		POSIX::_exit(0);
	}
	close $listen;
	$self->{pid} = $pid;
	return $self;
}

sub port { $_[0]{port} }
sub url { my ($self, $path) = @_; return "http://127.0.0.1:$self->{port}" . ($path // '/') }

# change a plan while running: target is a path or "key:<key>"
sub plan {
	my ($self, $target, $plan) = @_;
	my $r = HTTP::Tiny->new(timeout => 10)->post($self->url('/_control/plan'),
		{ content => "$target\n$plan" });
	die "downstream: plan: $r->{status}" unless $r->{success};
}

# every recorded request, as hashes, in arrival order
sub requests {
	my ($self) = @_;
	open my $fh, '<', $self->{log} or return ();
	my @r;
	while (my $l = <$fh>) {
		next unless $l =~ /\n\z/;
		push @r, decode_json($l);
	}
	return @r;
}

# Idempotency-Key => number of effects
sub effects {
	my ($self) = @_;
	my %e;
	for my $r ($self->requests) {
		$e{ $r->{key} // '' } += $r->{effect};
	}
	return %e;
}

sub stop {
	my ($self) = @_;
	return unless $self->{pid};
	kill 'TERM', $self->{pid};
	waitpid $self->{pid}, 0;
	delete $self->{pid};
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

# ---------------------------------------------------------------- the server (child)

sub serve {
	my ($self, $listen) = @_;
	$listen->blocking(0);
	my $sel = IO::Select->new($listen);
	my (%conn, @timers);
	my (%stored, %inprogress, %steps);
	my $seq = 0;
	open my $log, '>>', $self->{log} or die $!;
	$log->autoflush(1);

	my $close = sub {
		my ($c) = @_;
		return if $c->{closed};
		$sel->remove($c->{fh});
		delete $conn{ $c->{fd} };
		close $c->{fh};
		$c->{closed} = 1;
	};
	my $send = sub {
		my ($c, $bytes, $then_close) = @_;
		return if $c->{closed};
		$c->{out} .= $bytes;
		$c->{close_after} = 1 if $then_close;
		$c->{busy} = 0;
	};
	my $response = sub {
		my ($status, $hdrs, $body, $keep) = @_;
		my $h = "HTTP/1.1 $status X\r\nContent-Type: application/json\r\nContent-Length: "
			. length($body) . "\r\n" . ($keep ? '' : "Connection: close\r\n");
		$h .= "$_\r\n" for @$hdrs;
		return "$h\r\n$body";
	};

	my $handle = sub {
		my ($c, $method, $path, $hdr, $body) = @_;
		my $keep = !(lc($hdr->{connection} // '') eq 'close');
		if ($path eq '/_control/plan') {
			my ($target, $plan) = split /\n/, $body, 2;
			$self->{plan}{$target} = $plan;
			$send->($c, $response->(200, [], '{}', $keep));
			return;
		}
		my $key = $hdr->{'idempotency-key'};
		my $rec = {
			seq => ++$seq, t => time(), method => $method, path => $path, key => $key,
			attempt => $hdr->{'x-hookinbox-attempt'}, type => $hdr->{'x-hookinbox-event-type'},
			event_id => $hdr->{'x-hookinbox-event-id'}, ctype => $hdr->{'content-type'},
			wid => $hdr->{'webhook-id'}, wts => $hdr->{'webhook-timestamp'},
			wsig => $hdr->{'webhook-signature'}, sha => sha256_hex($body), len => length($body),
			effect => 0, replay => 0,
		};
		if (defined $self->{secret} && defined $rec->{wsig}) {
			my $s = $self->{secret};
			my $k = $s =~ /^whsec_(.*)$/ ? decode_base64($1) : $s;
			my $want = 'v1,' . encode_base64(hmac_sha256("$rec->{wid}.$rec->{wts}.$body", $k), '');
			$rec->{sig_ok} = (grep { $_ eq $want } split / /, $rec->{wsig}) ? 1 : 0;
		}
		my $emit = sub { print $log encode_json($rec) . "\n" };

		# GET /_reconcile/<key> (URL-encoded): 200 with the stored reference
		# when that key had its effect, else 404; a plan "reconcile:<key>" (or
		# "/_reconcile") answers that status instead
		if ($method eq 'GET' && $path =~ m{^/_reconcile/([^?]+)}) {
			(my $k = $1) =~ s/%([0-9A-Fa-f]{2})/chr(hex($1))/ge;
			$rec->{key} = $k;
			$rec->{reconcile} = 1;
			my $forced = $self->{plan}{"reconcile:$k"} // $self->{plan}{'/_reconcile'};
			my ($st, $rid) = defined $forced ? ($forced + 0, undef)
				: $stored{$k} ? (200, $stored{$k}{rid}) : (404, undef);
			$rec->{status} = $st;
			$emit->();
			$send->($c, $response->($st, defined $rid ? ["X-Request-Id: $rid"] : [],
				$st == 200 ? qq({"id":"$rid"}) : '{"error":"no such key"}', $keep));
			return;
		}
		if (defined $key && $inprogress{$key}) {
			$rec->{status} = 409;
			$rec->{inprogress} = 1;
			$emit->();
			$send->($c, $response->(409, [], '{"error":"in progress"}', $keep));
			return;
		}
		if (defined $key && $stored{$key}) {
			$rec->{status} = $stored{$key}{status};
			$rec->{replay} = 1;
			$emit->();
			$send->($c, $response->($stored{$key}{status}, ['Idempotent-Replayed: true',
				"X-Request-Id: $stored{$key}{rid}"], $stored{$key}{body}, $keep));
			return;
		}
		my $plan = (defined $key ? $self->{plan}{"key:$key"} : undef) // $self->{plan}{$path}
			// $self->{default};
		my @items = split /\s*,\s*/, $plan;
		my $sk = ($key // "seq$seq") . "\0$plan";
		my $item = $items[ $steps{$sk}++ ] // $items[-1];
		my $delay = $self->{latency};
		if ($item =~ /^sleep\s+([\d.]+)\s*(.*)$/) {
			$delay += $1;
			$item = $2 eq '' ? '200' : $2;
		}
		if ($item eq 'reset') {
			$rec->{status} = 0;
			$emit->();
			$close->($c);
			return;
		}
		if ($item eq 'garbage') {
			$rec->{status} = -1;
			$emit->();
			$send->($c, "this is not HTTP\r\n\r\n", 1);
			return;
		}
		my ($status, $extra) = $item =~ /^(\d{3})(?:\s+(.*))?$/ or die "bad plan item \"$item\"\n";
		my @h = ("X-Request-Id: req-$seq");
		my $rbody = $status =~ /^2/ ? qq({"ok":true,"seq":$seq}) : qq({"error":"planned $status"});
		$rbody = $1 if defined $extra && $extra =~ s/^body=(.*)$//;
		push @h, $extra if defined $extra && $extra ne '';
		$rec->{status} = $status + 0;
		$rec->{delay} = $delay;
		if ($status =~ /^2/) {
			$rec->{effect} = 1;
			$stored{$key} = { status => $status, body => $rbody, rid => "req-$seq" } if defined $key;
		}
		$emit->();
		my $bytes = $response->($status, \@h, $rbody, $keep);
		if ($delay > 0) {
			$inprogress{$key} = 1 if defined $key;
			$c->{busy} = 1;
			push @timers, [time() + $delay, $c, $bytes, $key];
		} else {
			$send->($c, $bytes);
		}
	};

	while (1) {
		my $now = time();
		my @due = grep { $_->[0] <= $now } @timers;
		@timers = grep { $_->[0] > $now } @timers;
		for my $tm (@due) {
			delete $inprogress{ $tm->[3] } if defined $tm->[3];
			$send->($tm->[1], $tm->[2]);
		}
		my $wsel = IO::Select->new(map { $_->{fh} } grep { length($_->{out} // '') } values %conn);
		my $timeout = 0.2;
		for my $tm (@timers) {
			my $d = $tm->[0] - $now;
			$timeout = $d if $d < $timeout;
		}
		$timeout = 0 if $timeout < 0;
		my ($r, $w) = IO::Select->select($sel, $wsel, undef, $timeout);
		for my $fh (@{ $w // [] }) {
			my $c = $conn{ fileno($fh) } or next;
			my $n = syswrite($fh, $c->{out});
			if (!defined $n) {
				$close->($c) unless $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
				next;
			}
			substr($c->{out}, 0, $n, '');
			$close->($c) if $c->{out} eq '' && $c->{close_after};
		}
		for my $fh (@{ $r // [] }) {
			if ($fh == $listen) {
				while (my $s = $listen->accept) {
					$s->blocking(0);
					$sel->add($s);
					$conn{ fileno($s) } = { fh => $s, fd => fileno($s), in => '', out => '' };
				}
				next;
			}
			# closed earlier in this round (a planned reset): no fileno any more
			my $fd = fileno($fh) // next;
			my $c = $conn{$fd} or next;
			my $n = sysread($fh, my $buf, 65536);
			if (!defined $n) {
				$close->($c) unless $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
				next;
			}
			if ($n == 0) {
				$close->($c);
				next;
			}
			$c->{in} .= $buf;
		}
		# parse complete requests on idle connections
		for my $c (values %conn) {
			next if $c->{busy} || $c->{closed} || length($c->{out});
			my $i = index($c->{in}, "\r\n\r\n");
			next if $i < 0;
			my $head = substr($c->{in}, 0, $i);
			my ($line, @lines) = split /\r\n/, $head;
			my %hdr;
			for (@lines) {
				my ($k, $v) = /^([^:]+):\s*(.*)$/ or next;
				$hdr{ lc $k } = $v;
			}
			my $len = $hdr{'content-length'} // 0;
			next if length($c->{in}) < $i + 4 + $len;
			my $body = substr($c->{in}, $i + 4, $len);
			substr($c->{in}, 0, $i + 4 + $len, '');
			my ($method, $path) = split / /, $line // '';
			$c->{busy} = 1;
			$handle->($c, $method // '', $path // '', \%hdr, $body);
		}
	}
}

1;
