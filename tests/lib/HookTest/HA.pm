# SPDX-License-Identifier: ISC
# HookTest::HA - configuration and worker runs for the tests where the
# programs do not talk to the HookTest cluster directly (tests/t/8x-*.t):
# through PgBouncer, to a multi-host conninfo, from other network namespaces.
#
#   my ($t, $d) = HookTest::HA::setup(secret => $secret);
#   HookTest::HA::configure($t, intake => $conninfo, worker => $conninfo);
#   my $log = HookTest::HA::workers($t, 3);     # three --once runs at once
package HookTest::HA;

use strict;
use warnings;
use File::Temp ();
use HookTest;
use HookTest::Downstream;
use HookTest::Load;
use HookTest::Lighttpd;
use POSIX ();
use Time::HiRes qw(sleep time);

# an SQL handler (route handler = sql:app.apply) recording each event it
# applies in app.applied: a second application would fail on the key
our $APPLY_SQL = q{
	create schema app;
	create table app.applied (event_id text primary key, at timestamptz not null default now());
	create function app.apply(e jsonb) returns void language sql as
		$$ insert into app.applied (event_id) values (e->>'event_id') $$;
	grant usage on schema app to hookinbox_worker;
	grant insert on app.applied to hookinbox_worker;
	grant execute on function app.apply(jsonb) to hookinbox_worker;
};

# The cluster each of these tests starts from: endpoint st (Stripe, signed
# with secret), route down to a real downstream server and route apply
# (sql:app.apply, installed unless apply => 0), a worker with short leases
# and backoff, no lighttpd yet (the test puts the responder behind its
# pooler, hosts or namespaces).  Options: url, a sub that gets the
# downstream server and returns its base URL as the programs reach it
# (default: the server's own address); routes, more routes, where path
# names a path on the downstream; intake and pg, as HookTest->new takes
# them.  Returns ($t, $d).
sub setup {
	my (%o) = @_;
	my $d = HookTest::Downstream->new(dir => File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1));
	my $url = $o{url} ? $o{url}->($d) : $d->url('');
	my %more = map {
		my %r = %{ $o{routes}{$_} };
		$r{url} = $url . delete $r{path} if exists $r{path};
		($_ => \%r)
	} keys %{ $o{routes} // {} };
	my $t = HookTest->new(
		endpoints => { st => { provider => 'stripe', secrets => [$o{secret}] } },
		routes => {
			down => { endpoint => 'st', url => "$url/down", timeout => 3 },
			apply => { endpoint => 'st', handler => 'sql:app.apply', timeout => 3 },
			%more,
		},
		($o{intake} ? (intake => $o{intake}) : ()),
		worker => { lease => 5, backoff_base => 1, backoff_cap => 2, batch => 20, concurrency => 8 },
		($o{pg} ? (pg => $o{pg}) : ()),
		no_lighttpd => 1,
	);
	$t->sql($APPLY_SQL) if $o{apply} // 1;
	return ($t, $d);
}

# Built with a sanitizer (make SANITIZE=...)?  These tests exercise
# PostgreSQL, PgBouncer, Patroni and the network, not new C paths: the
# sanitizer runs of the other tests cover the code they run.
sub sanitized {
	return 1 if $ENV{SANITIZE};
	my $bin = HookTest::slurp(HookTest::top() . '/obj/test/hookinbox.fcgi');
	return $bin =~ /__(?:asan|tsan|ubsan)_/ ? 1 : 0;
}

sub worker_config { return $_[0]->dir . '/worker.conf' }

# Write the responder's configuration ($t->config) with the intake
# conninfo and a copy for the worker ($t->dir/worker.conf) with its own.
sub configure {
	my ($t, %ci) = @_;
	$t->write_config;
	my $c = HookTest::slurp($t->config);
	for my $which (['intake', $t->config], ['worker', worker_config($t)]) {
		my ($role, $path) = @$which;
		my $text = $c =~ s/^conninfo = .*$/conninfo = $ci{$role}/mr;
		open my $fh, '>', "$path.tmp" or die $!;
		print $fh $text;
		close $fh;
		rename "$path.tmp", $path or die $!;
	}
}

# (Re)start the responders behind lighttpd, procs processes, with $t's
# configuration as configure() last wrote it
sub start_responders {
	my ($t, $procs) = @_;
	$t->{httpd}->stop if $t->{httpd};
	$t->{httpd} = HookTest::Lighttpd->new(dir => $t->dir, fcgi => HookTest::top() . '/obj/test/hookinbox.fcgi',
		config => $t->config, procs => $procs)->start;
	return $t->{httpd};
}

# wait until the load has had n more deliveries accepted (at most seconds)
sub wait_accepted {
	my ($load, $n, $seconds) = @_;
	my $until = time() + $seconds;
	my $base = $load->accepted;
	sleep 0.1 while $load->accepted < $base + $n && time() < $until;
}

