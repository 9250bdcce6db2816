# SPDX-License-Identifier: ISC
# Two programs, two credentials, one file: the responder connects with
# [database] conninfo (hookinbox_intake), the worker with [worker] conninfo
# (hookinbox_worker).  --check --connect proves each role has what its
# program needs (a worker pointed at the intake role is refused with 78
# before it runs, not after a run that did nothing); a database that cannot
# be reached is 75, a schema missing or too old 78.  A run that goes well
# prints nothing (cron mails only failures); a failure prints one line and
# exits non-zero.  A reload with a conninfo libpq cannot parse keeps the
# running configuration, and deliveries go on.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::Downstream;
use Time::HiRes qw(sleep time);

my $top = HookTest::top();
my $secret = 'whsec_two_programs_0123456789';
my $t = HookTest->new(endpoints => { shop => { provider => 'stripe', secrets => [$secret] } },
	routes => { out => { endpoint => 'shop', url => 'http://127.0.0.1:1/placeholder', timeout => 2 } },
	worker => { lease => 5 }, procs => 1);
my $d = HookTest::Downstream->new(dir => $t->dir);
my $conf = $t->config;
my $text = HookTest::slurp($conf);
my $intake = $t->pg->conninfo('hookinbox_intake');
my $workerc = $t->pg->conninfo('hookinbox_worker');

# the config as an operator writes it: the worker's own conninfo in [worker]
sub write_conf {
	my ($worker_conninfo, %o) = @_;
	my $c = $text;
	$c =~ s{^\[worker\]\n}{[worker]\nconninfo = $worker_conninfo\n}m or die 'no [worker]';
	$c =~ s{http://127\.0\.0\.1:1/placeholder}{@{[ $d->url('/hooks') ]}};
	$c =~ s{^conninfo = \Q$intake\E$}{conninfo = $o{database}}m if $o{database};
	open my $fh, '>', "$conf.tmp" or die $!;
	print $fh $c;
	close $fh;
	rename "$conf.tmp", $conf or die $!;
}
write_conf($workerc);

my $fcgi = "$top/obj/test/hookinbox.fcgi";
my $worker = "$top/obj/test/hookinbox-worker";

# ---- --check --connect: each program, its own role
my ($rc, $out) = HookTest::run_status($fcgi, '-c', $conf, '--check', '--connect');
is($rc, 0, 'responder --check --connect: ok') or diag $out;
like($out, qr/database: connected as "hookinbox_intake"/, 'the responder connects as hookinbox_intake');
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--check', '--connect');
is($rc, 0, 'worker --check --connect: ok') or diag $out;
like($out, qr/connects with \[worker\] conninfo\).*connected as "hookinbox_worker"/, 'the worker connects as hookinbox_worker');

# a likely mistake: the worker pointed at the intake role
write_conf($intake);
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--check', '--connect');
is($rc, 78, 'worker --check --connect as hookinbox_intake: 78');
like($out, qr/\Q$conf\E: role "hookinbox_intake" lacks SELECT and UPDATE on hookinbox\.inbox/, 'and says which role lacks what');
is(scalar(() = $out =~ /\n/g), 1, 'in one line');

# the database cannot be reached: 75; the schema missing or too old: 78
(my $down = $workerc) =~ s/port=\d+/port=1/;
write_conf($down);
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--check', '--connect');
is($rc, 75, 'worker --check --connect, database unreachable: 75');
like($out, qr/could not connect to the database/, 'and says so');
$t->pg->psql_raw('postgres', 'postgres', 'create database empty');
(my $empty = $t->pg->conninfo('postgres')) =~ s/dbname=\S+/dbname=empty/;
write_conf($workerc, database => $empty);
($rc, $out) = HookTest::run_status($fcgi, '-c', $conf, '--check', '--connect');
is($rc, 78, 'responder --check --connect, no schema: 78');
like($out, qr/the schema hookinbox is not installed/, 'and says so');
# as a role that can read the schema version (the admin): a schema older than the build
write_conf($t->pg->conninfo('hookinbox_admin'));
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--check', '--connect');
like($out, qr/schema at version (\d+)/, 'the admin role reads the schema version') or diag $out;
my ($v) = $out =~ /schema at version (\d+)/;
$t->sql("alter table hookinbox.schema_migrations disable trigger all");
$t->sql("update hookinbox.schema_migrations set version = version + 1000 where version = $v");
$t->sql("delete from hookinbox.schema_migrations where version = $v + 1000");
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--check', '--connect');
is($rc, 78, 'schema older than the program: 78');
like($out, qr/the schema is at version @{[ $v - 1 ]}, this program needs $v/, 'and says which versions');
$t->sql("insert into hookinbox.schema_migrations (version, name) values ($v, 'restored')");

