# SPDX-License-Identifier: ISC
# Model::Invariants - the promises of hookinbox, one function
# each.  Each takes the model (Model.pm) and returns the violations it
# found, as strings (none when it held).  cheap => 1: also checked along
# the way (every 25 operations), not only after the drain; when => a
# function of the model: checked only when it returns true.
#
# What they read: the model's record of every delivery and its answer
# ($m->{dl}, $m->{ev}), the database (as superuser), the downstream's
# log of every request ($m->ds->requests), an audit of every claim
# (model.claim, filled by a trigger on hookinbox.action, written by this
# file), the SQL handler's effects (model_app.effect) and what each
# purge.sql run removed ($m->{purged}, $m->{purge_bad}).
package Model::Invariants;

use strict;
use warnings;

# seconds of slack for comparing the downstream's clock with the database's
my $SLACK = 0.25;

# States, in one place:
# an inbox row that has settled (invariant 3); inbox rows and actions that
# are finished, which purge.sql may remove (invariant 8: it must keep
# everything else).
our @INBOX_SETTLED = qw(dispatched review dismissed);
our @INBOX_FINISHED = qw(dispatched unrouted dismissed);
our @ACTION_FINISHED = qw(done stale dismissed resolved);

# how long each provider retries or lets a delivery be re-sent, in days
# (docs/providers.md): a purge.sql below it lets a redelivery be stored again
our %REPLAY_HORIZON_DAYS = (st => 3, gh => 3, ac => 3, sh => 2, tw => 1, tp => 3, hs => 1);

# n: the invariant's number (each function below starts with it).
sub table {
	return (
		{ n => 1, name => 'one row per accepted event', cheap => 1, check => \&one_row_per_event },
		{ n => 2, name => 'nothing rejected is stored', cheap => 1, check => \&nothing_rejected_stored },
		{ n => 3, name => 'every (event, route) reaches one final state', check => \&every_event_settles },
		{ n => 4, name => 'the database is the truth of what was sent', check => \&keys_match_downstream },
		{ n => 5, name => 'no call without a live lease', cheap => 1, check => \&calls_under_lease },
		{ n => 6, name => 'no older version after a newer one', cheap => 1, check => \&order_per_object },
		{ n => 7, name => 'SQL handler effects exactly once', check => \&handler_once },
		{ n => 8, name => 'purge keeps unfinished work', cheap => 1, check => \&purge_keeps_unfinished },
		{ n => 9, name => 'every signed delivery is stored in the end', check => \&signed_is_stored },
		{ n => 10, name => 'a looping worker outlives a database restart', cheap => 1, check => \&loop_survives,
			when => sub { $_[0]->defect('loop-exits-on-restart') } },
		{ n => 11, name => 'the operator\'s decisions hold', cheap => 1, check => \&decisions_hold },
		{ n => 12, name => 'retries and holds keep the documented bounds', cheap => 1, check => \&retry_rules },
		{ n => 13, name => 'a breaker opens only on a route that failed for 10 s', cheap => 1,
			check => \&breaker_dead_only },
		{ n => 14, name => 'order = sequence applies each object\'s versions in order', cheap => 1,
			check => \&sequence_in_order },
		{ n => 15, name => 'each route\'s key: one effect per event, or per object and type', check => \&keys_per_route },
		{ n => 16, name => 'every held, parked or blocked thing is in the metrics', cheap => 1,
			check => \&blocked_in_metrics },
		{ n => 17, name => 'a batch is stored whole, or not at all', cheap => 1, check => \&batch_whole },
		{ n => 18, name => 'every delivery is answered within 10 s', cheap => 1, check => \&answered_in_time },
		{ n => 19, name => 'a responder serves a schema older than itself', cheap => 1,
			check => \&older_schema_served },
	);
}

# The audit of claims: every new lease token on an action, with its real
# end (lease_until is the database's now() + lease; the clock moving
# forward shortens the leases still running, see Ops clock_forward), and
# every renewal of a lease under its token (renewal true); orig_until is
# the end the lease was taken or renewed with, which the clock leaves.
sub AUDIT_SQL {
	return q{
		create schema model;
		create table model.claim (action_id bigint, idem_key text, attempts int, token uuid,
			real_at timestamptz, real_until timestamptz, stmt_at timestamptz,
			orig_until timestamptz, renewal boolean);
		create function model.audit_claim() returns trigger language plpgsql security definer
		set search_path = pg_catalog as $$
		begin
			insert into model.claim values (new.id, new.idem_key, new.attempts, new.lease_token,
				clock_timestamp(), new.lease_until, statement_timestamp(), new.lease_until,
				new.lease_token is not distinct from old.lease_token);
			return null;
		end $$;
		create trigger model_audit_claim after update on hookinbox.action for each row
			when (new.lease_token is not null and (new.lease_token is distinct from old.lease_token
				or new.lease_until > old.lease_until))
			execute function model.audit_claim();
		create table model.breaker (route text, reason text, real_at timestamptz);
		create function model.audit_breaker() returns trigger language plpgsql security definer
		set search_path = pg_catalog as $$
		begin
			if new.breaker = 'open' and (tg_op = 'INSERT' or old.breaker <> 'open'
			   or old.reason is distinct from new.reason) then
				insert into model.breaker values (new.route, new.reason, clock_timestamp());
			end if;
			return null;
		end $$;
		create trigger model_audit_breaker after insert or update on hookinbox.route_state
			for each row execute function model.audit_breaker();
	};
}

# The SQL handler of route "app": one effect row per call, and a switch
# that makes it fail (the worker retries).
sub HANDLER_SQL {
	return q{
		create schema model_app;
		create table model_app.effect (idem_key text, action_id bigint, event_id text,
			at timestamptz default clock_timestamp());
		create table model_app.ctl (fail boolean not null);
		insert into model_app.ctl values (false);
		create function model_app.apply(e jsonb) returns void language plpgsql as $$
		begin
			if (select fail from model_app.ctl) then
				raise exception 'model: the handler was told to fail';
			end if;
			insert into model_app.effect (idem_key, action_id, event_id)
			values (e->>'idempotency_key', (e->>'action_id')::bigint, e->>'event_id');
		end $$;
		grant usage on schema model_app to hookinbox_worker;
		grant select on model_app.ctl to hookinbox_worker;
		grant insert on model_app.effect to hookinbox_worker;
		grant execute on function model_app.apply(jsonb) to hookinbox_worker;
	};
}