# A switch of primary under load: four senders post signed deliveries to
# endpoint st while rounds of two workers run; once 60 are accepted,
# o{break}->() switches the primary and returns the new one (anything with
# ->sql); once 60 more are accepted (or o{after} seconds, default 30) the
# load stops.  Then, on the new primary: every acknowledged delivery is
# there (Load's reconcile), the switch showed as 503s, the workers drain
# it and each event reached each route once.  o: t, d (the downstream),
# secret, tag, what (the label), break, after.  Returns (reconcile's
# result, the new primary).
sub failover {
	my (%o) = @_;
	my ($t, $what) = @o{qw(t what)};
	my $load = HookTest::Load->new(dir => $t->dir, urls => [$t->url('st')], secret => $o{secret}, tag => $o{tag})
		->start(senders => 4);
	my $rounds = rounds_bg($t, 2);
	wait_accepted($load, 60, 30);
	my $new = $o{break}->();
	wait_accepted($load, 60, $o{after} // 30);
	$load->stop;
	my ($runs, $failed) = stop_rounds($rounds);
	my $sql = sub { $new->sql(@_) };
	my $r = $load->reconcile(sql => $sql, what => $what);
	Test::More::cmp_ok($r->{status}{503} // 0, '>', 0, "$what: the switch was seen as 503s");
	Test::More::diag(sprintf('%s: %d 503s; longest time without a 2xx %.1f s; %d worker runs during the load, '
		. '%d failed', $what, $r->{status}{503} // 0, $r->{gap}, $runs, $failed));
	my ($f2, $l2) = drain($t, 2, sql => $sql);
	Test::More::is($f2, 0, "$what: worker runs on the new primary exit 0") or Test::More::diag($l2 =~ /(.*error.*)/g);
	HookTest::Load::check_worker(sql => $sql, downstream => $o{d}, tag => $o{tag}, routes => ['down'],
		sql_table => 'app.applied', what => "$what: workers");
	return ($r, $new);
}

# start n workers with these arguments (default --once); returns
# [[pid, log], ...].  o: wrap (a command prefix, e.g. ip netns exec),
# config (default worker.conf); hosts, instead of n, wrap and config: one
# worker on each host, [[wrap, config], ...]
sub workers_bg {
	my ($t, $n, %o) = @_;
	return [map { @{ workers_bg($t, 1, %o, hosts => undef, wrap => $_->[0], config => $_->[1]) } } @{ $o{hosts} }]
		if $o{hosts};
	my @p;
	for my $k (1 .. $n) {
		my $log = $t->dir . '/worker.' . int(rand(1e9)) . '.log';
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			open STDERR, '>', $log or POSIX::_exit(2);
			open STDOUT, '>&', \*STDERR or POSIX::_exit(2);
			my @wrap = ref $o{wrap} eq 'ARRAY' ? @{ $o{wrap} } : ref $o{wrap} eq 'CODE' ? $o{wrap}->($k) : ();
			exec(@wrap, HookTest::top() . '/obj/test/hookinbox-worker', '-v', '-c', $o{config} // worker_config($t),
				@{ $o{args} // ['--once'] }) or POSIX::_exit(127);
		}
		push @p, [$pid, $log];
	}
	return \@p;
}

# wait for them; returns (number that exited non-zero, their logs)
sub wait_workers {
	my ($p) = @_;
	my $fail = 0;
	for (@$p) {
		waitpid $_->[0], 0;
		$fail++ if $? != 0;
	}
	return ($fail, join('', map { HookTest::slurp($_->[1]) } @$p));
}

# Rounds of n --once workers, as cron starts them, until stop_rounds: a
# round that fails (the database went away under it) is simply followed
# by the next.  Returns a handle for stop_rounds.
sub rounds_bg {
	my ($t, $n, %o) = @_;
	my $stop = $t->dir . '/rounds.' . int(rand(1e9));
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		my ($runs, $fail) = (0, 0);
		open my $fh, '>', "$stop.log" or POSIX::_exit(2);
		$fh->autoflush(1);
		until (-e "$stop.stop") {
			my $p = workers_bg($t, $n, %o);
			my ($f, $log) = wait_workers($p);
			print $fh $log;
			$runs += @$p;
			$fail += $f;
			sleep($o{pause} // 0.3);
		}
		print $fh "rounds: runs=$runs failed=$fail\n";
		close $fh;
		POSIX::_exit(0);
	}
	return { pid => $pid, stop => $stop };
}

# stop the rounds; returns (runs, runs that failed, all logs)
sub stop_rounds {
	my ($r) = @_;
	open my $fh, '>', "$r->{stop}.stop" or die $!;
	close $fh;
	waitpid $r->{pid}, 0;
	my $log = HookTest::slurp("$r->{stop}.log");
	my ($runs, $fail) = $log =~ /^rounds: runs=(\d+) failed=(\d+)$/m;
	return ($runs // 0, $fail // 0, $log);
}

# n --once workers at a time until nothing is pending (sql: how to ask
# the primary); returns (runs that failed, all logs)
sub drain {
	my ($t, $n, %o) = @_;
	my $until = time() + ($o{timeout} // 60);
	my ($fail, $all) = (0, '');
	while (time() < $until) {
		my ($f, $log) = wait_workers(workers_bg($t, $n, %o));
		$fail += $f;
		$all .= $log;
		my $left = $o{sql}->("select (select count(*) from hookinbox.action where state = 'pending')"
			. " + (select count(*) from hookinbox.inbox where state = 'pending')");
		last if $left == 0;
		sleep($o{pause} // 0.5);
	}
	return ($fail, $all);
}

1;
