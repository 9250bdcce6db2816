# SPDX-License-Identifier: ISC
# The responder's two paths for pooled and replicated databases, small
# enough to run under the sanitizers too (80-83 are the heavy versions):
#
# 1. Through PgBouncer in transaction mode with ONE server connection and
#    three responder processes: the named statement one responder prepared
#    is missing, or already there, on the server connection its next
#    transaction gets.  Every delivery must still be answered 200 and
#    stored once, and the responder says once that it stopped naming it.
# 2. The database turns read-only (default_transaction_read_only, as a
#    primary being demoted): the responder must answer 503, not 500, and
#    make a new connection, which target_session_attrs=read-write refuses
#    while the server stays read-only; once it is writable again, 200.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::HA;
use HookTest::Load;
use HookTest::PgBouncer;
use JSON::PP;
use Time::HiRes qw(sleep);

my $secret = 'whsec_store_paths_4f2e1d0c9b';
my $t = HookTest->new(endpoints => { st => { provider => 'stripe', secrets => [$secret] } }, no_lighttpd => 1);

sub deliver {
	my ($ev) = @_;
	my $body = encode_json({ id => $ev, object => 'event', type => 'invoice.paid', created => 1700000000,
		data => { object => { id => "in_$ev" } } });
	return $t->post('st', $body, { 'Stripe-Signature' => stripe_sig($secret, $body),
		'Content-Type' => 'application/json' });
}

SKIP: {
	skip 'pgbouncer is not installed (tools/install-deps)', 13 unless HookTest::PgBouncer::available();
	my $b = HookTest::PgBouncer->new(dir => $t->dir, pg => $t->pg, pool_size => 1)->start;
	HookTest::HA::configure($t, intake => $b->conninfo('hookinbox_intake'), worker => $b->conninfo('hookinbox_worker'));
	HookTest::HA::start_responders($t, 3);
	# three senders at once, so that every responder process connects
	my $load = HookTest::Load->new(dir => $t->dir, urls => [$t->url('st')], secret => $secret, tag => 'pool',
		max => 12)->start(senders => 3);
	$load->finish;
	my $r = $load->reconcile(sql => sub { $t->sql(@_) }, what => 'through a one-connection pool');
	is($r->{status}{503} // 0, 0, 'through a one-connection pool: no 503');
	like($t->responder_log, qr/prepared statements do not last between transactions/, 'the responder noticed');
	unlike($t->responder_log, qr/could not (?:store|prepare)/, 'and never failed a delivery for it');
	$t->{httpd}->stop;
	$b->stop;
}

# 2: read-only
HookTest::HA::configure($t, intake => $t->pg->conninfo('hookinbox_intake') . ' target_session_attrs=read-write',
	worker => $t->pg->conninfo('hookinbox_worker'));
HookTest::HA::start_responders($t, 1);
$t->{http} = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
is(deliver('evt_ro_1')->{status}, 200, 'writable: 200');
$t->sql('alter system set default_transaction_read_only = on');
$t->sql('select pg_reload_conf()');
sleep 0.5;
my $r = deliver('evt_ro_2');
is($r->{status}, 503, 'read-only: 503, not 500');
is($r->{headers}{'retry-after'}, 5, 'with Retry-After');
like($t->responder_log, qr/read-only transaction/, 'the server refused the write (SQLSTATE 25006)');
like($t->responder_log, qr/session is read-only/, 'and the responder made a new connection, refused as read-only');
is(deliver('evt_ro_3')->{status}, 503, 'still read-only: 503');
$t->sql('alter system reset default_transaction_read_only');
$t->sql('select pg_reload_conf()');
sleep 0.5;
is(deliver('evt_ro_2')->{status}, 200, 'writable again: the retried delivery is accepted');
is($t->sql("select count(*) from hookinbox.inbox where event_id in ('evt_ro_1', 'evt_ro_2', 'evt_ro_3')"), 2,
	'exactly the accepted deliveries are stored');
unlike($t->responder_log, qr/status=500/, 'no 500');

done_testing();
