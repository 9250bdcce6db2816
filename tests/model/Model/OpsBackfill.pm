# SPDX-License-Identifier: ISC
# Model::OpsBackfill - the ledger of signed content after a purge, and
# hookinbox-backfill runs against a fake provider API (rows of Ops.pm's
# table()).  Both are judged by invariant 1 (one row, one id per event: a
# purged event is answered with its first id, never stored again) and 9
# (every event is stored): what the backfill stored is recorded as an
# answer ({ backfill => 1 }), with the intake id it printed.
package Model::OpsBackfill;

use strict;
use warnings;
use File::Temp ();
use POSIX ();
use HookTest::FakeProviderApi;

my $TOKEN = 'sk_test_model_backfill_0123456789';

# A captured delivery replayed after purge.sql (forced, dedup_days 0)
# deleted what was finished: under a fresh unsigned id where the id is not
# signed (gh, sh, tw), as it was otherwise (st is re-signed now: a late
# retry; ac's id is in its body).  The ledger must answer it with the
# first intake id.
sub replay_after_purge {
	my ($m) = @_;
	# as Model::Ops::earlier (one draw), but chosen after the worker run
	# among the deliveries whose rows are finished, which the forced purge
	# deletes (before, 44 % of the runs met a row it kept: "its row kept");
	# all of them when none is
	my @c = grep { !$_->{bad} && !$_->{reencoded} && !$_->{held} } @{ $m->{sent} };
	my $x = $m->rint(1 << 30);
	return Model::Ops::deliver_new($m) unless @c;
	# a worker run first, so that what was delivered is finished and goes
	$m->quiesce(60);
	$m->worker_run('w8', {}, '--once');
	my %fin = map { $_ => 1 } split /\n/, $m->sql(q{select i.id from hookinbox.inbox i
		where i.state in ('dispatched', 'unrouted') and not exists (select 1 from hookinbox.action a
			where a.inbox_id = i.id and a.state not in ('done', 'stale', 'dismissed', 'resolved'))});
	my %first;
	for my $a (grep { defined $_->{L} && defined $_->{got} } @{ $m->{dl} }) { $first{ $a->{L} } //= $a->{got} }
	my @f = grep { defined $first{ $_->{L} } && $fin{ $first{ $_->{L} } } } @c;
	my $d = @f ? $f[ $x % @f ] : $c[ $x % @c ];
	my $p = Model::Ops::run_purge($m, 0, 0, 1);
	my ($first) = map { $_->{got} } grep { defined $_->{L} && $_->{L} == $d->{L} && defined $_->{got} } @{ $m->{dl} };
	$p .= defined $first && defined $m->{purged}{$first} ? ', its row purged' : ', its row kept';
	my $new = Model::Ops::resend_of($d);
	if ($d->{ep} =~ /^(gh|sh|tw)$/) {
		$new->{id} = Model::Ops::fresh_id($m, $d->{ep});
		$m->{ev}{ $d->{L} }{ids}{ $new->{id} } = 1;
	}
	my $r = $m->deliver($new);
	my $b = '';
	if ($m->{hs_last}) {
		# and the last HubSpot batch, which the same purge took: from 3
		# events on it is stored by one statement that consults the ledger
		my $rb = Model::OpsBatch::deliver_own($m, { %{ $m->{hs_last} }, fe => $m->{fe}[ $m->{nmade}++ % 2 ] });
		$b = '; the last hs batch again (' . scalar(@{ $m->{hs_last}{batch} }) . " events) -> $rb->{status}"
			. Model::OpsBatch::answered($rb);
	}
	return "$p; $d->{ep} $d->{id} as $new->{id} -> $r->{status}$b";
}

sub api {
	my ($m) = @_;
	return $m->{bf_api} if $m->{bf_api};
	my $dir = File::Temp::tempdir('model-api-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{HOOKINBOX_KEEP});
	HookTest::record_secret($TOKEN);
	open my $fh, '>', "$dir/token" or die $!;
	print $fh "$TOKEN\n";
	close $fh;
	chmod 0600, "$dir/token";
	$m->{bf_cred} = "$dir/token";
	$m->{bf_api} = HookTest::FakeProviderApi->new(dir => $dir, token => $TOKEN);
	$m->{bf_listed} = { st => [], gh => [] };
	return $m->{bf_api};
}

sub iso { my @g = gmtime($_[0]); sprintf('%04d-%02d-%02dT%02d:%02d:%02dZ', $g[5] + 1900, $g[4] + 1, @g[3, 2, 1, 0]) }

# what the API lists for a delivery of the model
sub listing {
	my ($m, $d, $answered) = @_;
	return { id => $d->{id}, created => $m->{ev}{ $d->{L} }{version} // 1_700_000_000, delivered => 0,
		text => $d->{body} } if $d->{ep} eq 'st';
	my ($event, $action) = split /\./, $d->{type} // 'ping';
	return { id => ++$m->{bf_n}, guid => $d->{id}, delivered_at => iso(time - 30), event => $event,
		action => $action, status_code => $answered ? 200 : 502, payload => $d->{body},
		headers => { 'Content-Type' => 'application/json', 'X-GitHub-Delivery' => $d->{id},
			'X-GitHub-Event' => $event } };
}

# hookinbox-backfill over a window that holds events the intake missed
# (never delivered), events it stored (answered; listed again as failed for
# another endpoint, or a GitHub attempt that timed out), some purged first
# (forced, dedup_days 0) so that only the ledger knows them, on pages of
# 1-3.  Then some missed events arrive live after all (the provider's late
# retry): each must be a duplicate of what the backfill stored.
sub backfill_run {
	my ($m) = @_;
	my $ep = $m->pick(qw(st gh));
	my $page = 1 + $m->rint(3);
	my $nmiss = 1 + $m->rint(3);
	my $nold = $m->rint(4);
	my $purge_first = $m->chance(0.5);
	my $gh_answered = $m->rint(2);
	my @late = map { $m->chance(0.5) } 1 .. $nmiss;
	my $replay = $m->chance(0.5);
	my @xs = map { $m->rint(1 << 30) } 1 .. $nold;
	my $api = api($m);
	my @old = grep { !$_->{bad} && !$_->{held} && !$_->{reencoded} && $_->{ep} eq $ep } @{ $m->{sent} };
	my %pick;
	$pick{ $old[ $_ % @old ]{id} } = $old[ $_ % @old ] for @old ? @xs : ();
	my @missed = map { Model::Ops::new_delivery($m, $ep) } 1 .. $nmiss;
	my $p = '';
	if ($purge_first) {
		# a worker run first, so that what was delivered is finished and goes
		$m->quiesce(60);
		$m->worker_run('w8', {}, '--once');
		$p = Model::Ops::run_purge($m, 0, 0, 1) . '; ';
	}
	push @{ $m->{bf_listed}{$ep} }, (map { listing($m, $_, 0) } @missed),
		map { listing($m, $pick{$_}, $gh_answered) } sort keys %pick;
	$api->set(page_size => $page);
	if ($ep eq 'st') {
		$api->stripe_events(@{ $m->{bf_listed}{st} });
	} else {
		$api->github_deliveries(@{ $m->{bf_listed}{gh} });
	}
	my @cmd = (HookTest::top() . '/obj/test/hookinbox-backfill', '-c', $m->dir . '/hookinbox.conf',
		'--endpoint', $ep, '--since', $ep eq 'st' ? 1_690_000_000 : time - 86400,
		'--credential', $m->{bf_cred}, '--api-url', $api->url,
		'--conninfo', $m->t->pg->conninfo('hookinbox_backfill'),
		$ep eq 'gh' ? ('--repo', 'o/r', '--hook-id', '7') : ());
	my $cmd = join ' ', map { HookTest::shell_quote($_) } @cmd;
	my $out = `$cmd 2>&1`;
	my $rc = $? >> 8;
	$m->note("backfill $ep (exit $rc):\n$out") if $rc != 0 || $m->{verbose};
	my %by_id = map { ($_->{id} => $_) } @missed, values %pick;
	my ($stored, $known) = (0, 0);
	while ($out =~ /^(?:stored (\S+) \([^)]*\) as intake id (\d+)|already in the inbox (\S+) \(intake id (\d+)\))$/mg) {
		my ($id, $got, $dup) = defined $1 ? ($1, $2, 0) : ($3, $4, 1);
		my $d = $by_id{$id} or next;
		$m->record_answer({ %{ Model::Ops::resend_of($d) }, backfill => 1 },
			{ status => 200, json => { id => $got, duplicate => $dup } });
		$dup ? $known++ : $stored++;
		$by_id{$id}{backfilled} = 1;
	}
	# a run that exits 0 stored every event of its window the inbox lacked
	# (docs/operations.md), on whichever page the listing put it
	if ($rc == 0) {
		push @{ $m->{script_bad} }, "hookinbox-backfill $ep (pages of $page, exit 0) did not store "
			. "missed event $_->{id}" for grep { !delete $_->{backfilled} } @missed;
	}
	delete $_->{backfilled} for values %pick;
	# the missed events enter the schedule's history (deliver() adds what
	# it sends): later operations may deliver them again (a duplicate, a
	# replay under a fresh id)
	my @live;
	for my $k (0 .. $#missed) {
		my $d = $missed[$k];
		my $backfilled = grep { $_->{backfill} && $_->{id} eq $d->{id} && defined $_->{got} } @{ $m->{dl} };
		if (!$late[$k] && $backfilled) {
			push @{ $m->{sent} }, $d;
			next;
		}
		my $r = $m->deliver($d);
		push @live, "$d->{id} -> $r->{status}";
	}
	# the original signed request of a backfilled GitHub delivery, captured
	# and replayed under a fresh guid: the backfilled row's duplicate
	if ($replay && $ep eq 'gh') {
		my $new = { %{ Model::Ops::resend_of($missed[0]) }, id => Model::Ops::fresh_id($m, 'gh') };
		$m->{ev}{ $new->{L} }{ids}{ $new->{id} } = 1;
		my $r = $m->deliver($new);
		push @live, "$missed[0]{id} as $new->{id} -> $r->{status}";
	}
	return "${p}$ep pages of $page: missed $nmiss, listed again " . scalar(keys %pick)
		. ", exit $rc, stored $stored, known $known" . (@live ? '; live ' . join(' ', @live) : '');
}

1;
