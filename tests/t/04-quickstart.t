# SPDX-License-Identifier: ISC
# The README's first command, tools/quickstart, in a directory of its own
# (HOOKINBOX_VAR) on a free port: it starts PostgreSQL, lighttpd and the
# worker, and the sample event it sends is stored once and applied once by
# the demo route; "status" reads the schema; a second start keeps the
# cluster, the secret and the configuration; "stop" leaves no process of
# its own behind.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use HookTest;

my $top = HookTest::top();
for my $bin ("$top/fcgi/hookinbox.fcgi", "$top/worker/hookinbox-worker", "$top/contrib/hookinbox-send") {
	-x $bin or BAIL_OUT("$bin is not built (make)");
}
my $var = tempdir(CLEANUP => 1);
chmod 0755, $var;
my $port = HookTest::Proc::free_port();
local $ENV{HOOKINBOX_VAR} = $var;
local $ENV{HOOKINBOX_PORT} = $port;
my $qs = "$top/tools/quickstart";

# every process this copy started names $var on its command line
sub own_processes {
	return grep { $_ != $$ } split ' ', `pgrep -f -- '\Q$var\E' 2>/dev/null`;
}
END {
	local $?;
	system($qs, 'stop') if defined $qs && -d ($var // '') && own_processes();
}

sub psql {
	my ($q) = @_;
	my $bin = HookTest::Pg::pg_bindir();
	my $out = `$bin/psql -X -At -h $var/pgsock -p 5439 -U postgres -d hookinbox -c "$q" 2>&1`;
	chomp $out;
	return $out;
}

my $out = `$qs 2>&1`;
is($?, 0, 'quickstart: starts') or diag $out;
like($out, qr/^hookinbox schema at version \d+$/m, 'quickstart: the schema installed');
like($out, qr{^lighttpd listening on http://127\.0\.0\.1:$port/hooks/}m, 'quickstart: lighttpd on the port asked for');
my ($id) = $out =~ /^processed: demo\.received has event (\S+)$/m;
ok($id, 'quickstart: the sample event was processed by the worker') or diag $out;
like($out, qr/^1 200 \{"id":1,"duplicate":false\}$/m, 'quickstart: the sample delivery answered 200 with its intake id');
is(psql("select count(*) from hookinbox.inbox where event_id = '$id'"), 1, 'quickstart: one inbox row');
is(psql("select count(*) from demo.received where event_id = '$id'"), 1, 'quickstart: applied once by the demo route');
is(psql("select count(*) from hookinbox.action where state <> 'done'"), 0, 'quickstart: no action left over');

# the command it prints for another event works as printed
my ($more) = $out =~ /^  (\S+hookinbox-send .*)$/m;
ok($more, 'quickstart: prints the command to send more');
(my $again = $more // '') =~ s/msg_\$\(date \+%s\)/msg_again_1/;
$again =~ s{\S+/sample-event\.json}{$var/sample-event.json};
like(`$again 2>&1`, qr/^1 200 /, 'quickstart: the printed command delivers another event');

my $status = `$qs status 2>&1`;
is($?, 0, 'quickstart status: runs') or diag $status;
like($status, qr/oldest_pending_event_age/, 'quickstart status: shows the stats');

# a second start keeps what the first made
my $secret = HookTest::slurp("$var/secrets/demo");
$out = `$qs 2>&1`;
is($?, 0, 'quickstart: starts again') or diag $out;
unlike($out, qr/creating the PostgreSQL cluster/, 'quickstart: the cluster is kept');
is(HookTest::slurp("$var/secrets/demo"), $secret, 'quickstart: the secret is kept');
is(psql("select count(*) from hookinbox.inbox where event_id = '$id'"), 1, 'quickstart: the first event is still there, once');

$out = `$qs stop 2>&1`;
is($?, 0, 'quickstart stop: runs') or diag $out;
like($out, qr/worker stopped\nlighttpd stopped\npostgresql stopped/, 'quickstart stop: stops all three');
my @left;
for (1 .. 50) {
	@left = own_processes();
	last unless @left;
	select(undef, undef, undef, 0.1);
}
is(scalar(@left), 0, 'quickstart stop: nothing of its own left running') or diag `ps -o pid,args -p @left`;

done_testing();
