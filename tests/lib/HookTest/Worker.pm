# SPDX-License-Identifier: ISC
# HookTest::Worker - helpers shared by the worker's integration tests (tests/t/2*.t)
#
#   my $t = HookTest::Worker::setup(routes => {...}, worker => {...});
#   HookTest::Worker::accept($t, event_id => 'evt_1', type => 'invoice.paid', ...);
#   my ($rc, $log) = HookTest::Worker::worker($t, '--once');
package HookTest::Worker;

use strict;
use warnings;
use HookTest;
use Time::HiRes qw(sleep time);

# an SQL handler (route handler = sql:app.apply) that records each event
# it applies in app.applied, once: run with ->sql on the database
our $APPLY_SQL = q{
	create schema app;
	create table app.applied (event_id text primary key);
	create function app.apply(e jsonb) returns void language sql as
		$$ insert into app.applied values (e->>'event_id') $$;
	grant usage on schema app to hookinbox_worker;
	grant insert on app.applied to hookinbox_worker;
	grant execute on function app.apply(jsonb) to hookinbox_worker;
};

our $SECRET = 'whsec_' . MIME::Base64::encode_base64('route-secret-0123456789abcdef', '');

# a HookTest with one stripe endpoint "shop" (and "gh"); the worker connects
# with its own role ([worker] conninfo), a responder with the intake's
sub setup {
	my (%o) = @_;
	return HookTest->new(
		endpoints => $o{endpoints} // { shop => { provider => 'stripe' }, gh => { provider => 'github' } },
		routes => $o{routes},
		worker => { lease => 5, backoff_base => 1, backoff_cap => 4, %{ $o{worker} // {} } },
		worker_role => 'hookinbox_worker',
		no_lighttpd => 1,
		%{ $o{extra} // {} },
	);
}

sub sqlq {
	my ($v) = @_;
	return 'null' unless defined $v;
	$v =~ s/'/''/g;
	return "'$v'";
}

# insert one delivery as the responder would; returns the inbox id
sub accept {
	my ($t, %e) = @_;
	my $body = $e{body} // qq({"id":"$e{event_id}","type":"@{[ $e{type} // '' ]}"});
	my $sql = sprintf("select id from hookinbox.accept(%s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, "
		. "convert_to(%s, 'UTF8'), false)",
		sqlq($e{endpoint} // 'shop'), sqlq($e{provider} // 'stripe'), sqlq($e{account} // 'shop'),
		sqlq($e{environment} // 'default'), sqlq($e{event_id}), sqlq($e{type}), sqlq($e{object_id}),
		defined $e{version} ? $e{version} + 0 : 'null',
		sqlq($e{headers} // '{"Content-Type":"application/json"}'), sqlq($body));
	return $t->sql($sql);
}

# many deliveries in one statement: n events evt_<prefix>_<i>
sub accept_many {
	my ($t, $n, %o) = @_;
	my $p = $o{prefix} // 'bulk';
	my $type = $o{type} // 'invoice.paid';
	return $t->sql("select count(*) from generate_series(1, $n) g, lateral hookinbox.accept('shop', 'stripe', "
		. "'shop', 'default', '${p}_' || g, '$type', null, null, '{\"Content-Type\":\"application/json\"}', "
		. "convert_to('{\"id\":\"${p}_' || g || '\"}', 'UTF8'), false)");
}

sub bin { return HookTest::top() . '/obj/test/hookinbox-worker' }

# a command the worker runs under, e.g. ('valgrind', '--error-exitcode=42', ...)
our @WRAP;

# run the worker to completion; returns (exit code, what it logged)
sub worker {
	my ($t, @args) = @_;
	my ($pid, $log) = worker_bg($t, @args);
	waitpid $pid, 0;
	my $rc = $? & 127 ? 128 + ($? & 127) : $? >> 8;
	return ($rc, HookTest::slurp($log));
}

# one --once run of the worker with configuration file conf (more
# arguments after it); returns (exit code, what it printed)
sub run_once {
	my ($conf, @args) = @_;
	my $out = `@{[ bin() ]} -v -c $conf --once @args 2>&1`;
	return ($? >> 8, $out);
}

# a copy of $t's configuration without [route NAME] at path (a host that
# has not got the route yet); returns path
sub config_without_route {
	my ($t, $route, $path) = @_;
	(my $c = HookTest::slurp($t->config)) =~ s/\[route \Q$route\E\].*?(?=^\[|\z)//ms;
	open my $fh, '>', $path or die $!;
	print $fh $c;
	close $fh;
	return $path;
}

# Two hosts in the middle of a rolling route change: setup(%o) with every
# route of o{routes} is the newer host's configuration; the older host's
# is the same without route o{lacking} (old.conf in the test's dir).
# Returns ($t, the newer configuration's path, the older's).  The workers'
# lease is 20 s unless o{worker} says otherwise.
sub two_hosts {
	my (%o) = @_;
	my $lacking = delete $o{lacking};
	my $t = setup(worker => { lease => 20 }, %o);
	return ($t, $t->config, config_without_route($t, $lacking, $t->dir . '/old.conf'));
}

# sql/reroute.sql as hookinbox_admin with the psql variables %v; returns
# (exit code, output) as psql_file does
sub reroute {
	my ($t, %v) = @_;
	return $t->pg->psql_file(HookTest::top() . '/sql/reroute.sql', role => 'hookinbox_admin', vars => \%v);
}

# start a worker in the background; returns (pid, logfile)
sub worker_bg {
	my ($t, @args) = @_;
	my %env = ref $args[0] eq 'HASH' ? %{ shift @args } : ();
	my $log = $t->dir . '/worker.' . int(rand(1e9)) . '.log';
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		$ENV{$_} = $env{$_} for keys %env;
		open STDERR, '>', $log or die $!;
		open STDOUT, '>&', \*STDERR or die $!;
		exec(@WRAP, bin(), '-c', $t->config, '-v', @args) or POSIX::_exit(127);
	}
	return ($pid, $log);
}

# run --once until no action is pending (or the time is up); returns the runs' logs
sub drain {
	my ($t, %o) = @_;
	my $until = time() + ($o{timeout} // 30);
	my $all = '';
	while (time() < $until) {
		my ($rc, $out) = worker($t, '--once', @{ $o{args} // [] });
		$all .= $out;
		my $left = $t->sql("select count(*) from hookinbox.action where state = 'pending'")
			+ $t->sql("select count(*) from hookinbox.inbox where state = 'pending'");
		last if $left == 0;
		sleep($o{pause} // 0.5);
	}
	return $all;
}

# state of the only action of an event
sub action {
	my ($t, $event_id, $route) = @_;
	my $r = $t->sql("select a.state, a.attempts, coalesce(a.last_status, 0), coalesce(a.last_error, ''), "
		. "a.idem_key, a.id from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id "
		. "where i.event_id = " . sqlq($event_id) . ($route ? " and a.route = " . sqlq($route) : '')
		. " order by a.id limit 1");
	my @f = split /\|/, $r, -1;
	return { state => $f[0], attempts => $f[1], status => $f[2], error => $f[3], key => $f[4], id => $f[5] };
}

1;
