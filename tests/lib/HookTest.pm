# SPDX-License-Identifier: ISC
# HookTest - the integration-test harness: real PostgreSQL, real lighttpd.
#
#   use HookTest;
#   my $t = HookTest->new(endpoints => {...}, routes => {...});
#   my $r = $t->post('gh', $body, {'X-Hub-Signature-256' => ...});
#   is($t->sql('select count(*) from hookinbox.inbox'), 1);
#
# A throw-away PostgreSQL cluster is made with initdb in a temp dir and
# started with pg_ctl on a unix socket (as an unprivileged user when run as
# root: postgres refuses root).  lighttpd runs the test build of the
# responder (obj/test/hookinbox.fcgi) through mod_fastcgi on a loopback
# port.  Everything is stopped when the object goes away.
package HookTest;

use strict;
use warnings;
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

our @EXPORT_OK = qw(top stripe_sig github_sig standard_sig);

our $PG_USER = 'hookinbox_test';

# Servers still running when the test script ends are stopped here, before
# File::Temp's own END block removes their directories (END blocks run in
# reverse order of definition, and File::Temp was loaded first).
our %LIVE;
END {
	local $?;
	for my $obj (grep { defined } values %LIVE) {
		eval { $obj->stop($obj->isa('HookTest::Pg') ? 'immediate' : ()) };
	}
}

# a whole file, '' when it cannot be read
sub slurp {
	my ($path) = @_;
	open my $fh, '<', $path or return '';
	local $/;
	return <$fh> // '';
}

sub top {
	return $ENV{HOOKINBOX_TOP} // abs_path(__FILE__ =~ s{/tests/lib/HookTest\.pm$}{}r);
}

sub pg_bindir {
	return $ENV{PG_BINDIR} if $ENV{PG_BINDIR};
	my @d = sort { ($b =~ /(\d+)\/bin$/)[0] <=> ($a =~ /(\d+)\/bin$/)[0] }
		glob('/usr/lib/postgresql/*/bin');
	return $d[0] // die "no PostgreSQL server found under /usr/lib/postgresql\n";
}

sub free_port {
	my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
		or die "no free port: $!";
	my $p = $s->sockport;
	close $s;
	return $p;
}

# run a command (list), die with its output on failure
sub run {
	my (@cmd) = @_;
	my $out = `@{[ join ' ', map { shell_quote($_) } @cmd ]} 2>&1`;
	die "command failed ($?): @cmd\n$out" if $? != 0;
	return $out;
}

sub shell_quote {
	my ($s) = @_;
	return $s if $s =~ /^[\w\/.,:=@%+-]+$/;
	$s =~ s/'/'\\''/g;
	return "'$s'";
}

# as root, commands that start postgres run as an unprivileged user
sub as_pg_user {
	my (@cmd) = @_;
	return @cmd if $> != 0;
	ensure_pg_user();
	return ('runuser', '-u', $PG_USER, '--', @cmd);
}

sub ensure_pg_user {
	return if getpwnam($PG_USER);
	system('useradd', '--system', '--no-create-home', '--shell', '/usr/sbin/nologin', $PG_USER) == 0
		or getpwnam($PG_USER) or die "could not create user $PG_USER\n";
}

# ---------------------------------------------------------------- PostgreSQL

package HookTest::Pg;
use strict;
use warnings;

sub new {
	my ($class, %o) = @_;
	my $dir = $o{dir} // die 'dir';
	my $self = bless {
		dir => $dir,
		data => "$dir/pgdata",
		sock => "$dir/pgsock",
		port => $o{port} // HookTest::free_port(),
		bin => HookTest::pg_bindir(),
		dbname => 'hookinbox',
	}, $class;
	return $self;
}

