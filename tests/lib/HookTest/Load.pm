# SPDX-License-Identifier: ISC
# HookTest::Load - signed load like a provider's, and the reconciliation
# the high-availability tests (tests/t/8x-*.t) share.
#
#   my $l = HookTest::Load->new(dir => $t->dir, urls => [$t->url('st')], secret => $s, tag => 'a');
#   $l->start(senders => 4);          # forks; each sender runs until $l->stop
#   ... kill, promote, switch ...
#   $l->stop;                         # senders finish the delivery in hand
#   $l->reconcile(sql => sub { $t->sql(@_) }, what => 'failover');
#
# Each sender posts new Stripe-signed events, each to urls[i % n]; every
# third event is redelivered once, to the next url (so with one url per
# host the duplicates cross hosts).  Like a provider, a delivery that got
# anything but a 2xx is retried after a short pause until it is accepted.
# One line per attempt: "event url-index status id duplicate".
package HookTest::Load;

use strict;
use warnings;
use HookTest qw(stripe_sig);
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep time);

sub new {
	my ($class, %o) = @_;
	return bless { pause => 0.2, type => 'invoice.paid', %o }, $class;
}

# created (the version on ordered routes) is unique per object: sender k's
# i-th event; equal versions would be held for review, not ordered
sub body_for {
	my ($self, $ev, $i, $k) = @_;
	my $b = { id => $ev, object => 'event', type => $self->{type},
		created => 1700000000 + $i * 1000 + ($k // 0), data => { object => { id => "obj_$ev" } } };
	if (my $objects = $self->{objects}) {
		# several events per object, versions rising with i (ordered routes)
		$b->{data}{object}{id} = "obj_$self->{tag}_" . ($i % $objects);
	}
	return encode_json($b);
}

sub post_until_accepted {
	my ($self, $http, $out, $ev, $body, $u) = @_;
	my $urls = $self->{urls};
	my $give_up = time() + 60;
	while (1) {
		my $url = $urls->[$u % @$urls];
		my $r = $http->request('POST', $url, { content => $body,
			headers => { 'Stripe-Signature' => stripe_sig($self->{secret}, $body),
				'Content-Type' => 'application/json' } });
		my $j = eval { decode_json($r->{content}) } // {};
		my $dup = ref $j->{duplicate} ? ($j->{duplicate} ? 1 : 0) : '-';
		printf $out "%s %d %s %s %s %.3f\n", $ev, $u % @$urls, $r->{status}, $j->{id} // '-', $dup, time();
		return if $r->{status} >= 200 && $r->{status} <= 299;
		if (time() > $give_up) { print $out "$ev - GAVEUP - - 0\n"; return }
		sleep $self->{pause};
	}
}

sub sender {
	my ($self, $k) = @_;
	my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
	open my $out, '>', "$self->{dir}/load.$self->{tag}.$k" or POSIX::_exit(2);
	$out->autoflush(1);
	my $stop = "$self->{dir}/load.$self->{tag}.stop";
	my $max = $self->{max} // 1e9;
	for (my $i = 1; $i <= $max && !-e $stop; $i++) {
		my $ev = "evt_$self->{tag}_${k}_$i";
		my $body = $self->body_for($ev, $i, $k);
		$self->post_until_accepted($http, $out, $ev, $body, $i + $k);
		# a redelivery of the same bytes to the next host
		$self->post_until_accepted($http, $out, $ev, $body, $i + $k + 1) if $i % 3 == 0;
		sleep $self->{think} if $self->{think};
	}
	close $out;
	POSIX::_exit(0);
}

sub start {
	my ($self, %o) = @_;
	$self->{senders} = $o{senders} // 4;
	unlink "$self->{dir}/load.$self->{tag}.stop";
	for my $k (1 .. $self->{senders}) {
		my $pid = fork // die "fork: $!";
		$self->sender($k) if $pid == 0;
		push @{ $self->{pids} }, $pid;
	}
	$self->{started} = time();
	return $self;
}

sub stop {
	my ($self) = @_;
	open my $fh, '>', "$self->{dir}/load.$self->{tag}.stop" or die $!;
	close $fh;
	waitpid $_, 0 for @{ $self->{pids} // [] };
	$self->{pids} = [];
}

# wait until every sender has sent its max deliveries (new with max)
sub finish {
	my ($self) = @_;
	waitpid $_, 0 for @{ $self->{pids} // [] };
	$self->{pids} = [];
}

# the attempts so far: [event, url index, status, id, duplicate, time]
sub attempts {
	my ($self) = @_;
	my @a;
	for my $k (1 .. $self->{senders}) {
		open my $fh, '<', "$self->{dir}/load.$self->{tag}.$k" or next;
		push @a, map { [split] } <$fh>;
	}
	return @a;
}

# 2xx answers so far (to wait for traffic before breaking something)
sub accepted {
	my ($self) = @_;
	return scalar grep { $_->[2] =~ /^2/ } $self->attempts;
}

# Every 2xx is in the inbox exactly once under the id it carried; every
# non-2xx was a 503 and was retried until accepted; a redelivery after a
# 2xx is answered as a duplicate with the first id.  Returns the counts.
sub reconcile {
	my ($self, %o) = @_;
	my $sql = $o{sql};
	my $what = $o{what} // $self->{tag};
	my (%final, %ids, %st, $gaveup, %first_ok, $bad_dup);
	for my $a ($self->attempts) {
		my ($ev, $u, $status, $id, $dup) = @$a;
		if ($status eq 'GAVEUP') { $gaveup++; next }
		$st{ $status =~ /^2/ ? '2xx' : $status }++;
		$final{$ev} //= undef;
		next unless $status =~ /^2/;
		# a delivery answered 2xx before: this one must say duplicate
		$bad_dup++ if $first_ok{$ev}++ && $dup ne '1';
		$final{$ev} = $id;
		$ids{$ev}{$id}++;
	}
	# the longest time without a 2xx while senders were waiting for one
	my @ok = sort { $a <=> $b } map { $_->[5] } grep { $_->[2] =~ /^2/ } $self->attempts;
	my $gap = 0;
	for my $i (1 .. $#ok) { $gap = $ok[$i] - $ok[$i - 1] if $ok[$i] - $ok[$i - 1] > $gap }
	my $like = "evt\\_$self->{tag}\\_%";
	my %db = map { split /\|/ } split /\n/, $sql->("select event_id, id from hookinbox.inbox where event_id like '$like'");
	my $sent = keys %final;
	my @non503 = grep { !/^(2xx|503)$/ } keys %st;
	diag(sprintf('%s: %d deliveries in %d attempts: %s; rows %d; longest time without a 2xx %.2f s', $what, $sent,
		(sum(values %st) // 0) + ($gaveup // 0), join(', ', map { "$_ $st{$_}" } sort keys %st), scalar keys %db,
		$gap));
	cmp_ok($sent, '>', $self->{senders}, "$what: load was sustained");
	is(scalar @non503, 0, "$what: every answer is 2xx or 503") or diag(join ' ', map { "$_=$st{$_}" } @non503);
	is($gaveup // 0, 0, "$what: no sender gave up");
	my @unaccepted = grep { !defined $final{$_} } keys %final;
	is(scalar @unaccepted, 0, "$what: everything answered 5xx was accepted on retry") or diag("@unaccepted[0..4]");
	is(scalar(grep { keys %{ $ids{$_} } > 1 } keys %ids), 0, "$what: all 2xx for one delivery carried one id");
	is($bad_dup // 0, 0, "$what: a redelivery after a 2xx was answered duplicate");
	my @missing = grep { !defined $db{$_} } grep { defined $final{$_} } keys %final;
	is(scalar @missing, 0, "$what: every 2xx is in the inbox") or diag("missing: @missing[0..4]");
	is(scalar(grep { defined $db{$_} && defined $final{$_} && $db{$_} ne $final{$_} } keys %final), 0,
		"$what: stored under the id the sender was told");
	is(scalar(keys %db), $sent, "$what: one row per delivery, nothing else");
	is($sql->("select count(*) from (select provider, account, environment, event_id from hookinbox.inbox "
		. "where event_id like '$like' group by 1, 2, 3, 4 having count(*) > 1) d"), 0, "$what: no delivery key twice");
	return { sent => $sent, status => \%st, ids => \%final, gap => $gap };
}

sub sum { my $s; $s += $_ for @_; return $s }

# The worker's invariants against the downstream and the SQL handler:
# every action done, one effect per idempotency key, one key per action.
# o: sql, downstream, tag, routes (http route names), sql_route and
# sql_table (the SQL handler's route, default apply, and its table of
# applied event ids; no table: no such route), what
sub check_worker {
	my (%o) = @_;
	my ($sql, $d, $what) = @o{qw(sql downstream what)};
	my $like = "evt\\_$o{tag}\\_%";
	my $n = $sql->("select count(*) from hookinbox.inbox where event_id like '$like'");
	my @all = (@{ $o{routes} }, $o{sql_table} ? ($o{sql_route} // 'apply') : ());
	my $in = join(', ', map { "'$_'" } @all);
	is($sql->("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where i.event_id like '$like' and a.route in ($in) and a.state = 'done'"), $n * @all,
		"$what: every action done");
	my (%calls, %eff);
	my %paths = map { ("/$_" => 1) } @{ $o{routes} };
	for my $r (grep { ($_->{event_id} // '') =~ /^evt_$o{tag}_/ && $paths{ $_->{path} } } $d->requests) {
		$calls{ $r->{key} }++;
		$eff{ $r->{key} } += $r->{effect} ? 1 : 0;
	}
	is(scalar(keys %eff), $n * @{ $o{routes} }, "$what: one idempotency key per action reached the downstream");
	is(scalar(grep { $_ != 1 } values %eff), 0, "$what: each key had exactly one effect");
	my $again = grep { $_ > 1 } values %calls;
	# A call whose outcome could not be recorded (the database went away
	# under it) is made again with the same key: the documented retry.
	my $retried = $sql->("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where i.event_id like '$like' and a.attempts > 1");
	cmp_ok($again, '<=', $retried, "$what: a key called twice only as a recorded retry ($again keys)");
	if ($o{sql_table}) {
		is($sql->("select count(*) from $o{sql_table} where event_id like '$like'"), $n,
			"$what: the SQL handler applied each event once");
	}
	return { calls_again => $again };
}

# An ordered route (order = object, load made with objects => N): every
# action done or stale, the downstream never got an older version of an
# object after a newer one, and each object's newest version was applied.
# o: sql, downstream, tag, route (its url path is /<route>), what
sub check_order {
	my (%o) = @_;
	my ($sql, $d, $what, $route) = @o{qw(sql downstream what route)};
	my $like = "evt\\_$o{tag}\\_%";
	my $n = $sql->("select count(*) from hookinbox.inbox where event_id like '$like'");
	is($sql->("select count(*) from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where i.event_id like '$like' and a.route = '$route' and a.state in ('done', 'stale')"), $n,
		"$what: every ordered action done or stale");
	my %version = map { split /\|/ } split /\n/,
		$sql->("select event_id, event_version from hookinbox.inbox where event_id like '$like'");
	my %object = map { split /\|/ } split /\n/,
		$sql->("select event_id, object_id from hookinbox.inbox where event_id like '$like'");
	my (%last, $older, %newest);
	for my $r (grep { $_->{path} eq "/$route" && $_->{effect} && ($_->{event_id} // '') =~ /^evt_$o{tag}_/ }
		$d->requests) {
		my ($obj, $v) = ($object{ $r->{event_id} }, $version{ $r->{event_id} });
		$older++ if defined $last{$obj} && $v < $last{$obj};
		$last{$obj} = $v if !defined $last{$obj} || $v > $last{$obj};
	}
	is($older // 0, 0, "$what: no older version applied after a newer one");
	for my $ev (keys %version) {
		my $obj = $object{$ev};
		$newest{$obj} = $version{$ev} if !defined $newest{$obj} || $version{$ev} > $newest{$obj};
	}
	my $applied = { map { split /\|/ } split /\n/, $sql->("select object_id, applied_version "
		. "from hookinbox.object_state where route = '$route' and object_id like 'obj\\_$o{tag}\\_%'") };
	is(scalar(grep { ($applied->{$_} // -1) != $newest{$_} } keys %newest), 0,
		"$what: each object's newest version was applied (" . scalar(keys %newest) . ' objects)');
}

1;
