# SPDX-License-Identifier: ISC
# HookTest - the integration-test harness: real PostgreSQL, real lighttpd.
#
#   use HookTest;
#   my $t = HookTest->new(endpoints => {...}, routes => {...});
#   my $r = $t->post('gh', $body, {'X-Hub-Signature-256' => ...});
#   is($t->sql('select count(*) from hookinbox.inbox'), 1);
#
# This file is the whole set-up (a cluster, the configuration, a web server
# running the responder; everything stopped when the object goes away) and
# a facade: each concern lives in its own module under HookTest/, and every
# name the tests have always used is re-exported here.
#
#   HookTest::Proc      top, slurp, run, shell_quote, free_port, the
#                       unprivileged user ($PG_USER, as_pg_user), %LIVE
#   HookTest::Pg        the throw-away PostgreSQL cluster (pg_bindir)
#   HookTest::Lighttpd  lighttpd running the responder
#   HookTest::Conf      hookinbox.conf and secret files from new's options
#   HookTest::Sign      stripe_sig, github_sig, standard_sig, record_secret
#
# More set-ups live beside them (WebServers, PgBouncer, Replica, HA, ...).
package HookTest;

use strict;
use warnings;
# loaded (and imported) here for the scripts and modules that rely on
# them, such as HookTest::Worker (MIME::Base64, POSIX)
use Cwd qw(abs_path);
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use HTTP::Tiny;
use JSON::PP ();
use IO::Socket::INET;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use Digest::SHA qw(hmac_sha256_hex hmac_sha256 hmac_sha1 sha256_hex);
use MIME::Base64 qw(encode_base64 decode_base64);
use Exporter 'import';
use Scalar::Util ();
use HookTest::Proc;
use HookTest::Pg;
use HookTest::Lighttpd;
use HookTest::Conf;
use HookTest::Sign;

our @EXPORT_OK = qw(top stripe_sig github_sig standard_sig);

# the modules' names under HookTest:: too: HookTest::run ...
BEGIN {
	no strict 'refs';
	for my $f (qw(slurp top free_port run run_status write_file shell_quote as_pg_user ensure_pg_user)) {
		*{"HookTest::$f"} = \&{"HookTest::Proc::$f"};
	}
	for my $f (qw(record_secret stripe_sig github_sig standard_sig)) {
		*{"HookTest::$f"} = \&{"HookTest::Sign::$f"};
	}
	*HookTest::pg_bindir = \&HookTest::Pg::pg_bindir;
	*HookTest::PG_USER = \$HookTest::Proc::PG_USER;
	*HookTest::LIVE = \%HookTest::Proc::LIVE;
}
our ($PG_USER, %LIVE); # the module's, aliased above

# Every set-up still alive.  A handle held in a file-level variable is
# destroyed only after the END blocks, when File::Temp has already removed
# its directory: its evidence is kept here, before that (this END runs
# before File::Temp's and HookTest::Proc's, which were loaded first).
our @OPEN;
END {
	local $?;
	for my $t (grep { defined } @OPEN) {
		eval { $t->keep_evidence };
		$t->{evidence_kept} = 1;
	}
}

# o: endpoints => { name => { provider => ..., secrets => [...], %keys } },
#    routes => { name => { %keys } }, intake => {...}, worker => {...},
#    procs => N, env => {...}, no_lighttpd => 1
sub new {
	my ($class, %o) = @_;
	my $dir = tempdir('hookinbox-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{HOOKINBOX_KEEP});
	chmod 0755, $dir;
	my $self = bless { dir => $dir, o => \%o, top => top() }, $class;
	$self->{pg} = HookTest::Pg->new(dir => $dir)->init(%{ $o{pg} // {} })->start;
	$self->{pg}->create_db;
	$self->write_config;
	unless ($o{no_lighttpd}) {
		$self->{httpd} = HookTest::Lighttpd->new(dir => $dir, fcgi => "$self->{top}/obj/test/hookinbox.fcgi",
			config => "$dir/hookinbox.conf", procs => $o{procs} // 2, env => $o{env} // {},
			cgi => $o{cgi})->start;
	}
	$self->{http} = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
	push @OPEN, $self;
	Scalar::Util::weaken($OPEN[-1]);
	return $self;
}

sub dir { $_[0]{dir} }
sub pg { $_[0]{pg} }
sub httpd { $_[0]{httpd} }
sub config { "$_[0]{dir}/hookinbox.conf" }
sub sql { my $self = shift; return $self->{pg}->sql(@_) }
sub url { my ($self, $ep) = @_; return $self->{httpd}->url . "/$ep" }

sub write_secret {
	my ($self, $name, @secrets) = @_;
	return HookTest::Conf::write_secret($self->{dir}, $name, @secrets);
}

sub write_config {
	my ($self) = @_;
	my $c = HookTest::Conf::text($self->{o}, sub { $self->{pg}->conninfo(@_) },
		sub { $self->write_secret(@_) });
	open my $fh, '>', "$self->{dir}/hookinbox.conf" or die $!;
	print $fh $c;
	close $fh;
}

# POST body to an endpoint; returns HTTP::Tiny's response hash plus {json}
sub post {
	my ($self, $ep, $body, $headers, %o) = @_;
	# signature headers are secrets for t/99; Twilio's I-Twilio-Idempotency-Token
	# is its delivery id and Discord's X-Signature-Timestamp a timestamp, both
	# stored on purpose
	record_secret(map { $headers->{$_} } grep { /signature|hmac|token/i && !/idempotency-token|timestamp/i }
		keys %{ $headers // {} });
	my $r = $self->{http}->request($o{method} // 'POST', $o{url} // $self->url($ep),
		{ content => $body, headers => $headers // {} });
	$r->{json} = eval { JSON::PP::decode_json($r->{content}) } if ($r->{content} // '') =~ /^\s*\{/;
	return $r;
}

# everything the responder logged (lighttpd's error log collects its stderr)
sub responder_log {
	my ($self) = @_;
	return slurp("$self->{dir}/responder.log");
}

# keep what the responder logged and what the database holds, as text
sub keep_evidence {
	my ($self) = @_;
	my $d = top() . '/tests/tmp/evidence';
	File::Path::make_path($d);
	my $name = ($0 =~ s{.*/}{}r) . ".$$." . ++$self->{kept};
	if (open my $fh, '>', "$d/$name.log") {
		print $fh $self->responder_log;
		for my $f (glob("$self->{dir}/*.log"), glob("$self->{dir}/pgdata/server.log")) {
			open my $in, '<', $f or next;
			local $/;
			my $text = <$in>;
			print $fh $text if defined $text;
		}
		if ($self->{pg} && $self->{pg}{running}) {
			for my $table (qw(inbox action)) {
				my $rows = eval {
					$self->sql("select string_agg(t::text, E'\\n') from hookinbox.$table t")
				};
				print $fh ($rows // ''), "\n";
			}
		}
		close $fh;
	}
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	eval { $self->keep_evidence } unless $self->{evidence_kept};
	delete $self->{httpd};
	delete $self->{pg};
}

1;