# ---- quiet when well, one line when not
write_conf($workerc);
my $body = '{"id":"evt_quiet_1","type":"invoice.paid","created":1}';
my $r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig($secret, $body) });
is($r->{status}, 200, 'a delivery is accepted');
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--once');
is($rc, 0, 'worker run: exit 0');
is($out, '', 'a run that went well prints nothing');
is(scalar(grep { ($_->{event_id} // '') eq 'evt_quiet_1' } $d->requests), 1, 'and delivered the event downstream');
is($t->sql(q{select state from hookinbox.action}), 'done', 'the action is done');
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--once', '-v');
like($out, qr/event=summary /, '-v: the summary line');
write_conf($down);
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--once');
is($rc, 75, 'worker run, database unreachable: 75');
like($out, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ hookinbox-worker: error: could not connect to the database/, 'one clear line, with its time');
is(scalar(() = $out =~ /\n/g), 1, 'only one');

# ---- --health-check --nagios: the plugin convention (0 OK, 2 CRITICAL, perfdata)
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--health-check', '--nagios');
is($rc, 2, '--nagios, database unreachable: 2 (CRITICAL)');
like($out, qr/^HOOKINBOX CRITICAL - unavailable: could not connect to the database$/m, 'the status word first (the reason on stderr)');
write_conf($workerc);
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--health-check', '--nagios');
is($rc, 0, '--nagios, healthy: 0 (OK)') or diag $out;
like($out, qr/^HOOKINBOX OK - ok: .* \| pending_event_age=0s;;900 pending_action_age=0s;;900 parked_action_age=0s;;86400 held_delivery_age=0s;;86400$/,
	'OK with performance data and the thresholds');
$body = '{"id":"evt_old_1","type":"invoice.paid","created":1}';
$t->post('shop', $body, { 'Stripe-Signature' => stripe_sig($secret, $body) });
$t->sql(q{update hookinbox.inbox set received_at = now() - interval '1000 seconds' where event_id = 'evt_old_1'});
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--health-check', '--nagios');
is($rc, 2, '--nagios, an event pending for 1000 s: 2 (CRITICAL)');
like($out, qr/^HOOKINBOX CRITICAL - unhealthy: oldest pending event is 10\d\d s old \(endpoint "shop"\), over 900 s \| pending_event_age=10\d\ds;;900 /,
	'says which and how old, with performance data');
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--health-check');
is($rc, 1, 'without --nagios: 1 (unhealthy), as before');
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--nagios');
is($rc, 64, '--nagios without --health-check: usage error');
($rc, $out) = HookTest::run_status($worker, '-c', $conf, '--once');
is($rc, 0, 'a run delivers it');
write_conf($down);

# ---- reload with a conninfo libpq cannot parse: refused, deliveries go on
write_conf($workerc);
my @pids = $t->httpd->signalable_responders(60);
ok(@pids >= 1, 'the responder processes');
(my $bad = HookTest::slurp($conf)) =~ s/^conninfo = \Q$intake\E$/conninfo = host=\/tmp 'unterminated/m;
open my $fh, '>', $conf or die $!;
print $fh $bad;
close $fh;
kill 'HUP', @pids;
my $until = time + 20;
sleep 0.1 until $t->responder_log =~ /configuration not reloaded/ || time > $until;
like($t->responder_log, qr/\[database\] conninfo cannot be parsed by libpq.*\n.*configuration not reloaded/,
	'the reload is refused: the conninfo cannot be parsed');
$body = '{"id":"evt_after_hup","type":"invoice.paid","created":1}';
$r = $t->post('shop', $body, { 'Stripe-Signature' => stripe_sig($secret, $body) });
is($r->{status}, 200, 'the running configuration serves on');
is($t->sql(q{select count(*) from hookinbox.inbox where event_id = 'evt_after_hup'}), 1, 'and stores');
done_testing();
