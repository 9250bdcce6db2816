# SPDX-License-Identifier: ISC
# Many hosts: two responders and two workers, each in its own network
# namespace with its own address, reaching one PostgreSQL over its veth
# pair (TCP, no shared socket or file).  Signed load alternates between the
# two responder hosts and every third delivery is redelivered to the other
# one; meanwhile the worker hosts run --once rounds at the same time.
# Routes: an HTTP route, an ordered route (order = object) with several
# events per object, and an SQL handler.
#
# The single-host invariants hold: one row per delivery key under the id
# every 2xx carried, a redelivery to the other host answered duplicate,
# one downstream effect per idempotency key, no older version of an object
# applied after a newer one, each event applied once by the SQL handler.
use strict;
use warnings;
use Test::More;
use File::Copy ();
use Time::HiRes qw(sleep time);
use HookTest;
use HookTest::HA;
use HookTest::Load;
use HookTest::Netns;
use HookTest::Downstream;

plan skip_all => 'heavy, and built with a sanitizer: the responder paths it reaches run under the sanitizers in 84'
	if HookTest::HA::sanitized();
if (my $why = HookTest::Netns::unavailable()) {
	plan skip_all => "network namespaces cannot be made here: $why";
}

my $secret = 'whsec_manyhosts_test_0a9b8c7d6e';
my @HOSTS = qw(ra rb wa wb);   # responder hosts, worker hosts
my $net = HookTest::Netns->new(hosts => \@HOSTS);
# the worker hosts reach the downstream (loopback here) through a relay
my ($t, $d) = HookTest::HA::setup(secret => $secret,
	url => sub { 'http://' . $net->gateway($HOSTS[0]) . ':' . $net->relay(port => $_[0]->port) },
	routes => { ord => { endpoint => 'st', path => '/ord', timeout => 3, order => 'object' } },
	intake => { threads => 4 },
	pg => { extra => "listen_addresses = '" . join(',', $net->gateways) . "'\n" });
my $pg = $t->pg;
open my $hba, '>>', "$pg->{data}/pg_hba.conf" or die $!;
print $hba "host hookinbox hookinbox_intake,hookinbox_worker " . $net->subnet . " trust\n";
close $hba;
$t->sql('select pg_reload_conf()');
my $sql = sub { $t->sql(@_) };

# each host its own configuration: PostgreSQL at its own gateway address
my %conf;
for my $h (@HOSTS) {
	my $role = $h =~ /^r/ ? 'hookinbox_intake' : 'hookinbox_worker';
	HookTest::HA::configure($t, intake => "host=" . $net->gateway($h) . " port=$pg->{port} dbname=hookinbox "
		. "user=$role", worker => "host=" . $net->gateway($h) . " port=$pg->{port} dbname=hookinbox user=$role");
	my $path = $t->dir . "/$h.conf";
	File::Copy::copy($h =~ /^r/ ? $t->config : HookTest::HA::worker_config($t), $path) or die $!;
	$conf{$h} = $path;
}
my %httpd;
for my $h (grep { /^r/ } @HOSTS) {
	my $hd = $t->dir . "/$h";
	mkdir $hd;
	chmod 0755, $hd;
	$httpd{$h} = HookTest::Netns::Lighttpd->new(netns => $net, host => $h, dir => $hd,
		fcgi => HookTest::top() . '/obj/test/hookinbox.fcgi', config => $conf{$h}, procs => 2)->start;
}

# one worker on each worker host at a time, each with its own configuration
my @worker_hosts = map { [[$net->wrap($_)], $conf{$_}] } grep { /^w/ } @HOSTS;

my $urls = [map { $httpd{$_}->url . '/st' } sort keys %httpd];
like($urls->[0], qr{^http://10\.}, 'the responders answer on their own hosts\' addresses');
my $load = HookTest::Load->new(dir => $t->dir, urls => $urls, secret => $secret, tag => 'mh', objects => 7)
	->start(senders => 6);
my $rounds = HookTest::HA::rounds_bg($t, 0, hosts => \@worker_hosts);
my $until = time() + 4;
sleep 0.2 while time() < $until;
$load->stop;
my ($runs, $failed, $wlog) = HookTest::HA::stop_rounds($rounds);
my $r = $load->reconcile(sql => $sql, what => 'two responder hosts');
is($r->{status}{503} // 0, 0, 'no 503');
is($failed, 0, "worker runs on both worker hosts exit 0 ($runs runs)") or diag($wlog =~ /(.*error.*)/g);

# every worker run after the load, still one per worker host at a time
my ($f, $l) = HookTest::HA::drain($t, 0, hosts => \@worker_hosts, sql => $sql);
$wlog .= $l;
$failed += $f;
my $left = $t->sql("select (select count(*) from hookinbox.action where state = 'pending')"
	. " + (select count(*) from hookinbox.inbox where state = 'pending')");
is($left, 0, 'the worker hosts drained everything');
is($failed, 0, 'no worker run failed');
my @sent = $wlog =~ /event=summary .*? sent=(\d+)/g;
cmp_ok(scalar(grep { $_ > 0 } @sent), '>=', 2, 'the work was shared');
HookTest::Load::check_worker(sql => $sql, downstream => $d, tag => 'mh', routes => ['down'],
	sql_table => 'app.applied', what => 'two worker hosts');
HookTest::Load::check_order(sql => $sql, downstream => $d, tag => 'mh', route => 'ord', what => 'two worker hosts');

# who talked to PostgreSQL: the hosts' addresses, not loopback
my %peers = map { $_ => 1 } split /\n/, $t->sql("select distinct host(client_addr) from pg_stat_activity "
	. "where usename = 'hookinbox_intake'");
ok($peers{ $net->addr('ra') } && $peers{ $net->addr('rb') }, 'both responder hosts hold connections, from their own addresses')
	or diag(join ' ', keys %peers);
my @served = map { my $h = $_; scalar(() = HookTest::slurp($httpd{$h}{dir} . '/responder.log') =~ /status=200/g) } sort keys %httpd;
ok((grep { $_ > 0 } @served) == 2, "both responder hosts answered (@served)");

$_->stop for values %httpd;
$net->remove;
done_testing();
