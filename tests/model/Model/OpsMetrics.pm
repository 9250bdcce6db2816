# SPDX-License-Identifier: ISC
# Model::OpsMetrics - what an operator watching the worker's metrics file
# sees.  One row in Model::Ops::table(): metrics_scrape.
package Model::OpsMetrics;

use strict;
use warnings;

# What is held, parked or blocked, from the database: a route an operator
# paused, a route held (a Retry-After, a breaker's cool-down) for 5 s more
# at least, a breaker open or probing, parked actions by route, deliveries
# held for review by endpoint.
sub blocked_now {
	my ($m) = @_;
	my %s;
	for my $r (Model::Invariants::rows($m, q{select route, paused::int,
		coalesce(hold_until > now() + interval '5 seconds', false)::int, (breaker <> 'closed')::int
		from hookinbox.route_state})) {
		my ($route, $paused, $held, $open) = @$r;
		@s{ "paused $route", "held $route", "breaker $route" } = ($paused, $held, $open);
	}
	$s{"parked $_->[0]"} = $_->[1] for Model::Invariants::rows($m, q{select route, count(*)
		from hookinbox.action where state = 'parked' group by route});
	$s{"review $_->[0]"} = $_->[1] for Model::Invariants::rows($m, q{select endpoint, count(*)
		from hookinbox.inbox where state = 'review' group by endpoint});
	return \%s;
}

# the samples of a text-format file, "name label=value" => value (the
# labels this needs: route, endpoint, older_than); undef without the
# database's figures (the worker could not read them)
sub read_prom {
	my ($file) = @_;
	my (%v, $figures);
	open my $fh, '<', $file or return undef;
	while (my $line = <$fh>) {
		$figures = 1 if $line =~ /^# TYPE hookinbox_parked_actions /;
		next unless $line =~ /^(hookinbox_\w+)\{([^}]*)\} (\S+)$/;
		my ($name, $labels, $value) = ($1, $2, $3);
		my %l = $labels =~ /(\w+)="([^"]*)"/g;
		next if defined $l{older_than} && $l{older_than} ne '0s';
		my $who = $l{route} // $l{endpoint} // next;
		$v{"$name $who"} = $value;
	}
	return $figures ? \%v : undef;
}

# A worker run (w8, --once) writes its metrics file; each thing the
# database showed held, parked or blocked both before and after the run
# must be in it (invariant 16, judged here: the drain at the end clears
# them all).  Only the operator's operations clear a pause, a parked
# action or a held delivery, and none runs meanwhile; background workers
# may park more, so a count is between the two readings.  A pause is
# compared both ways (a route not paused must not read paused).
sub metrics_scrape {
	my ($m) = @_;
	my $file = $m->dir . '/model-metrics.prom';
	unlink $file;
	my $before = blocked_now($m);
	my @seen = grep { $before->{$_} } sort keys %$before;
	return 'nothing held, parked or blocked' unless @seen;
	my $rc = $m->worker_run('w8', {}, '--once', "--metrics-file=$file");
	my $after = blocked_now($m);
	my $prom = read_prom($file);
	# a run that lost the database (a restart just before: exit 75) writes
	# its own counters without the database's figures, by design
	# (hookinbox_worker_last_run_ok 0 says so): nothing to judge
	return "skipped: worker exit $rc, no database figures in the metrics" if $rc != 0 || !$prom;
	my %name = (paused => 'hookinbox_route_paused', held => 'hookinbox_route_hold_remaining_seconds',
		breaker => 'hookinbox_route_breaker_open', parked => 'hookinbox_parked_actions',
		review => 'hookinbox_inbox_held_events');
	my @bad;
	for my $k (sort keys %$before) {
		my ($what, $who) = split / /, $k, 2;
		my ($b, $a) = ($before->{$k}, $after->{$k} // 0);
		my $v = $prom->{"$name{$what} $who"};
		my $shown = defined $v ? $v + 0 : 0;
		if ($what eq 'paused') {
			push @bad, "route $who is " . ($b ? '' : 'not ') . "paused, the metrics say $shown"
				if $b == $a && ($shown ? 1 : 0) != $b;
		} elsif ($what eq 'held' || $what eq 'breaker') {
			push @bad, "route $who is $what (" . ($what eq 'held' ? 'hold' : 'breaker open')
				. '), not in the metrics' if $b && $a && !$shown;
		} elsif ($b && ($shown < $b || $shown > $a)) {
			push @bad, "$what $who: the database had $b before the run and $a after, the metrics say $shown";
		}
	}
	push @{ $m->{metrics_bad} }, map { "metrics_scrape: $_" } @bad;
	return scalar(@seen) . ' things held, parked or blocked (' . join(', ', @seen) . '): '
		. (@bad ? 'NOT ALL in the metrics' : 'all in the metrics');
}

1;
