# SPDX-License-Identifier: ISC
# Model::OpsRoutes - route operations for the schedule (rows in Model::Ops's
# table): downstreams that deserve no breaker (failing the first call of
# each key, flaky) or do (dead for a while), an operator clearing a route's
# hold and breaker, SIGHUP of a running --loop worker (busy or not), and a
# rolling route change (two workers with different routes).
# The invariants (every event delivered once per route, no second effect)
# hold through each of them.
package Model::OpsRoutes;

use strict;
use warnings;
use HookTest;
use POSIX ();
use Time::HiRes ();

# fail-first or flaky: the breaker must not starve the route
sub downstream_flaky {
	my ($m) = @_;
	my $path = $m->pick(qw(/ord /ev));
	my $plan = $m->pick('500,200', '500,500,200', '503,200,503,200', 'reset,200', '500,200,200');
	$m->ds->plan($path, $plan);
	return "$path: $plan (flaky)" . Model::Ops::for_path($m, $path);
}

# dead for a while: the breaker may open; a later plan brings it back
sub downstream_dead {
	my ($m) = @_;
	my $path = $m->pick(qw(/ord /ev));
	my $plan = $m->pick('503,503,503,503,503,503,200', 'reset,reset,reset,reset,200');
	$m->ds->plan($path, $plan);
	my $sent = Model::Ops::for_path($m, $path);
	return "$path: $plan (dead for a while)" . $sent . last_attempt($m, $path, $sent);
}

# The route operations drawn after each operation of the schedule from the
# extra generator (Model::extra_op), so that every seed keeps its
# schedule: weights as in Model::Ops::table
sub extra_table {
	return ({ name => 'downstream_poison', weight => 2, extra => 1, run => \&downstream_poison });
}

