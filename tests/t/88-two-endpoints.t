# SPDX-License-Identifier: ISC
# Stripe sends one evt_ to every endpoint of an account.  Two [endpoint]s
# sharing account and environment, each with its own route: each endpoint
# stores its own row, and each route gets the event at the downstream
# exactly once; a redelivery to either endpoint is still a duplicate of
# that endpoint's row.
use strict;
use warnings;
use Test::More;
use HookTest qw(stripe_sig);
use HookTest::Downstream;
use HookTest::Worker;
use JSON::PP;

my %secret = (a => 'whsec_two_endpoints_a_0123456789', b => 'whsec_two_endpoints_b_9876543210');
my $tmpd = File::Temp::tempdir('ds-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = HookTest::Downstream->new(dir => $tmpd);
my $t = HookTest::Worker::setup(
	endpoints => {
		map { $_ => { provider => 'stripe', secrets => [$secret{$_}], account => 'acct_88',
			environment => 'live' } } qw(a b)
	},
	routes => {
		ra => { endpoint => 'a', url => $d->url('/a'), timeout => 2 },
		rb => { endpoint => 'b', url => $d->url('/b'), timeout => 2 },
	},
	extra => { no_lighttpd => 0 },
);

sub stripe {
	my ($ep, $body) = @_;
	return $t->post($ep, $body, { 'Stripe-Signature' => stripe_sig($secret{$ep}, $body),
		'Content-Type' => 'application/json' });
}

my $body = '{"id":"evt_88two","type":"invoice.paid","data":{"object":{"id":"in_88"}}}';
my $ra = stripe('a', $body);
my $rb = stripe('b', $body);
is($ra->{json}{duplicate}, JSON::PP::false, 'endpoint a: stored');
is($rb->{json}{duplicate}, JSON::PP::false, 'endpoint b: the same event is stored too, not a duplicate');
isnt($rb->{json}{id}, $ra->{json}{id}, 'each its own row');
is($t->sql(q{select string_agg(endpoint || ':' || account || ':' || environment || ':' || event_id, ','
	order by endpoint) from hookinbox.inbox}), 'a:acct_88:live:evt_88two,b:acct_88:live:evt_88two',
	'two rows in PostgreSQL, one per endpoint, under one account and environment');

# redeliveries to either endpoint
for my $x ([a => $ra], [b => $rb]) {
	my ($ep, $first) = @$x;
	my $r = stripe($ep, $body);
	is($r->{json}{duplicate}, JSON::PP::true, "a redelivery to $ep: a duplicate");
	is($r->{json}{id}, $first->{json}{id}, "of $ep\'s own row");
}
is($t->sql(q{select count(*) from hookinbox.inbox}), 2, 'still two rows');

HookTest::Worker::drain($t, timeout => 30);
# and redelivered once more after the fan-out: nothing new
stripe($_, $body) for qw(a b);
HookTest::Worker::drain($t, timeout => 10);
my %calls;
$calls{"$_->{path} $_->{event_id}"} += $_->{effect} for $d->requests;
is_deeply(\%calls, { '/a evt_88two' => 1, '/b evt_88two' => 1 },
	'each endpoint\'s route got the event at the downstream exactly once') or diag explain \%calls;
is($t->sql(q{select string_agg(route || ':' || state, ',' order by route) from hookinbox.action}), 'ra:done,rb:done',
	'one action per route, done');

done_testing();