sub sqlq { my ($v) = @_; $v =~ s/'/''/g; return "'$v'" }

# rows of a query as arrays
sub rows {
	my ($m, $sql) = @_;
	my $out = $m->sql($sql);
	return map { [split /\|/, $_, -1] } grep { length } split /\n/, $out;
}

# 1. Every 2xx answered has exactly one inbox row with the id it carried,
# and that row is the event that was sent (its delivery key, its type);
# every duplicate answer carried the first id, and only the first answer
# of a row says "duplicate": false (README.md: "a redelivery answers 200
# with the first intake id and \"duplicate\": true"); two different events
# never share an id.  A row removed by purge.sql is allowed to be missing, and a
# redelivery after it to be stored again, unless the defect
# replay-after-purge is provoked (then the replay defence must outlive the
# purge).
sub one_row_per_event {
	my ($m) = @_;
	my @v;
	my %row = map { $_->[0] => $_ } rows($m, 'select id, endpoint, event_id, coalesce(event_type, \'\') from hookinbox.inbox');
	my (%ids_of, %owner, %fresh);
	for my $d (grep { defined $_->{got} && !$_->{bad} } @{ $m->{dl} }) {
		my $e = $m->{ev}{ $d->{L} };
		push @{ $ids_of{ $d->{L} } }, $d;
		push @{ $fresh{ $d->{got} } }, $d->{id} unless $d->{dup};
		if (defined $owner{ $d->{got} } && $owner{ $d->{got} } != $d->{L}) {
			push @v, sprintf('events %d and %d (%s) were both answered id %d', $owner{ $d->{got} }, $d->{L},
				"$e->{ep} $e->{type}", $d->{got});
		}
		$owner{ $d->{got} } //= $d->{L};
		my $r = $row{ $d->{got} };
		if (!$r) {
			push @v, "event $d->{L} ($e->{ep} $d->{id}) was answered id $d->{got}, which is not in the inbox"
				unless defined $m->{purged}{ $d->{got} };
			next;
		}
		if ($r->[1] ne $e->{ep} || !$e->{ids}{ $r->[2] } || (defined $e->{type} && $r->[3] ne $e->{type})) {
			push @v, "event $d->{L} ($e->{ep} $d->{id} $e->{type}) was answered id $d->{got}, "
				. "which holds $r->[1] $r->[2] $r->[3]";
		}
	}
	for my $got (sort { $a <=> $b } grep { @{ $fresh{$_} } > 1 } keys %fresh) {
		push @v, "intake id $got was answered as new (\"duplicate\": false) " . scalar(@{ $fresh{$got} })
			. " times (delivery ids @{ $fresh{$got} })";
	}
	my $strict = $m->defect('replay-after-purge');
	for my $L (sort { $a <=> $b } keys %ids_of) {
		my @a = @{ $ids_of{$L} };
		my @ids;
		for my $d (@a) { push @ids, $d->{got} unless grep { $_ == $d->{got} } @ids }
		next if @ids == 1;
		my @older = @ids[0 .. $#ids - 1];
		next if !grep { !purged_past_horizon($m, $_, $m->{ev}{$L}{ep}, $strict) } @older;
		push @v, "event $L ($m->{ev}{$L}{ep}) was answered ids @ids";
	}
	# one row per event: the rows under any delivery id the event was sent
	# with, holding its type.  A copy held for review carries a delivery id
	# it does not own (the genuine delivery of that id is stored too, with
	# its own type): one id may have several rows, so every row counts, and
	# only rows of the event's own type are its (seed 166894: the genuine
	# event's row purged, its body stored again under a fresh id, and the
	# held copy under its first id counted as its second row)
	my %by_key;
	push @{ $by_key{"$_->[1]\0$_->[2]"} }, $_ for values %row;
	for my $e (values %{ $m->{ev} }) {
		my @r = map { $_->[0] } grep { !defined $e->{type} || $_->[3] eq $e->{type} }
			map { @{ $by_key{"$e->{ep}\0$_"} // [] } } keys %{ $e->{ids} };
		@r = sort { $a <=> $b } @r;
		push @v, "event $e->{L} ($e->{ep}) has " . scalar(@r) . " inbox rows (ids @r)" if @r > 1;
	}
	return @v;
}

# whether an inbox row is gone by a purge that may let its event be stored
# again: any purge, unless the defect replay-after-purge is provoked (or
# fixed); then only a purge with a dedup_days past the provider's horizon
sub purged_past_horizon {
	my ($m, $id, $ep, $strict) = @_;
	return 0 unless defined $m->{purged}{$id};
	# the ledger (migration 010) remembers what a purge deleted
	return 0 if $m->defect('signed-ledger');
	return 1 unless $strict;
	return $m->{purged}{$id} >= ($REPLAY_HORIZON_DAYS{$ep} // 3);
}

# 2. Nothing rejected was stored: every badly signed delivery carries
# BADSIG in its id and body.
sub nothing_rejected_stored {
	my ($m) = @_;
	my @v;
	for my $d (grep { $_->{bad} && $_->{status} >= 200 && $_->{status} <= 299 } @{ $m->{dl} }) {
		push @v, "a badly signed $d->{ep} delivery ($d->{id}) was answered $d->{status}";
	}
	my $n = $m->sql(q{select count(*) from hookinbox.inbox where event_id like 'BADSIG%'
		or position('BADSIG'::bytea in coalesce(body, ''::bytea)) > 0});
	push @v, "$n inbox rows hold a badly signed delivery" if $n;
	return @v;
}

# 3. Every (event, route) reaches exactly one visible state; after the
# drain (healthy downstreams, the provider's retries answered, every parked
# action replayed by the operator) none is pending, and none that was
# replayed is parked again.  Routes are those of any worker's
# configuration: a route one configuration added later (ev2,
# OpsRoutes::routes_rolling) is owed every event fanned out after it was
# first registered (a fan-out that began within 2 s before may or may not
# have it) and none more than once.  clock_forward moves dispatched_at back
# but not worker_routes.first_seen (the workers compare configurations in
# the database's own time), so the registration is moved back by every
# hour the clock moved since it (ev2_offset: the offset then) before the
# two are compared: without that, a clock_forward after routes_rolling left
# every event it fanned out "owed 0 or 1", and a fan-out that never
# recorded anything for the top-up went unseen (mutant rolling-no-record).
sub every_event_settles {
	my ($m) = @_;
	my @v;
	my %routes_of;
	for my $r (keys %{ $m->{routes} }) { push @{ $routes_of{$_} }, $r for @{ $m->{routes}{$r} } }
	my %since = map { @$_ } rows($m, q{select split_part(l.line, '|', 1), extract(epoch from min(w.first_seen))
		from hookinbox.worker_routes w, regexp_split_to_table(w.routes, E'\n') l(line)
		where split_part(l.line, '|', 1) = 'ev2' group by 1});
	$since{ev2} -= $m->{offset} - ($m->{ev2_offset} // $m->{offset}) if defined $since{ev2};
	my %fanned = map { @$_ } rows($m, q{select id, extract(epoch from dispatched_at) from hookinbox.inbox
		where dispatched_at is not null});
	my %acts;
	for my $a (rows($m, 'select inbox_id, route, state, id, coalesce(last_error, \'\') from hookinbox.action')) {
		push @{ $acts{ $a->[0] }{ $a->[1] } }, $a;
	}
	# an action that collapsed into another event's (same route and key: a
	# released held copy under the id of the genuine event) is its outcome
	push @{ $acts{ $_->[0] }{ $_->[1] } }, [@$_[0, 1], 'done', 0, '']
		for rows($m, 'select inbox_id, route from hookinbox.action_collapse');
	for my $i (rows($m, 'select id, endpoint, state from hookinbox.inbox')) {
		my ($id, $ep, $state) = @$i;
		if (!grep { $_ eq $state } @INBOX_SETTLED) {
			push @v, "inbox row $id ($ep) is $state";
			next;
		}
		next if $state ne 'dispatched';
		for my $r (@{ $routes_of{$ep} // [] }) {
			my $n = scalar @{ $acts{$id}{$r} // [] };
			if ($r eq 'ev2') {
				my $owed = defined $since{$r} && ($fanned{$id} // 0) > $since{$r} + 2;
				push @v, "inbox row $id ($ep) has $n actions on route $r, added later (owed "
					. ($owed ? 1 : '0 or 1') . ')' if $n > 1 || ($owed && $n != 1);
				next;
			}
			push @v, "inbox row $id ($ep) has $n actions on route $r" if $n != 1;
		}
	}
	for my $a (map { @$_ } map { values %$_ } values %acts) {
		my ($iid, $route, $state, $id, $err) = @$a;
		push @v, "action $id ($route) is still $state" if $state eq 'pending';
		push @v, "action $id ($route) was replayed and parked again: $err"
			if $state eq 'parked' && $m->{drain_replayed}{$id};
	}
	return @v;
}

# 4. The downstream saw every key the database says was sent (every done
# action of an HTTP route was answered 2xx), and no key the database does
# not know; a key answered 2xx belongs to a done action (not parked, not
# pending; stale only when the worker died or lost its lease between the
# 2xx and its record, and a newer version was claimed after: the outcome
# was never learned and the order held, which invariant 6 checks); no key was called while another call with that key
# was still in flight (a call is in flight until it is answered or the
# route's timeout ends it), unless an immediate stop of PostgreSQL came
# between them (see crashed_between).
sub keys_match_downstream {
	my ($m) = @_;
	my @v = @{ $m->{truth_bad} // [] };
	my @req = $m->ds->requests;
	my %act = map { $_->[0] => $_ } rows($m, q{select idem_key, state, route, id, coalesce(last_error, '') from hookinbox.action
		where route in ('ord', 'ev', 'ev2', 'seq', 'biz')});
	my (%ok, %by_key);
	for my $r (@req) {
		next unless defined $r->{key};
		push @{ $by_key{ $r->{key} } }, $r;
		$ok{ $r->{key} }++ if $r->{status} >= 200 && $r->{status} <= 299;
		if (!$act{ $r->{key} } && !defined $m->{purged_keys}{ $r->{key} } && !$m->{old_keys}{ $r->{key} }) {
			push @v, "the downstream was called with key $r->{key}, unknown to the database";
		}
	}
	for my $a (values %act) {
		my ($key, $state, $route, $id, $error) = @$a;
		push @v, "action $id ($route) is done but the downstream never answered its key 2xx"
			if $state eq 'done' && !$ok{$key};
		next unless $state ne 'done' && $state ne 'stale' && $ok{$key};
		# parked (or then dismissed or resolved by the operator) after a call
		# whose outcome the worker recorded as unknown (a timeout, the
		# retry window then exhausted) or never recorded (its worker died,
		# then the attempts ran out), or after a late abandoned request
		# (applied_late): the database does not claim it was not applied
		next if ($state eq 'parked' || $state eq 'dismissed' || $state eq 'resolved')
			&& ($error =~ /outcome unknown|without a recorded outcome/ || applied_late($by_key{$key}));
		push @v, "action $id ($route) is $state ($error) but the downstream applied it; " . history($m, $key, $by_key{$key});
	}
	my $timeout = $m->{call_timeout};
	for my $key (sort keys %by_key) {
		my @c = grep { !$_->{inprogress} } @{ $by_key{$key} };
		for my $i (1 .. $#c) {
			my $prev = $c[ $i - 1 ];
			my $busy = $prev->{delay} // 0;
			$busy = $timeout if $busy > $timeout;
			next if crashed_between($m, $prev->{t}, $c[$i]{t});
			if ($c[$i]{t} < $prev->{t} + $busy - 0.1) {
				push @v, sprintf('key %s was called (attempt %s) %.2f s after a call (attempt %s) '
					. 'still in flight for %.2f s', $key, $c[$i]{attempt} // '?', $c[$i]{t} - $prev->{t},
					$prev->{attempt} // '?', $busy);
			}
		}
		my @in = grep { $_->{inprogress} } @{ $by_key{$key} };
		for my $r (@in) {
			# the first call with that key was still being answered: was it
			# still in flight for the worker, or abandoned at the timeout?
			my ($first) = grep { $_->{seq} < $r->{seq} && defined $_->{delay} && $_->{delay} > 0 }
				reverse @{ $by_key{$key} };
			next unless $first;
			next if crashed_between($m, $first->{t}, $r->{t});
			next if $r->{t} >= $first->{t} + ($first->{delay} > $timeout ? $timeout : $first->{delay}) - 0.1;
			push @v, sprintf('key %s: a second call arrived %.2f s into a call still in flight; ',
				$key, $r->{t} - $first->{t}) . history($m, $key, $by_key{$key});
		}
	}
	my $dup = 0;
	for my $key (keys %by_key) {
		my $eff = 0;
		$eff += $_->{effect} for @{ $by_key{$key} };
		$dup++ if $eff > 1;
	}
	push @v, "$dup keys had more than one effect" if $dup;
	return @v;
}

# Whether the 2xx that applied a key came from an abandoned request: an
# earlier attempt's, which the worker gave up on at its timeout (outcome
# unknown) and the downstream handled only after it had answered a later
# attempt with a 4xx.  This is what seed 2 found beside the whole suite
# (invariant 4: actions of route ev, plan 422 then 200, parked although
# applied): the downstream server is one process; stalled longer than the
# route's timeout and the first backoff (a loaded machine), it finds both
# requests waiting at once and handles them in no set order (Perl's hash
# order over its connections), so attempt 2 may get the plan's 422 and
# attempt 1, from a connection already closed, the 200 and the effect.  A
# real downstream with concurrent handlers or a queue in front does the
# same.  The worker parks on a 4xx it got, and cannot know better: the
# earlier attempt's outcome was unknown, which is what reconcile_url is for
# (no route here has one); the operator's replay sends the same key and
# gets the stored 2xx.  So the model, not the product, was wrong to call
# it a violation.  Reproduced on its own by SIGSTOPping the downstream for
# 5 s under a --loop worker (route timeout 2 s): 4 of 6 events.
sub applied_late {
	my ($calls) = @_;
	my @c = @{ $calls // [] };
	for my $ok (grep { $_->{status} >= 200 && $_->{status} <= 299 && !$_->{replay} } @c) {
		# a 4xx that parks (not 408, 409, 425, 429: those are retried)
		return 1 if grep { my $st = $_->{status}; $st >= 400 && $st <= 499
			&& !grep({ $st == $_ } 408, 409, 425, 429) && $_->{seq} < $ok->{seq}
			&& ($_->{attempt} // 0) > ($ok->{attempt} // 0) } @c;
	}
	return 0;
}

# An immediate stop of PostgreSQL between a call and a later one may have
# lost the worker's asynchronous commits (the claim, the lease extended for
# the call): the documented price is repeated work with the same key, which
# can then overlap a call still in flight (the downstream answers 409).
sub crashed_between {
	my ($m, $t1, $t2) = @_;
	return scalar grep { $_ >= $t1 - 10 && $_ <= $t2 } @{ $m->{immediate} };
}

# what happened to a key: its claims and the calls the downstream saw
sub history {
	my ($m, $key, $calls) = @_;
	my @ev;
	for my $c (rows($m, 'select extract(epoch from real_at), attempts, extract(epoch from real_until) '
		. 'from model.claim where idem_key = ' . sqlq($key))) {
		push @ev, [$c->[0], sprintf('claim attempt %d lease %.1f s', $c->[1], $c->[2] - $c->[0])];
	}
	push @ev, [$_->{t}, "call attempt $_->{attempt} -> $_->{status}"] for @{ $calls // [] };
	@ev = sort { $a->[0] <=> $b->[0] } @ev;
	my $t0 = @ev ? $ev[0][0] : 0;
	return join '; ', map { sprintf('+%.2f %s', $_->[0] - $t0, $_->[1]) } @ev;
}

# 5. No call was made without a live lease: every call the downstream saw
# (key, attempt, arrival time) falls inside a lease of a claim of that
# action with that attempt number, and, as docs/worker.md states it, "a
# call starts only under a lease that outlives its timeout": its arrival
# plus the route timeout (2 s, the shortest any variant has) within the
# end that lease was taken or last renewed with.  A claim may be missing only when an
# immediate stop of PostgreSQL after the call may have lost it (the
# worker's commits are asynchronous).  And --check refuses a route
# timeout as long as the lease (OpsRoutes::route_key_refused, $m->{lease_bad}).
sub calls_under_lease {
	my ($m) = @_;
	my @v = @{ $m->{lease_bad} // [] };
	# the calls first: a call's claim committed before it was made, so it
	# is in the audit read afterwards, while background workers still run
	# (read the other way round, a claim committed between the two reads
	# looks missing: seed 33 at 200 operations)
	my @calls = $m->ds->requests;
	my %claims;
	for my $c (rows($m, q{select idem_key, attempts, extract(epoch from real_at), extract(epoch from real_until),
		extract(epoch from orig_until) from model.claim order by real_at})) {
		push @{ $claims{"$c->[0]\0$c->[1]"} }, $c;
	}
	for my $r (@calls) {
		next unless defined $r->{key} && defined $r->{attempt};
		my @c = grep { $_->[2] <= $r->{t} + $SLACK } @{ $claims{"$r->{key}\0$r->{attempt}"} // [] };
		if (!@c) {
			next if grep { $_ > $r->{t} } @{ $m->{immediate} };
			push @v, "call $r->{seq} (key $r->{key}, attempt $r->{attempt}) matches no claim";
			next;
		}
		my $late = $r->{t} - $c[-1][3];
		push @v, sprintf('call %d (key %s, attempt %s) arrived %.2f s after its lease ended',
			$r->{seq}, $r->{key}, $r->{attempt}, $late) if $late > $SLACK;
		my $short = $r->{t} + $Model::ROUTE_TIMEOUT - $c[-1][4];
		push @v, sprintf('call %d (key %s, attempt %s) started with %.2f s of its lease left, '
			. 'under its route timeout of %d s', $r->{seq}, $r->{key}, $r->{attempt},
			$Model::ROUTE_TIMEOUT - $short, $Model::ROUTE_TIMEOUT) if $late <= $SLACK && $short > $SLACK;
	}
	return @v;
}

# 6. On the ordered route, the downstream never applied an older version
# of an object after a newer one (effects in arrival order), nor one
# version of an object twice (under two keys).  And the database says
# which action produced each state (docs/worker.md, sql/event.sql): an
# object's state names an action of its route and object at the applied
# version, and every stale action names one of its route and object with
# a newer version (an action purge.sql removed is not judged).
sub order_per_object {
	my ($m) = @_;
	my @v;
	my %ver = map { ($_->{event_id} => $_) } grep { $_->{ep} eq 'st' } values %{ $m->{ev} };
	my (%newest, %applied);
	for my $r (grep { $_->{path} eq '/ord' && $_->{effect} } $m->ds->requests) {
		my $e = $ver{ $r->{event_id} // '' } or next;
		my $o = $e->{object};
		# at most one effect per object and version (an equal version is
		# held for review, README "Order"): two keys applied are two effects
		my $k = "$o\0$e->{version}";
		# (unless purge.sql removed the first: no action is left to hold
		# an equal version for review, as a forced purge did in random
		# seed 181502)
		if (defined $applied{$k} && $applied{$k}[0] ne $r->{key}
			&& !defined $m->{purged_keys}{ $applied{$k}[0] }) {
			push @v, "object $o: version $e->{version} applied twice ($applied{$k}[1] and $e->{event_id})";
		}
		$applied{$k} //= [$r->{key}, $e->{event_id}];
		if (defined $newest{$o} && $e->{version} < $newest{$o}[0]) {
			push @v, "object $o: version $e->{version} ($e->{event_id}) applied after "
				. "$newest{$o}[0] ($newest{$o}[1])";
		}
		$newest{$o} = [$e->{version}, $e->{event_id}] if !defined $newest{$o} || $e->{version} > $newest{$o}[0];
	}
	for my $r (rows($m, q{select o.route, o.object_id, o.applied_version, coalesce(o.action_id::text, 'none'),
		coalesce(a.route || ' ' || a.object_id || ' v' || a.event_version, '')
		from hookinbox.object_state o left join hookinbox.action a on a.id = o.action_id
		where o.action_id is null or (a.id is not null and (a.route <> o.route
		      or a.object_id is distinct from o.object_id or a.event_version is distinct from o.applied_version))})) {
		push @v, sprintf('route %s object %s: its state (version %s) names action %s (%s)', @$r);
	}
	for my $r (rows($m, q{select s.id, s.route, s.object_id, s.event_version, coalesce(s.superseded_by::text, 'none'),
		coalesce(a.route || ' ' || a.object_id || ' v' || a.event_version, '')
		from hookinbox.action s left join hookinbox.action a on a.id = s.superseded_by
		where s.state = 'stale' and (s.superseded_by is null or (a.id is not null and (a.route <> s.route
		      or a.object_id is distinct from s.object_id or a.event_version <= s.event_version)))})) {
		push @v, sprintf('stale action %s (route %s object %s v%s) superseded by action %s (%s)', @$r);
	}
	return @v;
}

# 7. Every SQL-handler effect happened exactly once per action that is
# done, and never for an action that is not.  An effect of an action that
# purge.sql deleted is one of that action; when the event is delivered
# again after the purge, its new action applies it again (the same key),
# which is the known defect replay-after-purge: flagged only when provoked.
sub handler_once {
	my ($m) = @_;
	my @v;
	for my $r (rows($m, q{select a.id, a.state, count(e.action_id) from hookinbox.action a
		left join model_app.effect e on e.action_id = a.id where a.route = 'app' group by 1, 2})) {
		my ($id, $state, $n) = @$r;
		my $want = $state eq 'done' ? 1 : 0;
		push @v, "handler action $id is $state with $n effects" if $n != $want;
	}
	my $strict = $m->defect('replay-after-purge');
	for my $r (rows($m, q{select e.idem_key, count(*), count(*) filter (where a.id is null)
		from model_app.effect e left join hookinbox.action a on a.id = e.action_id group by 1})) {
		my ($key, $n, $gone) = @$r;
		my $dd = $m->{purged_keys}{$key};
		push @v, "handler key $key had $n effects"
			if $n > 1 && (!defined $dd || ($strict && $dd < $REPLAY_HORIZON_DAYS{st}));
		push @v, "handler key $key: $gone effects of actions that are not there and were not purged"
			if $gone && !defined $dd;
	}
	return @v;
}

# 8. Nothing parked, in review, pending or retrying was deleted or stripped
# by a purge (checked on each purge.sql run by Ops purge, from the rows
# before and after).
sub purge_keeps_unfinished {
	my ($m) = @_;
	return @{ $m->{purge_bad} };
}

# 9. Every validly signed delivery is stored in the end: the provider
# retries a 5xx or an unanswered request (the drain does), and a signed
# delivery is never refused for good.
sub signed_is_stored {
	my ($m) = @_;
	my @v;
	my %stored;
	for my $d (@{ $m->{dl} }) {
		next if $d->{bad};
		$stored{ $d->{L} } = 1 if defined $d->{got};
		push @v, "a signed $d->{ep} delivery ($d->{id}) was refused $d->{status}"
			if $d->{status} >= 400 && $d->{status} < 500;
	}
	for my $e (values %{ $m->{ev} }) {
		push @v, "event $e->{L} ($e->{ep} $e->{type}) was never stored" unless $stored{ $e->{L} };
	}
	push @v, scalar(@{ $m->{retry} }) . ' deliveries still unanswered after the retries' if @{ $m->{retry} };
	return @v;
}

# 11. The operator's decisions hold (sql/dismiss.sql, resolve.sql,
# review.sql, route.sql; Model/Ops.pm): a dismissed or resolved action
# stays so (until purged) and is never claimed, called or applied again;
# a delivery dismissed in review never gets an action, and one released
# is delivered (never left dismissed or in review); no claim statement
# that began after a route's pause committed claims (uses an attempt of)
# an action of that route before it is resumed.  A statement that began
# before may still claim: it read the routes first and then waited (for a
# table lock, say); nothing orders a pause with a claim in flight.
sub decisions_hold {
	my ($m) = @_;
	my @v;
	my %claims;
	for my $c (rows($m, q{select c.action_id, extract(epoch from c.real_at), a.route,
		extract(epoch from c.stmt_at) from model.claim c left join hookinbox.action a on a.id = c.action_id
		where not c.renewal})) {
		push @{ $claims{ $c->[0] } }, $c;
	}
	my @req = $m->ds->requests;
	my %state = map { $_->[0] => $_->[1] } rows($m, 'select id, state from hookinbox.action');
	for my $id (sort { $a <=> $b } keys %{ $m->{closed} // {} }) {
		my $c = $m->{closed}{$id};
		if (!defined $state{$id}) {
			push @v, "$c->{how}d action $id is gone but was not purged" unless defined $m->{purged_keys}{ $c->{key} };
			next;
		}
		push @v, "$c->{how}d action $id is $state{$id}" if $state{$id} ne $c->{state};
		for my $cl (grep { $_->[1] > $c->{t} } @{ $claims{$id} // [] }) {
			push @v, sprintf('%sd action %d was claimed %.2f s after it', $c->{how}, $id, $cl->[1] - $c->{t});
		}
		for my $r (grep { ($_->{key} // '') eq $c->{key} && $_->{t} > $c->{t} + $SLACK } @req) {
			push @v, sprintf('%sd action %d was called (attempt %s) %.2f s after it', $c->{how}, $id,
				$r->{attempt} // '?', $r->{t} - $c->{t});
		}
		if ($c->{route} eq 'app') {
			my $n = $m->sql('select count(*) from model_app.effect where idem_key = ' . sqlq($c->{key})
				. " and extract(epoch from at) > $c->{t}");
			push @v, "$c->{how}d action $id was applied by the handler $n times after it" if $n;
		}
	}
	my @dis = sort { $a <=> $b } keys %{ $m->{review_dismissed} // {} };
	if (@dis) {
		my %row = map { $_->[0] => $_ } rows($m, 'select i.id, i.state, count(a.id) from hookinbox.inbox i '
			. 'left join hookinbox.action a on a.inbox_id = i.id where i.id in (' . join(',', @dis) . ') group by 1, 2');
		for my $id (@dis) {
			my $r = $row{$id};
			if (!$r) {
				push @v, "held row $id, dismissed in review, is gone but was not purged" unless defined $m->{purged}{$id};
				next;
			}
			push @v, "held row $id, dismissed in review, is $r->[1]" if $r->[1] ne 'dismissed';
			push @v, "held row $id, dismissed in review, has $r->[2] actions" if $r->[2];
		}
	}
	# a released one leaves review for delivery as its own event
	my @rel = sort { $a <=> $b } keys %{ $m->{released} // {} };
	if (@rel) {
		my %st = map { $_->[0] => $_->[1] } rows($m, 'select id, state from hookinbox.inbox where id in ('
			. join(',', @rel) . ')');
		for my $id (grep { defined $st{$_} } @rel) {
			push @v, "held row $id, released from review, is $st{$id}"
				unless $st{$id} =~ /^(?:pending|dispatched|unrouted)$/;
		}
	}
	my @pauses = @{ $m->{pauses} // [] };
	push @pauses, map { [$_, $m->{paused}{$_}, 9e9] } sort keys %{ $m->{paused} // {} };
	for my $p (@pauses) {
		my ($route, $t0, $t1) = @$p;
		for my $c (grep { defined $_->[2] && $_->[2] eq $route } map { @$_ } values %claims) {
			push @v, sprintf('action %d of route %s was claimed %.2f s into a pause (the claim began %.2f s into it)',
				$c->[0], $route, $c->[1] - $t0, $c->[3] - $t0) if $c->[3] > $t0 && $c->[1] < $t1;
		}
	}
	return @v;
}

# 12. Retries and holds keep the rules README.md ("Record") and
# hookinbox-worker(8) state: an action never uses more than max_attempts
# attempts; it is parked only by a refusal (a 4xx other than 408, 409,
# 425 and 429), its attempts or retry window used up, or its payload
# purged, never on a status that is retried (5xx, 408, 409, 425, 429, no
# answer) with attempts and time left (the parked actions now, and those
# the operator replayed, dismissed or resolved, from action_history); a
# Retry-After holds a route 1 h at most (route_state.hold_until) and an
# action 6 h at most (its due_at, after the lease); and the operator's
# scripts kept their confirmations ($m->{script_bad}: replay.sql asks
# for -v blind=1 for an unknown outcome over 24 hours old, and for nothing
# else: replay_parked and the drain's replays, Model::Ops::judge_blind).  A
# parked action that says "retry window exhausted" had its window nearly
# used (its age, from its creation or replay, within 6 h, the longest
# Retry-After hold, of the model's 20 h).
my %RETRIED = map { $_ => 1 } 0, 408, 409, 425, 429;
sub retry_rules {
	my ($m) = @_;
	my @v = @{ $m->{script_bad} // [] };
	for my $r (rows($m, q{select id, route, attempts, max_attempts from hookinbox.action
		where attempts > max_attempts})) {
		push @v, "action $r->[0] ($r->[1]) used $r->[2] attempts of $r->[3]";
	}
	for my $r (rows($m, q{select 'action ' || id, route, coalesce(last_status, 0), coalesce(last_error, '')
		from hookinbox.action where state = 'parked'
		union all select 'action ' || h.action_id || ' (before its ' || h.step || ')', a.route,
		coalesce(h.last_status, 0), coalesce(h.last_error, '') from hookinbox.action_history h
		join hookinbox.action a on a.id = h.action_id where h.state = 'parked'})) {
		my ($what, $route, $st, $err) = @$r;
		next if $err =~ /exhausted|payload purged/;
		next if $st && !$RETRIED{$st} && ($st < 500 || $st > 599) && ($st < 200 || $st > 299);
		next if $route eq 'app' && $err =~ /handler/ && $err !~ /model: the handler was told to fail/;
		push @v, "$what ($route) was parked on a call that is retried ($st: $err), attempts and time left";
	}
	for my $r (rows($m, q{select id, route, coalesce(last_error, ''),
		extract(epoch from now() - coalesce(replayed_at, created_at)) from hookinbox.action
		where state = 'parked'})) {
		my ($id, $route, $err, $age) = @$r;
		next unless park_label($err) eq 'retry window' && $age + 21600 + 60 < 72000;
		push @v, sprintf('action %d (%s) was parked "%s" with %.0f s of its retry window left',
			$id, $route, $err, 72000 - $age);
	}
	for my $r (rows($m, q{select route, extract(epoch from hold_until - now()) from hookinbox.route_state
		where hold_until > now() + interval '3605 seconds'})) {
		push @v, sprintf('route %s is held for %.0f s (a Retry-After holds a route 1 h at most)', @$r);
	}
	for my $r (rows($m, q{select id, route, extract(epoch from due_at - now()) from hookinbox.action
		where state = 'pending' and due_at > now() + interval '6 hours' + interval '15 seconds'})) {
		push @v, sprintf('action %d (%s) is due in %.0f s (a Retry-After holds an action 6 h at most)', @$r);
	}
	# a finding huge_retry_after reported already (its seconds aside) is
	# not reported again
	my $shape = sub { (my $x = $_[0]) =~ s/\d+(?:\.\d+)? s\b/N s/g; return $x };
	my %seen = map { $shape->($_) => 1 } map { /^after a day's Retry-After: (.*)/s ? $1 : () }
		@{ $m->{script_bad} // [] };
	my $n = @{ $m->{script_bad} // [] };
	return (@v[0 .. $n - 1], grep { !$seen{ $shape->($_) } } @v[$n .. $#v]);
}

# which limit a park's last_error names ('attempts', 'retry window' or ''):
# the worker appends it to the call's error, the claim writes it first and
# then "; last: " and the error before
sub park_label {
	my ($err) = @_;
	$err =~ s/; last: .*//s;
	return $err =~ /.*\b(attempts|retry window) exhausted/s ? $1 : '';
}

# 13. A route's circuit breaker opens only when every call of a worker
# failed for 10 s, at least breaker_failures (5) of them (README.md,
# breaker_failures): a downstream that answers some calls (failing the
# first of each key, or flaky) is not held.  From the audit of route_state
# (model.breaker, each time it turns open) and the downstream's log: the
# worker's report says how long its calls failed, and a call that failed
# (no answer, garbage, 5xx, 408, 409, 425, or longer than the route
# timeout) arrived 10 s or more before the breaker opened.  The calls in
# between may be other workers' (each worker judges its own), so no more
# is asked of them.  A failed probe reopens it at once: not judged.
sub breaker_dead_only {
	my ($m) = @_;
	my @v;
	my @calls = $m->ds->requests;
	for my $b (rows($m, q{select route, reason, extract(epoch from real_at) from model.breaker
		where reason like 'breaker opened%' order by real_at})) {
		my ($route, $reason, $t) = @$b;
		my ($n, $secs) = $reason =~ /after (\d+) transient failures in (\d+) s/;
		# the failed calls of the 900 s before (the failures since the route's
		# last answer): one 10 s before at least, of 5 different actions
		my @recent = grep { $_->{path} eq "/$route" && $_->{t} <= $t + 1 && $_->{t} >= $t - 900
			&& failed_call($_) } @calls;
		my @failed = grep { $_->{t} <= $t - 10 + 1 } @recent;
		my %keys = map { ($_->{key} // '') => 1 } @recent;
		push @v, "route $route: the breaker opened ($reason) with no call failing 10 s before"
			if !@failed || !defined $secs || $secs < 10 || $n < 5;
		push @v, "route $route: the breaker opened ($reason) on the failures of "
			. scalar(keys %keys) . ' actions, under breaker_failures (5)' if @failed && keys %keys < 5;
	}
	return @v;
}

sub failed_call {
	my ($r) = @_;
	my $st = $r->{status} // 0;
	return 1 if $st <= 0 || ($st >= 500 && $st <= 599) || $st == 408 || $st == 409 || $st == 425;
	return ($r->{delay} // 0) >= $Model::ROUTE_TIMEOUT;
}

# 10. A --loop worker runs until it is told to stop: a database restart
# makes it reconnect, not exit (checked only once the defect
# loop-exits-on-restart is provoked or fixed, Model/Defects.pm).
sub loop_survives {
	my ($m) = @_;
	return @{ $m->{loop_died} };
}

# 14. order = sequence (route seq, docs/configuration.md): every version
# of each object is delivered, in version order, at most one effect per
# object and version.  From the downstream's log: per object, the versions
# applied on /seq (first effects, in the order the downstream applied
# them) strictly increase.  An equal version applied under a second key is
# excused only when purge.sql removed the first (no action is left to
# hold the equal one for review), as invariant 6 does.  And a later
# version waits only while an earlier one is unfinished: one the operator's
# dismissal of the earlier one left waiting (OpsOrder::sequence_woken,
# $m->{seq_bad}).
sub sequence_in_order {
	my ($m) = @_;
	my @v = @{ $m->{seq_bad} // [] };
	my %ver = map { ($_->{event_id} => $_) } grep { $_->{ep} eq 'st' } values %{ $m->{ev} };
	my (%last, %applied);
	for my $r (grep { $_->{path} eq '/seq' && $_->{effect} } $m->ds->requests) {
		my $e = $ver{ $r->{event_id} // '' } or next;
		my $o = $e->{object};
		my $k = "$o\0$e->{version}";
		if (defined $applied{$k}) {
			push @v, "object $o: version $e->{version} applied twice on /seq ($applied{$k}[1] and $e->{event_id})"
				if $applied{$k}[0] ne $r->{key} && !defined $m->{purged_keys}{ $applied{$k}[0] };
			next;
		}
		$applied{$k} = [$r->{key}, $e->{event_id}];
		if (defined $last{$o} && $e->{version} < $last{$o}[0]) {
			push @v, "object $o: version $e->{version} ($e->{event_id}) applied on /seq after "
				. "$last{$o}[0] ($last{$o}[1])";
		}
		$last{$o} = [$e->{version}, $e->{event_id}] if !defined $last{$o} || $e->{version} > $last{$o}[0];
	}
	return @v;
}

# 15. Each route's key (docs/configuration.md, route key; docs/worker.md,
# fan-out): key = event gives one action per (route, delivery), so no
# event of such a route (ord, seq, ev, ev2, app) collapses into another's
# action, and (order = sequence) none is missing: every action of seq
# ends done, or dismissed or resolved by the operator (a version the
# order could not place, reviewed), never stale.  key = object-type
# (route biz) gives one per (route, object id, event type): an event
# collapses only into the action of its own object and type, two biz
# actions never share an object and type, and the downstream applied at
# most one key per object and type (unless purge.sql removed the
# first).  Every event reaching every matching route is invariant 3's
# (a collapse counts as reaching it).  And a configuration with order =
# newest or sequence and key = object-type is refused at load
# (OpsRoutes::route_key_refused, $m->{key_bad}).
sub keys_per_route {
	my ($m) = @_;
	my @v = @{ $m->{key_bad} // [] };
	my %mode = %{ $m->{route_key} // {} };
	for my $r (rows($m, q{select c.inbox_id, c.route, c.action_id, coalesce(i.object_id, ''),
		coalesce(i.event_type, ''), coalesce(j.object_id, ''), coalesce(j.event_type, ''),
		i.event_id is distinct from j.event_id
		from hookinbox.action_collapse c join hookinbox.inbox i on i.id = c.inbox_id
		left join hookinbox.action a on a.id = c.action_id left join hookinbox.inbox j on j.id = a.inbox_id})) {
		my ($iid, $route, $aid, $o1, $t1, $o2, $t2, $other) = @$r;
		# (a released held copy under the genuine event's id is that
		# delivery again: it joins its action on any route)
		if (($mode{$route} // 'event') ne 'object-type') {
			next if $other ne 't';
			push @v, "inbox row $iid collapsed into action $aid on route $route, whose key is per event";
		} elsif ($o2 ne '' && ($o1 ne $o2 || $t1 ne $t2)) {
			push @v, "inbox row $iid ($o1 $t1) collapsed into action $aid ($o2 $t2) on route $route";
		}
	}
	for my $r (rows($m, q{select a.id, a.state from hookinbox.action a where a.route = 'seq'
		and a.state not in ('done', 'dismissed', 'resolved') order by a.id})) {
		push @v, "action $r->[0] (seq) ended $r->[1]: order = sequence delivers every version";
	}
	my %pair;
	for my $r (rows($m, q{select a.id, coalesce(i.object_id, ''), coalesce(i.event_type, '')
		from hookinbox.action a join hookinbox.inbox i on i.id = a.inbox_id
		where a.route = 'biz' and i.object_id is not null and i.review_of is null order by a.id})) {
		my $k = "$r->[1] $r->[2]";
		push @v, "actions $pair{$k} and $r->[0] (biz) share object and type $k" if $pair{$k};
		$pair{$k} //= $r->[0];
	}
	my %ev = map { ($_->{event_id} => $_) } grep { $_->{ep} eq 'st' } values %{ $m->{ev} };
	my %eff;
	for my $r (grep { $_->{path} eq '/biz' && $_->{effect} } $m->ds->requests) {
		my $e = $ev{ $r->{event_id} // '' } or next;
		my $k = "$e->{object} $e->{type}";
		if (defined $eff{$k} && $eff{$k}[0] ne $r->{key} && !defined $m->{purged_keys}{ $eff{$k}[0] }) {
			push @v, "object and type $k applied twice on /biz ($eff{$k}[1] and $e->{event_id})";
		}
		$eff{$k} //= [$r->{key}, $e->{event_id}];
	}
	return @v;
}

# 16. What the database held, parked or blocked (a route paused, held or
# with its breaker open, parked actions, deliveries held for review) was in
# the metrics file a worker wrote meanwhile: judged by metrics_scrape
# (Model/OpsMetrics.pm) when it runs, since the drain clears them all.
sub blocked_in_metrics {
	my ($m) = @_;
	return @{ $m->{metrics_bad} // [] };
}

# 17. A provider batch (fcgi/batchin.c, hs: HubSpot) is stored in one
# transaction (docs/providers.md; tests/t/30-providers-batch.t): a batch
# refused (an event without its id: 400; signed with another secret: 401)
# is refused whole, answered 4xx, and none of its new events is ever
# stored; a batch answered 2xx carries one intake id per event, in order
# (invariant 1 then judges each as its own answer: every acknowledged
# event stored, a duplicate answered with its first id); one answered 5xx
# or not at all left all of its new events stored or none (checked at
# once, Model::OpsBatch::deliver_batch); and each event's row holds that
# event's own bytes while it keeps a body.
sub batch_whole {
	my ($m) = @_;
	my @v = @{ $m->{batch_bad} // [] };
	my @ref = @{ $m->{batch_refused} // [] };
	if (@ref) {
		my %stored = map { $_ => 1 } split /\n/, $m->sql(q{select event_id from hookinbox.inbox where endpoint = 'hs'});
		for my $b (@ref) {
			push @v, "a batch $b->{why} was answered $b->{status}"
				if $b->{status} >= 200 && $b->{status} <= 299;
			my @in = grep { $stored{$_} } @{ $b->{ids} };
			push @v, "a batch $b->{why} (answered $b->{status}) stored @in" if @in;
		}
	}
	my %json = map { $_->{id} => $_->{json} } @{ $m->{hs_events} // [] };
	if (%json) {
		for my $r (rows($m, q{select id, event_id, convert_from(body, 'UTF8') from hookinbox.inbox
			where endpoint = 'hs' and body is not null})) {
			my ($id, $key, $body) = @$r;
			push @v, "inbox row $id ($key) holds " . substr($body, 0, 80) . ", not its event's bytes"
				if defined $json{$key} && $body ne $json{$key};
		}
	}
	return @v;
}

# 18. Every delivery is answered, whatever the database does, within 10 s
# (GitHub gives up then, Shopify at 5 s): the responder bounds each call
# by statement_timeout plus 0.5 s (2.5 s here) and answers 503 past it,
# and a request thread never waits on another without a bound.
our $ANSWER_SECS = 10;

sub answered_in_time {
	my ($m) = @_;
	return map {
		sprintf('a %s delivery (%s) to the %s responder was answered %s after %.1f s', $_->{ep}, $_->{id},
			$_->{fe_name} // '?', $_->{status}, $_->{secs})
	} grep { ($_->{secs} // 0) > $ANSWER_SECS } @{ $m->{dl} };
}

# 19. docs/operations.md: a responder on a schema without accept_one()
# (older than 013) stores its single-row deliveries through
# accept_batch() and logs that accept_one() is missing.  Judged by
# OpsSchema::schema_without_one when it restarts the single-row responder
# on such a schema ($m->{schema_bad}).
sub older_schema_served {
	my ($m) = @_;
	return @{ $m->{schema_bad} // [] };
}

1;
