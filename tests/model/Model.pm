# SPDX-License-Identifier: ISC
# Model - a checker that hunts for broken promises: from a seed, a weighted
# random schedule of operations over the whole real stack, then the
# invariants hookinbox promises (Model/Invariants.pm).
#
#   my $m = Model->new(seed => 42, ops => 300);
#   my @fail = $m->run;     # () when every invariant held
#   print $m->replay_command;
#
# The stack: one PostgreSQL cluster, lighttpd with the test-build responder
# twice (single-row commits, and group commit with request threads), the
# test-build worker with several configurations (lease, concurrency), and a
# real downstream HTTP server (tests/lib/HookTest/Downstream.pm) whose plans make it
# slow, failing, timing out, resetting, answering 409/429 with Retry-After,
# and which honours idempotency keys.  Operations: Model/Ops.pm.
# Invariants: Model/Invariants.pm.  Known defects: Model/Defects.pm.
#
# The schedule (operation names and parameters) is drawn from the seed
# alone, by a private generator, so a seed replays the same schedule; the
# timing of the real processes is not replayed, as with any test of real
# concurrency, so a rare interleaving may need a few runs of its seed.
package Model;

use strict;
use warnings;
use File::Path qw(make_path);
use List::Util ();
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use HookTest;
use JSON::PP ();
use IO::Socket::INET;
use HookTest::Downstream;
use HookTest::PgBouncer;
use Model::Defects;
use Model::Providers;
use Model::Ops;
use Model::Invariants;
use Model::Reach;

our $ROUTE_TIMEOUT = 2;

# ---------------------------------------------------------------- the seeded generator

# xorshift32: the same schedule from the same seed on every perl
sub rng_new {
	my ($seed) = @_;
	my $x = ($seed * 2654435761 + 1013904223) & 0xffffffff;
	$x ||= 0x9e3779b9;
	return \$x;
}

sub rand_u32 {
	my ($self) = @_;
	my $r = $self->{rng};
	my $x = $$r;
	$x ^= ($x << 13) & 0xffffffff;
	$x ^= $x >> 17;
	$x ^= ($x << 5) & 0xffffffff;
	$$r = $x;
	return $x;
}

sub rint { my ($self, $n) = @_; return $self->rand_u32 % $n }
sub rfloat { my ($self) = @_; return $self->rand_u32 / 4294967296 }
sub pick { my ($self, @l) = @_; return $l[ $self->rint(scalar @l) ] }
sub chance { my ($self, $p) = @_; return $self->rfloat < $p }

# ---------------------------------------------------------------- the stack

sub new {
	my ($class, %o) = @_;
	my $self = bless {
		seed => $o{seed} // 1,
		nops => $o{ops} // 200,
		seconds => $o{seconds},
		verbose => $o{verbose},
		n => 0,
		ev => {},	# logical events: L => { ep, type, object, version, body, ids, ... }
		dl => [],	# every delivery sent: { L, ep, id, status, got, dup, t, bad, ... }
		sent => [],	# the deliveries the schedule made (not the provider's retries)
		retry => [],	# deliveries the provider will retry (5xx, no answer)
		bg => [],	# background workers and lock holders
		purged => {}, purged_keys => {}, purge_bad => [],
		loop_died => [],	# --loop workers that ended on their own
		immediate => [],	# real times of immediate PostgreSQL stops
		offset => 0,	# the clock moved forward by this many seconds
		counts => {}, checked => {},
		drain_replayed => {},
		closed => {},	# actions dismissed or resolved: id => { how, state, key, route, t }
		old_keys => {},	# idempotency keys replaced by resend.sql -v new_key=1
		released => {}, review_dismissed => {},	# held rows decided in review
		paused => {}, pauses => [],	# routes paused now (route => since), pauses over
		# how long a worker waits for a call at least (the shortest route
		# timeout of its configurations): a call is surely in flight no longer
		call_timeout => $ROUTE_TIMEOUT,
	}, $class;
	$self->{rng} = rng_new($self->{seed});
	# every third seed runs the programs through PgBouncer in transaction
	# mode (the seed alone decides it, so the replay line reproduces it;
	# operators' scripts and the model's own queries go direct)
	$self->{pgbouncer} = $self->{seed} % 3 == 0 && HookTest::PgBouncer::available();
	$self->{defects} = { map { $_ => 1 } Model::Defects::enabled() };
	$self->setup;
	return $self;
}

