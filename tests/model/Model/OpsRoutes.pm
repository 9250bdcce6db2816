# SPDX-License-Identifier: ISC
# Model::OpsRoutes - route operations for the schedule (rows in Model::Ops's
# table): downstreams that deserve no breaker (failing the first call of
# each key, flaky) or do (dead for a while), an operator clearing a route's
# hold and breaker, and SIGHUP of a running --loop worker (busy or not).
# The invariants (every event delivered once per route, no second effect)
# hold through each of them.
package Model::OpsRoutes;

use strict;
use warnings;
use HookTest;
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
	return "$path: $plan (dead for a while)" . Model::Ops::for_path($m, $path);
}

# route.sql do=clear on a route a worker registered: holds end, breaker closed
sub route_clear {
	my ($m) = @_;
	my $route = $m->pick(sort keys %{ $m->{routes} });
	return "route $route not registered yet"
		if $m->t->sql("select hookinbox.route_known('$route')") ne 't';
	my ($rc, $out) = $m->t->pg->psql_file(HookTest::top() . '/sql/route.sql', role => 'hookinbox_admin',
		vars => { route => $route, do => 'clear' });
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

1;