# One action whose calls keep failing (its own key's plan: 503 eight times,
# then 200) while a --loop worker (its own, stopped after) retries it for
# more than 10 s (backoff 1 to 2 s: 8 calls take 15-20 s), with no new
# event for the route meanwhile: it is one action (with any earlier ord
# retries still due, fewer than breaker_failures (5) as a rule), so the
# breaker stays closed however many of its calls failed (invariant 13
# judges the audit of route_state by the keys that failed).  The key is the route's for the event
# (hookinbox.action_key), planned before the event is delivered.  Its
# object, ids and versions are its own and it stays out of {sent}: what
# the schedule's operations meet stays as it was.  Draws nothing.
# Reached: 5 failed calls over 10 s.
sub downstream_poison {
	my ($m) = @_;
	return 'route ord paused' if $m->{paused}{ord};
	return 'skipped: 3 running' if $m->reap >= 3;
	my $n = ++$m->{npoison};
	my $d = Model::Ops::stripe_event_own($m, "evt_poison_$n", 'obj_poison', 1_700_000_000 + $n);
	my $key = Model::Ops::st_key($m, 'ord', $d);
	$m->ds->plan("key:$key", join(',', ('503') x 8, '200'));
	my $w = $m->worker_start('w8', {}, '--loop', '--concurrency=4');
	$w->{loop} = 1;
	push @{ $m->{bg} }, $w;
	my $r = Model::OpsBatch::deliver_own($m, { %$d, fe => $m->{fe}[ $n % 2 ] });
	my ($failed, $first, $last, $ok) = (0);
	my $until = time + 40;
	while (time < $until && !$ok) {
		select(undef, undef, undef, 0.25);
		($failed, $first, $last) = (0);
		for my $c (grep { ($_->{key} // '') eq $key } $m->ds->requests) {
			if (($c->{status} // 0) == 200) { $ok = 1; next }
			$failed++;
			$first //= $c->{t};
			$last = $c->{t};
		}
	}
	kill 'TERM', $w->{pid};
	$w->{loop} = 0;
	my $what = "ord $d->{id} -> $r->{status}: $failed calls failed";
	$what .= sprintf(' over %.0f s', $last - $first) if $failed;
	return $what . ($ok ? ', then answered' : ', not answered in 40 s');
}

# The attempts of a route run out on a dead downstream (max_attempts 60
# never does within a schedule): the action for_path sent, waiting for its
# retry, gets one attempt more, due now, and a worker run makes it.  Parked
# then, it says "attempts exhausted" (the worker's outcome), never "retry
# window exhausted" with hours of its window left (invariant 12, judged
# at once).  It gets the route's 60 back for the drain.  Draws nothing.
sub last_attempt {
	my ($m, $path, $sent) = @_;
	my $route = $path eq '/ord' ? 'ord' : 'ev';
	my $ep = $path eq '/ord' ? 'st' : 'ac';
	my ($id) = $sent =~ / (\S+) -> /;
	return '' unless defined $id;
	my $aid = $m->sql("select a.id from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where a.route = '$route' and i.endpoint = '$ep' and i.event_id = '$id' and a.state = 'pending' "
		. "and a.attempts > 0 and coalesce(a.lease_until < now(), true)");
	return ', no retry waiting' unless $aid;
	$m->sql("update hookinbox.action set max_attempts = attempts + 1, due_at = now() where id = $aid");
	my $rc = $m->worker_run('w8', {}, '--once', '--concurrency=4');
	my ($st, $att, $err, $age) = split /\|/, $m->sql("select state, attempts, coalesce(last_error, ''), "
		. "extract(epoch from now() - coalesce(replayed_at, created_at)) from hookinbox.action where id = $aid");
	$m->sql("update hookinbox.action set max_attempts = 60 where id = $aid");
	push @{ $m->{script_bad} }, "action $aid ($route) was parked on its last attempt ($att) as "
		. "\"$err\" with " . sprintf('%.0f s of its retry window left', 72000 - $age)
		if $st eq 'parked' && Model::Invariants::park_label($err) eq 'retry window'
		&& $age + 21600 + 60 < 72000;
	return ", last attempt: action $aid $st ($err), worker exit $rc";
}

# route.sql do=clear on a route a worker registered: holds end, breaker closed
sub route_clear {
	my ($m) = @_;
	my $route = $m->pick(sort keys %{ $m->{routes} });
	return "route $route not registered yet"
		if $m->t->sql("select hookinbox.route_known('$route')") ne 't';
	my ($rc, $out) = $m->t->pg->psql_file(HookTest::top() . '/sql/route.sql', role => 'hookinbox_admin',
		vars => { route => $route, do => 'clear', go => 1 });
	die "route.sql do=clear $route: exit $rc: $out" if $rc != 0;
	my $st = $m->t->sql("select coalesce(hold_until::text, '') || breaker from hookinbox.route_state "
		. "where route = '$route'");
	die "route $route after do=clear: '$st'" if $st ne '' && $st ne 'closed';
	return "route $route cleared";
}

# SIGHUP to a running --loop worker: it reloads between claims, calls in
# flight finishing on the configuration they started with
sub loop_sighup {
	my ($m) = @_;
	my $x = $m->rint(1 << 30);
	my @l = grep { $_->{loop} } @{ $m->{bg} } or return 'no loop running';
	my $w = $l[ $x % @l ];
	# not in its first milliseconds, before it set its handlers (a loop
	# started by the operation before died of SIGHUP: random seed 181142)
	my $young = $w->{t0} + 0.5 - Time::HiRes::time();
	Time::HiRes::sleep($young) if $young > 0;
	kill 'HUP', $w->{pid};
	return "HUP to loop $w->{pid}";
}

# A rolling route change: configuration w8 gains route ev2 (GitHub and
# Shopify events, downstream /ev2), w10 keeps the old routes; from then on
# the schedule runs both (worker_once and worker_background pick either,
# the drain runs w8).  Each time: a new event is fanned out by w10 alone
# (it has no ev2), then both run at once.  Invariant 3 judges that every
# event fanned out after ev2 was first registered has exactly one ev2
# action, and that none has two.
sub routes_rolling {
	my ($m) = @_;
	my $x = $m->rint(1 << 30);
	if (!$m->{routes}{ev2}) {
		my $p = $m->dir . '/w8.conf';
		my $c = HookTest::slurp($p);
		$c .= "\n[route ev2]\nendpoint = gh sh\nurl = " . $m->ds->url('/ev2')
			. "\ntimeout = $Model::ROUTE_TIMEOUT\nmax_attempts = 60\n";
		open my $fh, '>', "$p.new" or die "$p.new: $!";
		print $fh $c;
		close $fh or die "$p.new: $!";
		rename "$p.new", $p or die "$p: $!";
		$m->{routes}{ev2} = [qw(gh sh)];
		$m->worker_run('w8', {}, '--once');	# registers ev2
		# the clock's offset at the registration (invariant 3 moves it back
		# by what clock_forward adds later, as it moves dispatched_at)
		$m->{ev2_offset} = $m->{offset};
		# past invariant 3's slack: what w10 fans out from now on is owed to ev2
		select(undef, undef, undef, 2.1);
	}
	$m->deliver(Model::Ops::new_delivery($m, $x % 2 ? 'gh' : 'sh'));
	$m->worker_run('w10', {}, '--once');
	my @w = map { $m->worker_start($_, {}, '--once', '--concurrency=4') } qw(w10 w8);
	my $deadline = time + 120;
	for my $w (@w) {
		while (waitpid($w->{pid}, POSIX::WNOHANG()) != $w->{pid}) {
			if (time > $deadline) {
				kill 'KILL', $w->{pid};
				waitpid $w->{pid}, 0;
				last;
			}
			select(undef, undef, undef, 0.02);
		}
	}
	return 'w8 (with ev2) and w10 (without) side by side';
}

# key = object-type (route biz): two provider events describing one
# business event (one object, one event type, two event ids and versions)
# cause one action and one effect; the second collapses into the first's
# action (hookinbox.action_collapse), or both into an earlier one of that
# pair.  Invariant 15 judges every pair at the end; the description says
# whether this run saw one action for both.
sub business_twins {
	my ($m) = @_;
	my $obj = $m->pick(map { "obj_$_" } 1 .. 5);
	my $type = $m->pick(qw(invoice.paid invoice.updated customer.updated));
	my @d = map { Model::Ops::stripe_event($m, object => $obj, type => $type) } 1, 2;
	my @st = map { $m->deliver({ %$_, fe => $m->{fe}[ $m->{n} % 2 ] })->{status} } @d;
	$m->worker_run('w8', {}, '--once', '--concurrency=4');
	my $in = join ',', map { "'$_->{id}'" } @d;
	# each event's biz outcome: its own action, or the one it collapsed into
	my @a = split /\n/, $m->sql("select coalesce(a.id, c.action_id) from hookinbox.inbox i "
		. "left join hookinbox.action a on a.inbox_id = i.id and a.route = 'biz' "
		. "left join hookinbox.action_collapse c on c.inbox_id = i.id and c.route = 'biz' "
		. "where i.endpoint = 'st' and i.review_of is null and i.event_id in ($in) order by i.id");
	my %u = map { $_ => 1 } grep { length } @a;
	my $what = "$obj $type: $d[0]{id} $d[1]{id} -> @st, biz actions " . join(' ', sort keys %u);
	return $what . (@a == 2 && keys %u == 1 ? ', one action for both' : '');
}

# order = newest or sequence with key = object-type must be refused at
# load (docs/configuration.md: the later versions would collapse into the
# first and never be sent): hookinbox-worker --check on w8's configuration
# with such a route must exit 78 naming it, for each spelling of the
# order (newest, sequence, object).  Invariant 15 reports one accepted.
sub route_key_refused {
	my ($m) = @_;
	my @what;
	for my $order (qw(newest sequence object)) {
		my $p = $m->dir . '/refused.conf';
		my $c = HookTest::slurp($m->dir . '/w8.conf') . "\n[route refused]\nendpoint = st\nurl = "
			. $m->ds->url('/refused') . "\norder = $order\nkey = object-type\ntimeout = $Model::ROUTE_TIMEOUT\n";
		open my $fh, '>', $p or die "$p: $!";
		print $fh $c;
		close $fh or die "$p: $!";
		my $out = `@{[ HookTest::top() ]}/obj/test/hookinbox-worker --check -c $p 2>&1`;
		my $rc = $? >> 8;
		unlink $p;
		if ($rc != 78 || $out !~ /route "refused".*key = object-type/) {
			push @{ $m->{key_bad} }, "hookinbox-worker --check with order = $order and key = object-type: "
				. "exit $rc, " . ((split /\n/, $out)[0] // '');
			push @what, "$order accepted (exit $rc)";
		}
	}
	# a route timeout as long as the lease: a call could outlive its lease
	# (docs/configuration.md: a route timeout is shorter than [worker] lease)
	my $p = $m->dir . '/refused.conf';
	open my $fh, '>', $p or die "$p: $!";
	print $fh HookTest::slurp($m->dir . '/w8.conf') . "\n[route refused]\nendpoint = st\nurl = "
		. $m->ds->url('/refused') . "\ntimeout = 8\n";
	close $fh or die "$p: $!";
	my $out = `@{[ HookTest::top() ]}/obj/test/hookinbox-worker --check -c $p 2>&1`;
	my $rc = $? >> 8;
	unlink $p;
	if ($rc != 78 || $out !~ /route "refused".*timeout/) {
		push @{ $m->{lease_bad} }, "hookinbox-worker --check with a route timeout equal to the lease (8 s): "
			. "exit $rc, " . ((split /\n/, $out)[0] // '');
		push @what, "timeout = lease accepted (exit $rc)";
	}
	return 'order = newest, sequence, object with key = object-type, timeout = lease: '
		. (@what ? join(', ', @what) : 'refused (exit 78)');
}

1;