sub init {
	my ($self, %o) = @_;
	mkdir $self->{sock};
	if ($> == 0) {
		HookTest::ensure_pg_user();
		my ($uid, $gid) = (getpwnam($HookTest::PG_USER))[2, 3];
		chown $uid, $gid, $self->{sock};
		chmod 0755, $self->{dir};
		mkdir $self->{data};
		chown $uid, $gid, $self->{data};
	}
	HookTest::run(HookTest::as_pg_user("$self->{bin}/initdb", '-D', $self->{data}, '-U', 'postgres',
		'--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'));
	open my $fh, '>>', "$self->{data}/postgresql.conf" or die $!;
	print $fh "listen_addresses = ''\nunix_socket_directories = '$self->{sock}'\n",
		"port = $self->{port}\nmax_connections = 200\nshared_buffers = 64MB\n",
		"fsync = " . ($o{fsync} // 'on') . "\nlog_min_messages = warning\n",
		"log_line_prefix = '%m [%p] %u '\n", ($o{extra} // '');
	close $fh;
	return $self;
}

sub start {
	my ($self) = @_;
	HookTest::run(HookTest::as_pg_user("$self->{bin}/pg_ctl", '-D', $self->{data}, '-l',
		"$self->{data}/server.log", '-w', '-t', '60', 'start'));
	$self->{running} = 1;
	$HookTest::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::LIVE{"$self"});
	return $self;
}

# mode: fast | immediate | smart
sub stop {
	my ($self, $mode) = @_;
	return unless $self->{running};
	HookTest::run(HookTest::as_pg_user("$self->{bin}/pg_ctl", '-D', $self->{data}, '-w', '-t', '60',
		'-m', $mode // 'fast', 'stop'));
	$self->{running} = 0;
	delete $HookTest::LIVE{"$self"};
}

sub restart {
	my ($self, $mode) = @_;
	$self->stop($mode);
	$self->start;
}

sub create_db {
	my ($self) = @_;
	$self->psql_raw('postgres', 'postgres', "create database $self->{dbname}");
	$self->install;
}

sub install {
	my ($self) = @_;
	my $top = HookTest::top();
	return HookTest::run("$self->{bin}/psql", '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $self->{sock},
		'-p', $self->{port}, '-U', 'postgres', '-d', $self->{dbname}, '-f', "$top/sql/install.sql");
}

sub conninfo {
	my ($self, $role) = @_;
	return "host=$self->{sock} port=$self->{port} dbname=$self->{dbname} user=" . ($role // 'postgres');
}

sub psql_raw {
	my ($self, $db, $role, $sql, @vars) = @_;
	my @cmd = ("$self->{bin}/psql", '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', $self->{sock},
		'-p', $self->{port}, '-U', $role, '-d', $db, (map { ('-v', $_) } @vars), '-c', $sql);
	my $out = HookTest::run(@cmd);
	chomp $out;
	return $out;
}

# one query as superuser, result as text (rows joined by "\n", columns by '|')
sub sql {
	my ($self, $sql) = @_;
	return $self->psql_raw($self->{dbname}, 'postgres', $sql);
}

# run a script file with psql -v settings; returns (exit code, output)
sub psql_file {
	my ($self, $file, %o) = @_;
	my @cmd = ("$self->{bin}/psql", '-X', '-v', 'ON_ERROR_STOP=1', '-h', $self->{sock}, '-p', $self->{port},
		'-U', $o{role} // 'postgres', '-d', $self->{dbname},
		(map { ('-v', "$_=$o{vars}{$_}") } sort keys %{ $o{vars} // {} }), '-f', $file);
	my $out = `@{[ join ' ', map { HookTest::shell_quote($_) } @cmd ]} 2>&1`;
	return ($? >> 8, $out);
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	eval { $self->stop('immediate') } if $self->{running};
}

# ---------------------------------------------------------------- lighttpd

package HookTest::Lighttpd;
use strict;
use warnings;

# o: dir, fcgi (path), config (hookinbox.conf), procs, env (hash), port
sub new {
	my ($class, %o) = @_;
	my $self = bless {%o}, $class;
	$self->{port} //= HookTest::free_port();
	$self->{procs} //= 2;
	$self->{env} //= {};
	return $self;
}

sub write_conf {
	my ($self) = @_;
	my $d = $self->{dir};
	my %env = (HOOKINBOX_CONFIG => $self->{config}, %{ $self->{env} });
	for my $k (qw(ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS)) {
		$env{$k} //= $ENV{$k} if defined $ENV{$k};
	}
	my $envs = join(",\n\t\t\t", map { "\"$_\" => \"$env{$_}\"" } sort keys %env);
	my $bin = $self->{fcgi};
	if ($ENV{HOOKINBOX_VALGRIND}) {
		# one valgrind log per responder process, checked by the test that owns it
		$bin = "/usr/bin/valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect "
			. "--errors-for-leak-kinds=definite,indirect --error-exitcode=42 "
			. "--log-file=$d/valgrind.%p.log $bin";
	}
	my $common = <<"CONF";
server.document-root = "$d"
server.bind = "127.0.0.1"
server.port = $self->{port}
server.errorlog = "$d/lighttpd.error.log"
server.breakagelog = "$d/responder.log"
server.pid-file = "$d/lighttpd.pid"
server.max-request-size = 131072
CONF
	open my $fh, '>', "$d/lighttpd.conf" or die $!;
	if ($self->{cgi}) {
		# plain CGI: /hooks/<endpoint> runs the responder once per request
		my $cgienv = join(",\n\t", map { "\"$_\" => \"$env{$_}\"" } sort keys %env);
		print $fh $common, <<"CONF";
server.modules += ("mod_alias", "mod_cgi", "mod_setenv")
alias.url = ( "/hooks" => "$self->{fcgi}" )
cgi.assign = ( "" => "" )
setenv.add-environment = (
	$cgienv
)
CONF
		close $fh;
		return;
	}
	print $fh $common, <<"CONF";
server.modules += ("mod_fastcgi")
fastcgi.server = ( "/hooks/" => ((
		"socket" => "$d/hookinbox.@{[ ++$self->{generation} ]}.sock",
		"bin-path" => "$bin -c $self->{config}",
		"check-local" => "disable",
		# all of them from the start: lighttpd otherwise starts 4 and
		# adds more only as requests queue up
		"min-procs" => $self->{procs},
		"max-procs" => $self->{procs},
		"bin-environment" => (
			$envs
		),
)))
CONF
	close $fh;
}

sub start {
	my ($self) = @_;
	$self->write_conf;
	my $d = $self->{dir};
	unlink "$d/lighttpd.pid";
	# a fresh socket name each start: responders of the last run may still be draining
	eval { HookTest::run('/usr/sbin/lighttpd', '-f', "$d/lighttpd.conf") };
	if ($@) {
		my $log = '';
		if (open my $fh, '<', "$d/lighttpd.error.log") { local $/; $log = <$fh> }
		die $@ . "lighttpd error log:\n$log";
	}
	for (1 .. 100) {
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $self->{port});
		if ($s) { close $s; last }
		Time::HiRes::sleep(0.05);
	}
	$self->{running} = 1;
	# remembered now: File::Temp may remove the pid file before we stop
	$self->{pid} = undef;
	$self->{pid} = $self->pid;
	$HookTest::LIVE{"$self"} = $self;
	Scalar::Util::weaken($HookTest::LIVE{"$self"});
	return $self;
}

sub pid {
	my ($self) = @_;
	return $self->{pid} if $self->{pid};
	open my $fh, '<', "$self->{dir}/lighttpd.pid" or return;
	my $p = <$fh>;
	chomp $p;
	return $p;
}

sub stop {
	my ($self) = @_;
	return unless $self->{running};
	my $pid = $self->pid;
	if ($pid) {
		kill 'TERM', $pid;
		for (1 .. 200) { last unless kill 0, $pid; Time::HiRes::sleep(0.05) }
	}
	# A responder lighttpd was still (re)spawning as it stopped is not
	# stopped by it: find this instance's by the -c on their command line.
	if ($self->{config} && !$self->{cgi}) {
		my @left = grep { $_ != $$ } split ' ', `pgrep -f -- '-c \Q$self->{config}\E\$' 2>/dev/null`;
		kill 'TERM', @left if @left;
		for (1 .. 100) { last unless grep { kill 0, $_ } @left; Time::HiRes::sleep(0.05) }
		kill 'KILL', grep { kill 0, $_ } @left;
	}
	$self->{running} = 0;
	$self->{pid} = undef;
	delete $HookTest::LIVE{"$self"};
}

sub restart {
	my ($self, %env) = @_;
	$self->stop;
	$self->{env} = { %{ $self->{env} }, %env };
	delete $self->{env}{$_} for grep { !defined $self->{env}{$_} } keys %{ $self->{env} };
	$self->start;
}

sub url { my ($self) = @_; return "http://127.0.0.1:$self->{port}/hooks" }

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

# ---------------------------------------------------------------- the whole set-up

package HookTest;

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
	my $path = "$self->{dir}/secrets/$name";
	File::Path::make_path("$self->{dir}/secrets");
	record_secret(@secrets);
	open my $fh, '>', "$path.tmp" or die $!;
	print $fh map { "$_\n" } @secrets;
	close $fh;
	chmod 0600, "$path.tmp";
	rename "$path.tmp", $path or die $!;
	return $path;
}

sub write_config {
	my ($self) = @_;
	my $o = $self->{o};
	my $c = "; written by tests/lib/HookTest.pm\n[database]\nconninfo = "
		. $self->{pg}->conninfo($o->{intake_role} // 'hookinbox_intake') . "\n";
	$c .= "[intake]\n" . join('', map { "$_ = $o->{intake}{$_}\n" } sort keys %{ $o->{intake} // {} });
	if ($o->{worker} || $o->{worker_role}) {
		$c .= "[worker]\n";
		$c .= "conninfo = " . $self->{pg}->conninfo($o->{worker_role}) . "\n" if $o->{worker_role};
		$c .= join('', map { "$_ = $o->{worker}{$_}\n" } sort keys %{ $o->{worker} // {} });
	}
	for my $name (sort keys %{ $o->{endpoints} // {} }) {
		my %e = %{ $o->{endpoints}{$name} };
		my $secrets = delete $e{secrets} // ['test-secret'];
		$e{secret_file} //= $self->write_secret("ep-$name", @$secrets);
		$c .= "[endpoint $name]\n" . join('', map { "$_ = $e{$_}\n" } sort keys %e);
	}
	for my $name (sort keys %{ $o->{routes} // {} }) {
		my %r = %{ $o->{routes}{$name} };
		if (my $s = delete $r{secrets}) {
			$r{secret_file} = $self->write_secret("route-$name", @$s);
		}
		$c .= "[route $name]\n" . join('', map { "$_ = $r{$_}\n" } sort keys %r);
	}
	$c .= $o->{extra_config} // '';
	open my $fh, '>', "$self->{dir}/hookinbox.conf" or die $!;
	print $fh $c;
	close $fh;
}

# Secrets and signatures the suite used, for t/99-secrets.t to look for in
# every log and database dump the suite left behind.
sub record_secret {
	my (@v) = @_;
	my $d = top() . '/tests/tmp';
	File::Path::make_path($d);
	open my $fh, '>>', "$d/secrets.list" or die $!;
	print $fh map { "$_\n" } grep { defined && length($_) >= 8 } @v;
	close $fh;
}

# POST body to an endpoint; returns HTTP::Tiny's response hash plus {json}
sub post {
	my ($self, $ep, $body, $headers, %o) = @_;
	record_secret(map { $headers->{$_} } grep { /signature|hmac|token/i } keys %{ $headers // {} });
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

# ---------------------------------------------------------------- signing helpers

sub stripe_sig {
	my ($secret, $body, $t) = @_;
	$t //= time();
	$t = int($t);
	return "t=$t,v1=" . hmac_sha256_hex("$t.$body", $secret);
}

sub github_sig {
	my ($secret, $body) = @_;
	return 'sha256=' . hmac_sha256_hex($body, $secret);
}

# Standard Webhooks: secret "whsec_<base64>"; returns the header hash
sub standard_sig {
	my ($secret, $id, $body, $t) = @_;
	$t = int($t // time());
	my $key = $secret =~ /^whsec_(.*)$/ ? MIME::Base64::decode_base64($1) : $secret;
	my $sig = MIME::Base64::encode_base64(hmac_sha256("$id.$t.$body", $key), '');
	return ('webhook-id' => $id, 'webhook-timestamp' => $t, 'webhook-signature' => "v1,$sig");
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
	eval { $self->keep_evidence };
	delete $self->{httpd};
	delete $self->{pg};
}

1;