sub setup {
	my ($self) = @_;
	my $tmp = File::Temp::tempdir('model-ds-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{HOOKINBOX_KEEP});
	$self->{ds} = HookTest::Downstream->new(dir => $tmp, default => '200');
	my $ds = $self->{ds};
	my %routes = (
		ord => { endpoint => 'st', url => $ds->url('/ord'), order => 'object',
			timeout => $ROUTE_TIMEOUT, max_attempts => 60 },
		ev => { endpoint => 'gh sh tw ac st2 tp hs', url => $ds->url('/ev'), timeout => $ROUTE_TIMEOUT,
			max_attempts => 60 },
		app => { endpoint => 'st', handler => 'sql:model_app.apply', timeout => $ROUTE_TIMEOUT,
			max_attempts => 60 },
		# each accepted (order, key) pair: ord newest x event, ev none x
		# event, seq sequence x event, biz none x object-type (newest or
		# sequence with object-type is refused: OpsRoutes::route_key_refused)
		seq => { endpoint => 'st', url => $ds->url('/seq'), order => 'sequence', key => 'event',
			timeout => $ROUTE_TIMEOUT, max_attempts => 60 },
		biz => { endpoint => 'st', url => $ds->url('/biz'), key => 'object-type',
			timeout => $ROUTE_TIMEOUT, max_attempts => 60 },
	);
	$self->{routes} = { ord => ['st'], ev => [qw(gh sh tw ac st2 tp hs)], app => ['st'], seq => ['st'], biz => ['st'] };
	# each route's key (docs/configuration.md, route key): invariant 15
	$self->{route_key} = { ord => 'event', ev => 'event', app => 'event', seq => 'event', ev2 => 'event',
		biz => 'object-type' };
	# the responders write their counts every 250 ms, not every 10 s, so
	# that a count is in flight on their connection whenever the database
	# stalls, restarts or is locked, and meets every other operation
	my %renv = (HOOKINBOX_TEST_COUNT_FLUSH_MS => 250);
	my $t = HookTest->new(endpoints => Model::Providers::endpoints(), routes => \%routes,
		worker => { lease => 8, backoff_base => 1, backoff_cap => 2 }, procs => 2, env => { %renv });
	$self->{t} = $t;
	my $dir = $t->dir;
	# the configurations: the group-commit responder's, and the workers'
	# (the worker's role; a lease each; "tight" only to provoke a known defect)
	my %variant = (
		group => { intake => { threads => 4 } },
		w8 => { worker_role => 1, worker => { lease => 8 } },
		w10 => { worker_role => 1, worker => { lease => 10 } },
		tight => { worker_role => 1, worker => { lease => 5 }, timeout => 3 },
	);
	my %saved = %{ $t->{o} };
	for my $v (sort keys %variant) {
		my $c = $variant{$v};
		$t->{o} = { %saved };
		$t->{o}{intake} = $c->{intake} if $c->{intake};
		if ($c->{worker_role}) {
			$t->{o}{intake_role} = 'hookinbox_worker';
			$t->{o}{worker} = { %{ $saved{worker} }, %{ $c->{worker} } };
		}
		if ($c->{timeout}) {
			$t->{o}{routes} = { map { $_ => { %{ $routes{$_} } } } keys %routes };
			$t->{o}{routes}{$_}{timeout} = $c->{timeout} for qw(ord ev);
		}
		$t->write_config;
		rename "$dir/hookinbox.conf", "$dir/$v.conf" or die $!;
	}
	$t->{o} = \%saved;
	$t->write_config;
	$self->pgbouncer($dir, 'hookinbox', sort keys %variant) if $self->{pgbouncer};
	for my $c ('hookinbox', sort keys %variant) {
		my $prog = HookTest::top() . '/obj/test/' . ($variant{$c} && $variant{$c}{worker_role}
			? 'hookinbox-worker --health-check --max-pending-age 1000000 --max-parked-age 1000000'
			: 'hookinbox.fcgi --check');
		my $out = `$prog -c $dir/$c.conf 2>&1`;
		die "model: $c.conf: $out" if $? != 0;
	}
	make_path("$dir/gc");
	$self->{fe} = [
		{ name => 'single', httpd => $t->httpd },
		{ name => 'group', httpd => HookTest::Lighttpd->new(dir => "$dir/gc",
			fcgi => HookTest::top() . '/obj/test/hookinbox.fcgi', config => "$dir/group.conf",
			procs => 1, env => { %renv })->start },
	];
	$t->sql(Model::Invariants::AUDIT_SQL());
	$t->sql(Model::Invariants::HANDLER_SQL());
}

# PgBouncer (transaction mode, 4 server connections a role: fewer than
# the clients) between the responders and workers and PostgreSQL: every
# configuration's conninfo goes through it, and the single-row responder,
# started with the direct one, restarts on it
sub pgbouncer {
	my ($self, $dir, @confs) = @_;
	my $t = $self->{t};
	# (a login that failed while PostgreSQL restarted refuses every client
	# for server_login_retry, 15 s by default: each delivery then gets a
	# 503 and a schedule's next operations do little; 2 s here)
	$self->{bouncer} = HookTest::PgBouncer->new(dir => $dir, pg => $t->pg, pool_size => 4, login_retry => 2)->start;
	for my $c (@confs) {
		my $p = "$dir/$c.conf";
		my $text = HookTest::slurp($p);
		$text =~ s/^conninfo = .*\buser=(\w+)\s*$/'conninfo = ' . $self->{bouncer}->conninfo($1)/mge;
		open my $fh, '>', "$p.new" or die "$p.new: $!";
		print $fh $text;
		close $fh or die "$p.new: $!";
		rename "$p.new", $p or die "$p: $!";
	}
	$t->httpd->restart if $t->httpd && $t->httpd->{running};
	$self->note('stack: PgBouncer in transaction mode between the programs and PostgreSQL (seed % 3 == 0)');
}

sub t { $_[0]{t} }
sub ds { $_[0]{ds} }
sub dir { $_[0]{t}->dir }
sub sql { my $self = shift; return $self->{t}->sql(@_) }
sub defect { my ($self, $name) = @_; return Model::Defects::provoke($name) }

sub note {
	my ($self, $msg) = @_;
	push @{ $self->{log} }, $msg;
	print STDERR "# model: $msg\n" if $self->{verbose};
}

# ---------------------------------------------------------------- helpers the operations share

# send one delivery (a hash: ep, body, id, type, bad, headers, fe) and
# record what was answered; the provider retries a 5xx or no answer
sub deliver {
	my ($self, $d) = @_;
	# a retry takes no number from the generator: how many there are
	# depends on the timing of the real processes, the schedule must not
	my $fe = $d->{fe} // ($d->{retried} ? $self->{fe}[ $self->{nretry}++ % 2 ] : $self->{fe}[ $self->rint(2) ]);
	$d->{fe_name} = $fe->{name};
	push @{ $self->{sent} }, $d unless $d->{retried};
	my ($h, $q) = Model::Providers::sign($d->{ep}, $d->{body}, id => $d->{id}, type => $d->{type},
		bad => $d->{bad}, forge => $d->{forge}, now => $fe->{now}, signed_id => $d->{signed_id});
	$h->{$_} = $d->{headers}{$_} for keys %{ $d->{headers} // {} };
	my $url = $fe->{httpd}->url . "/$d->{ep}" . (defined $q ? "?$q" : '');
	return $self->post($d, $url, $h);
}

# The provider's client: it gives up after 15 s, past invariant 18's 10 s,
# so that a responder that never answers is found in a few requests.
sub http {
	my ($self) = @_;
	return $self->{http} //= HTTP::Tiny->new(timeout => 15, keep_alive => 1);
}

# as HookTest::post, but an idempotency token is not recorded as a secret
# (it is an event id, stored in the inbox)
sub post {
	my ($self, $d, $url, $h) = @_;
	HookTest::record_secret(map { $h->{$_} } grep { /signature|hmac/i } keys %$h);
	my $t0 = time;
	my $r = (grep { /[^\x20-\x7e]/ } values %$h) ? raw_post($url, $d->{body}, $h)
		: $self->http->request('POST', $url, { content => $d->{body}, headers => $h });
	$r->{secs} = time - $t0;
	$r->{json} = eval { JSON::PP::decode_json($r->{content}) } if ($r->{content} // '') =~ /^\s*\{/;
	$self->record_answer($d, $r);
	return $r;
}

sub record_answer {
	my ($self, $d, $r) = @_;
	return Model::OpsBatch::record_batch($self, $d, $r) if $d->{batch};
	my %a = (%$d, status => $r->{status}, t => time(), secs => $r->{secs});
	delete $a{fe};
	if ($r->{status} >= 200 && $r->{status} <= 299 && $r->{json}) {
		$a{got} = $r->{json}{id};
		$a{dup} = $r->{json}{duplicate} ? 1 : 0;
	}
	push @{ $self->{dl} }, \%a;
	if (!$d->{bad} && ($r->{status} >= 500 || $r->{status} == 0)) {
		push @{ $self->{retry} }, { map { $_ => $d->{$_} } grep { $_ ne 'fe' } keys %$d };
	}
	return \%a;
}

# HTTP::Tiny refuses header values that are not printable ASCII, which a
# provider (or a proxy) may still send: one request by hand
sub raw_post {
	my ($url, $body, $h) = @_;
	my ($host, $port, $path) = $url =~ m{^http://([^:/]+):(\d+)(/.*)$} or die "raw_post: $url";
	my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Timeout => 30)
		or return { status => 599, content => "connect: $!" };
	my $req = "POST $path HTTP/1.1\r\nHost: $host:$port\r\nConnection: close\r\n"
		. 'Content-Length: ' . length($body) . "\r\n" . join('', map { "$_: $h->{$_}\r\n" } sort keys %$h)
		. "\r\n$body";
	print $s $req;
	local $/;
	my $resp = <$s> // '';
	close $s;
	my ($status) = $resp =~ m{^HTTP/1\.[01] (\d{3})} or return { status => 599, content => 'no answer' };
	my ($content) = $resp =~ /\r\n\r\n(.*)\z/s;
	return { status => $status, content => $content // '' };
}

# a new logical event
sub event {
	my ($self, %e) = @_;
	my $L = ++$self->{nev};
	$self->{ev}{$L} = { L => $L, %e, ids => {} };
	return $self->{ev}{$L};
}

# the command line of a worker run
sub worker_cmd {
	my ($self, $variant, @args) = @_;
	return (HookTest::top() . '/obj/test/hookinbox-worker', '-c', $self->dir . "/$variant.conf", @args);
}

# start a worker in the background; env: failure point, clock
sub worker_start {
	my ($self, $variant, $env, @args) = @_;
	my $log = $self->dir . '/worker.' . ++$self->{nworker} . '.log';
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		$ENV{$_} = $env->{$_} for keys %$env;
		$ENV{HOOKINBOX_TEST_NOW} = int(time + $self->{offset}) if $self->{offset};
		open STDERR, '>', $log or die $!;
		open STDOUT, '>&', \*STDERR or die $!;
		exec($self->worker_cmd($variant, @args)) or POSIX::_exit(127);
	}
	my $w = { pid => $pid, log => $log, kind => 'worker', args => "@args", variant => $variant, t0 => time };
	return $w;
}

# run a worker to its end; returns its exit code
sub worker_run {
	my ($self, $variant, $env, @args) = @_;
	my $w = $self->worker_start($variant, $env, @args);
	my $deadline = time + 120;
	while (time < $deadline) {
		return wait_code($?) if waitpid($w->{pid}, WNOHANG) == $w->{pid};
		sleep 0.02;
	}
	kill 'KILL', $w->{pid};
	waitpid $w->{pid}, 0;
	$self->note("worker @args did not end in 120 s: killed");
	return -1;
}

sub wait_code { my ($st) = @_; return $st & 127 ? 128 + ($st & 127) : $st >> 8 }

# reap background processes that ended; returns how many still run
sub reap {
	my ($self) = @_;
	my @left;
	for my $b (@{ $self->{bg} }) {
		if (waitpid($b->{pid}, WNOHANG) == $b->{pid}) {
			my $code = wait_code($?);
			$self->{counts}{"exit:$b->{kind}:$code"}++;
			push @{ $self->{loop_died} }, "a --loop worker ($b->{args}) exited $code without being told to stop"
				if $b->{loop};
			next;
		}
		push @left, $b;
	}
	$self->{bg} = \@left;
	return scalar @left;
}

# no background worker or lock holder left: loops are told to stop,
# the rest are waited for (killed after the timeout)
sub quiesce {
	my ($self, $timeout) = @_;
	for my $b (grep { $_->{loop} } @{ $self->{bg} }) {
		$b->{loop} = 0;
		kill 'TERM', $b->{pid};
	}
	my $deadline = time + ($timeout // 60);
	while ($self->reap && time < $deadline) { sleep 0.05 }
	if (@{ $self->{bg} }) {
		$self->note('quiesce: killed ' . scalar(@{ $self->{bg} }) . ' background processes');
		kill 'KILL', map { $_->{pid} } @{ $self->{bg} };
		waitpid $_->{pid}, 0 for @{ $self->{bg} };
		$self->{bg} = [];
	}
}

sub pg_up {
	my ($self) = @_;
	my $pg = $self->{t}->pg;
	$pg->start unless $pg->{running};
}

# ---------------------------------------------------------------- the run

sub schedule {
	my ($self) = @_;
	my @table = Model::Ops::table($self);
	my $total = 0;
	$total += $_->{weight} for @table;
	my $x = $self->rint($total);
	for my $op (@table) {
		return $op if $x < $op->{weight};
		$x -= $op->{weight};
	}
	return $table[-1];
}

# one operation: run, logged, counted; returns its error, if it died
sub do_op {
	my ($self, $op, $label) = @_;
	# the extra operations draw from their own generator (extra_op)
	local $self->{rng} = $op->{extra} ? $self->{rng2} : $self->{rng};
	$self->{counts}{ $op->{name} }++;
	my $t0 = time;
	my $what = eval { $op->{run}->($self) };
	my $err = $@;
	$self->{op_time}{ $op->{name} } += time - $t0;
	return $err if $err;
	$self->note("$label $op->{name}" . (defined $what ? " $what" : ''));
	Model::Reach::count($self->{reach} //= {}, $op->{name}, $what);
	$self->reap;
	return '';
}

# After each operation of the schedule, maybe one of the extra operations
# (the intake's template and batch ones, Model::OpsBatch::table; a lone
# failing action, Model::OpsRoutes::extra_table; a sequence's wake,
# Model::OpsOrder::extra_table; the schema under the running programs,
# Model::OpsSchema::extra_table; logged "N+"), drawn from a
# generator of their own seeded from the seed, as every choice they make
# is: the schedule of every seed, its operations and their parameters,
# stays what it was before they were added (the regression seeds keep
# their paths, the mutants their catching seeds).  Each is as likely as an
# operation of that weight in the main table.
sub extra_op {
	my ($self) = @_;
	$self->{main_total} //= do { my $t = 0; $t += $_->{weight} for Model::Ops::table($self); $t };
	local $self->{rng} = $self->{rng2} //= rng_new($self->{seed} ^ 0x5bd1e995);
	my $x = $self->rint($self->{main_total});
	for my $op (Model::OpsBatch::table($self), Model::OpsRoutes::extra_table($self),
		Model::OpsOrder::extra_table($self), Model::OpsSchema::extra_table($self)) {
		return $op if $x < $op->{weight};
		$x -= $op->{weight};
	}
	return;
}

# runs the schedule, drains, checks; returns the failures (strings)
sub run {
	my ($self) = @_;
	my @fail;
	my $until = $self->{seconds} ? time + $self->{seconds} : undef;
	my $i = 0;
	while ($i < $self->{nops} && (!$until || time < $until)) {
		$i++;
		my $op = $self->schedule;
		if (my $err = $self->do_op($op, sprintf('%4d', $i))) {
			push @fail, "operation $i ($op->{name}) died: $err";
			last;
		}
		if (my $x = $self->extra_op) {
			if (my $err = $self->do_op($x, sprintf('%4d+', $i))) {
				push @fail, "operation $i+ ($x->{name}) died: $err";
				last;
			}
		}
		if ($i % 25 == 0) {
			push @fail, $self->check('along');
			last if @fail;
		}
	}
	$self->{ops_done} = $i;
	unless (@fail) {
		eval { $self->drain };
		push @fail, "drain died: $@" if $@;
		push @fail, $self->check('end');
	}
	$self->{failures} = \@fail;
	return @fail;
}

# the end of the schedule: healthy downstreams and database, the provider
# retries what was not answered, the operator replays what is parked, the
# worker runs until nothing is pending
sub drain {
	my ($self) = @_;
	$self->quiesce(60);
	$self->pg_up;
	for my $fe (@{ $self->{fe} }) {
		if ($fe->{failpoint} || !$fe->{httpd}{running}) {
			delete $fe->{failpoint};
			$fe->{httpd}->restart(HOOKINBOX_FAILPOINT => undef);
		}
	}
	$self->{ds}->plan($_, '200') for qw(/ord /ev);
	$self->sql('update model_app.ctl set fail = false');
	Model::Ops::resume_route($self, $_) for sort keys %{ $self->{paused} };
	# the operator ends what a day's Retry-After still holds (route.sql
	# do=clear), and the time it asked for passes for its actions
	for my $route (split /\n/, $self->sql("select route from hookinbox.route_state "
		. "where hold_until > now() + interval '30 seconds' order by route")) {
		Model::Ops::operator($self, 'route', route => $route, do => 'clear');
	}
	$self->sql("update hookinbox.action set due_at = now() where state = 'pending' "
		. "and due_at > now() + interval '30 seconds' and coalesce(lease_until < now(), true)");
	for my $round (1 .. 20) {
		my @r = @{ $self->{retry} };
		last unless @r;
		$self->{retry} = [];
		$self->deliver({ %$_, retried => 1 }) for @r;
		sleep 0.5 if @{ $self->{retry} };
	}
	# The operator replays what is parked, each action once: also what is
	# parked only during the drain (an action not yet due at the first run
	# is parked at its claim when the clock moved past its retry window:
	# seed 114221).  A replayed action parked again is invariant 3's.
	my $deadline = time + 120;
	while (time < $deadline) {
		$self->worker_run('w8', {}, '--once');
		my @new = grep { !$self->{drain_replayed}{$_} }
			split /\n/, $self->sql("select id from hookinbox.action where state = 'parked'");
		for my $id (@new) {
			$self->{drain_replayed}{$id} = 1;
			# first as an operator would, without -v blind=1: replay.sql
			# must refuse exactly the unknown outcomes over 24 hours old
			# (invariant 12; crash_past_window leaves one in nearly every
			# seed); then blind=1 for those: the drain replays whatever
			# the outcome (the model's downstream never forgets a key, so
			# invariant 4 still judges it)
			my $blind = Model::Ops::blind_count($self, "id = $id");
			my ($rc, $out) = $self->{t}->pg->psql_file(HookTest::top() . '/sql/replay.sql',
				vars => { action_id => $id, go => 1 });
			Model::Ops::judge_blind($self, "action $id", $blind, $rc, $out);
			($rc, $out) = $self->{t}->pg->psql_file(HookTest::top() . '/sql/replay.sql',
				vars => { action_id => $id, go => 1, blind => 1 }) if $rc != 0 && Model::Ops::blind_refused($out);
			die "replay.sql -v action_id=$id: exit $rc: $out" if $rc != 0;
		}
		next if @new;
		# order = sequence: an action in review (an equal version, or one
		# that arrived after a later version was sent) holds the later
		# versions of its object; the operator dismisses it
		# (order-review.sql), each once: invariant 11 then holds it closed
		my @rev = grep { !$self->{drain_reviewed}{$_} }
			split /\n/, $self->sql("select id from hookinbox.action where state = 'review' "
			. "and sequenced order by id");
		for my $id (@rev) {
			# (a hash of its own: an action the drain replayed from parked
			# may go to review at its claim: seed 151922)
			$self->{drain_reviewed}{$id} = 1;
			my $key = $self->sql("select idem_key from hookinbox.action where id = $id");
			Model::Ops::operator($self, 'order-review', action_id => $id, do => 'dismiss',
				reason => 'model drain: not placed', go => 1);
			$self->{closed}{$id} = { how => 'dismiss', state => 'dismissed', key => $key, route => 'seq',
				t => Model::Ops::db_now($self) };
		}
		next if @rev;
		my $left = $self->sql("select (select count(*) from hookinbox.action where state = 'pending') "
			. "+ (select count(*) from hookinbox.inbox where state = 'pending')");
		last if $left == 0;
		sleep 0.5;
	}
	if ($ENV{HOOKINBOX_MODEL_DEBUG}) {
		print STDERR "# drain left: $_\n" for split /\n/, $self->sql("select a.id, a.route, a.state, a.attempts, "
			. "round(extract(epoch from a.due_at - now())), a.object_id, a.event_version, a.inbox_id, a.inbox_horizon, "
			. "coalesce(a.last_error, '') from hookinbox.action a where a.route = 'seq' and a.object_id in "
			. "(select object_id from hookinbox.action where state = 'pending') order by a.object_id, a.event_version");
	}
}

# the invariants; phase: along (cheap ones) or end (all)
sub check {
	my ($self, $phase) = @_;
	my @fail;
	for my $inv (Model::Invariants::table()) {
		next if $phase eq 'along' && !$inv->{cheap};
		next if $inv->{when} && !$inv->{when}->($self);
		$self->{checked}{ $inv->{n} }++;
		my @v = eval { $inv->{check}->($self) };
		@v = ("check died: $@") if $@;
		push @fail, map { "invariant $inv->{n} ($inv->{name}): $_" } @v[0 .. ($#v > 4 ? 4 : $#v)];
		push @fail, "invariant $inv->{n}: ... and " . (@v - 5) . ' more' if @v > 5;
	}
	return @fail;
}

# the one line that runs this schedule again
sub replay_command {
	my ($self) = @_;
	my $d = join ',', sort keys %{ $self->{defects} };
	return 'make build-tests && ' . ($d ? "HOOKINBOX_MODEL_DEFECTS=$d " : '')
		. "perl -I tests/lib -I tests/model tests/model/run.pl --seed $self->{seed} --ops $self->{ops_done}";
}

sub summary {
	my ($self) = @_;
	my $c = $self->{counts};
	my @ops = map { "$_=$c->{$_}" } sort grep { !/^exit:/ } keys %$c;
	my @ex = map { "$_=$c->{$_}" } sort grep { /^exit:/ } keys %$c;
	my $k = $self->{checked};
	return sprintf("seed %d%s: %d operations (%s); background exits (%s); invariant checks (%s); "
		. "deliveries %d, events %d, slowest answer %.1f s", $self->{seed},
		$self->{pgbouncer} ? ' (through PgBouncer)' : '', $self->{ops_done} // 0, join(' ', @ops),
		join(' ', @ex), join(' ', map { "$_:$k->{$_}" } sort { $a <=> $b } keys %$k),
		scalar @{ $self->{dl} }, scalar keys %{ $self->{ev} },
		List::Util::max(0, map { $_->{secs} // 0 } @{ $self->{dl} }));
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	kill 'KILL', map { $_->{pid} } @{ $self->{bg} // [] };
	waitpid $_->{pid}, 0 for @{ $self->{bg} // [] };
	for my $fe (@{ $self->{fe} // [] }) { eval { $fe->{httpd}->stop } }
	# the group-commit responder's log joins the evidence t/99 scans
	if ($self->{t}) {
		my $log = HookTest::slurp($self->dir . '/gc/responder.log');
		if (open my $fh, '>', $self->dir . '/responder-group.log') { print $fh $log; close $fh }
	}
	delete $self->{fe};
	delete $self->{ds};
	delete $self->{bouncer};
	delete $self->{t};
}

1;
