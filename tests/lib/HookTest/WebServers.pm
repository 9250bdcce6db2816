# SPDX-License-Identifier: ISC
# HookTest::WebServers - the responder behind Apache and nginx from Debian's
# packages, each started as a throw-away server on a loopback port with its
# own configuration in the test's temp dir.
#
#   use HookTest::WebServers;
#   HookTest::WebServers::need('apache2', 'spawn-fcgi');     # or skip_all
#   my $t = HookTest::Web->new(endpoints => {...}, intake => { max_body => 4096 });
#   $t->spawn_fcgi(procs => 2);                                # the responder on a socket
#   $t->apache(snippet => 'etc/apache/hookinbox-proxy-fcgi.conf',
#       modules => [qw(proxy proxy_fcgi reqtimeout)], limit => 8192);
#   my $r = $t->post('gh', $body, {...});                       # through that server
#
# The shipped snippet under etc/ is what each server runs: its production
# paths and body limits are replaced by the test's (every replacement must
# match, so a snippet that drifts breaks its test), and it is included into
# a minimal server configuration of the test's own.
#
# Run as root, the servers' workers and the responder run as the harness's
# unprivileged user (as PostgreSQL does), so the responder is shown to need
# no write access anywhere: the secret files are handed to that user (0600)
# and the responder binary is copied into the temp dir.
package HookTest::WebServers;

use strict;
use warnings;
use File::Copy qw(copy);
use File::Path qw(make_path);
use IO::Select;
use IO::Socket::INET;
use IO::Socket::UNIX;
use POSIX ();
use Socket qw(SOCK_STREAM);
use Test::More ();
use Time::HiRes qw(sleep time);
use Digest::SHA ();
use JSON::PP ();
use MIME::Base64 ();
use HookTest;

our %BIN = (
	'apache2' => '/usr/sbin/apache2',
	'nginx' => '/usr/sbin/nginx',
	'spawn-fcgi' => '/usr/bin/spawn-fcgi',
	'mod_proxy_fcgi' => '/usr/lib/apache2/modules/mod_proxy_fcgi.so',
	'mod_fcgid' => '/usr/lib/apache2/modules/mod_fcgid.so',
);

# skip the whole test unless every named program or module is installed
sub need {
	my (@what) = @_;
	my @missing = grep { !-e ($BIN{$_} // $_) } @what;
	Test::More::plan(skip_all => "not installed: @missing (tools/install-deps installs them)") if @missing;
	my $fcgi = HookTest::top() . '/obj/test/hookinbox.fcgi';
	Test::More::plan(skip_all => "no $fcgi (make build-tests)") unless -x $fcgi;
}

# whether every named program or module is installed (and the responder built)
sub have {
	my (@what) = @_;
	return !grep({ !-e ($BIN{$_} // $_) } @what) && -x HookTest::top() . '/obj/test/hookinbox.fcgi';
}

# (name, uid, gid) of the user servers and responder run as, or () when
# the tests run unprivileged already
sub run_user {
	return () if $> != 0;
	HookTest::ensure_pg_user();
	my ($uid, $gid) = (getpwnam($HookTest::PG_USER))[2, 3];
	my $group = getgrgid($gid) // $gid;
	return ($HookTest::PG_USER, $uid, $gid, $group);
}

sub give {
	my (@paths) = @_;
	my (undef, $uid, $gid) = run_user() or return;
	chown $uid, $gid, @paths;
}

# the text of a shipped file with each key of %subst replaced by its value;
# dies when a key does not occur (the snippet changed under its test)
sub snippet {
	my ($rel, %subst) = @_;
	my $path = HookTest::top() . "/$rel";
	open my $fh, '<', $path or die "$path: $!\n";
	local $/;
	my $text = <$fh>;
	close $fh;
	for my $from (sort { length($b) <=> length($a) } keys %subst) {
		my $n = ($text =~ s/\Q$from\E/$subst{$from}/g);
		die "$rel: \"$from\" not found: the snippet changed, update its test\n" unless $n;
	}
	return $text;
}

sub write_file {
	my ($path, $text) = @_;
	open my $fh, '>', $path or die "$path: $!\n";
	print $fh $text;
	close $fh or die "$path: $!\n";
	return $path;
}

sub wait_port {
	my ($port, $what) = @_;
	for (1 .. 200) {
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp');
		if ($s) { close $s; return 1 }
		sleep 0.05;
	}
	die "$what did not listen on 127.0.0.1:$port\n";
}

sub wait_gone {
	my ($pid, $secs) = @_;
	my $end = time() + ($secs // 10);
	while (time() < $end) {
		waitpid($pid, POSIX::WNOHANG());
		return 1 unless kill 0, $pid;
		sleep 0.05;
	}
	return 0;
}

sub pids_in {
	my ($file) = @_;
	return grep { /^\d+$/ } split /\s+/, HookTest::slurp($file);
}

# ---------------------------------------------------------------- the responder on a socket

# spawn-fcgi -n: binds the socket, puts it on fd 0, drops to the run user
# and becomes the responder, which keeps the test's stderr (responder.log).
# (Without -n, spawn-fcgi -F N forks N processes but points their stderr at
# /dev/null: the request log would be lost.)
package HookTest::SpawnFcgi;
use strict;
use warnings;

# o: dir, bin, config, socket
sub new {
	my ($class, %o) = @_;
	return bless {%o}, $class;
}

sub start {
	my ($self) = @_;
	my ($user, undef, undef, $group) = HookTest::WebServers::run_user();
	my @cmd = ($HookTest::WebServers::BIN{'spawn-fcgi'}, '-n', '-s', $self->{socket}, '-M', '0660');
	push @cmd, '-u', $user, '-g', $group, '-U', $user, '-G', $group if defined $user;
	push @cmd, '--', $self->{bin}, '-c', $self->{config};
	unlink $self->{socket};
	my $pid = fork // die "fork: $!";
	if (!$pid) {
		open STDIN, '<', '/dev/null';
		open STDOUT, '>', '/dev/null';
		open STDERR, '>>', "$self->{dir}/responder.log";
		exec @cmd or POSIX::_exit(127);
	}
	$self->{pids} = [$pid];
	$self->{running} = 1;
	for (1 .. 200) {
		last if -S $self->{socket};
		die "spawn-fcgi exited ($?): " . HookTest::slurp("$self->{dir}/responder.log")
			if waitpid($pid, POSIX::WNOHANG()) == $pid;
		Time::HiRes::sleep(0.05);
	}
	die "spawn-fcgi made no socket\n" unless -S $self->{socket};
	return $self;
}

sub pids { @{ $_[0]{pids} // [] } }

sub stop {
	my ($self) = @_;
	return unless $self->{running};
	kill 'TERM', $self->pids;
	HookTest::WebServers::wait_gone($_, 10) for $self->pids;
	$self->{running} = 0;
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

# What a systemd socket unit with StandardInput=socket does: the listening
# socket is opened by someone else (here the test) and handed to each
# process as fd 0; stdout is not the socket.  Several processes may share
# it (Sockets= in several service instances).
package HookTest::SocketActivated;
use strict;
use warnings;
# pids, stop and DESTROY as spawn-fcgi's processes
our @ISA = ('HookTest::SpawnFcgi');

# o: dir, bin, config, socket, procs
sub new {
	my ($class, %o) = @_;
	return bless { procs => 1, %o }, $class;
}

sub start {
	my ($self) = @_;
	my ($user, $uid, $gid) = HookTest::WebServers::run_user();
	unlink $self->{socket};
	my $l = IO::Socket::UNIX->new(Type => Socket::SOCK_STREAM(), Local => $self->{socket}, Listen => 128)
		or die "listen on $self->{socket}: $!\n";
	chmod 0660, $self->{socket};
	chown $uid, $gid, $self->{socket} if defined $uid;
	for (1 .. $self->{procs}) {
		my $pid = fork // die "fork: $!";
		if (!$pid) {
			POSIX::dup2(fileno($l), 0) // POSIX::_exit(126);
			open STDOUT, '>', '/dev/null';
			open STDERR, '>>', "$self->{dir}/responder.log";
			if (defined $uid) {
				POSIX::setgid($gid);
				$) = "$gid $gid";
				POSIX::setuid($uid) or POSIX::_exit(126);
			}
			exec $self->{bin}, '-c', $self->{config} or POSIX::_exit(127);
		}
		push @{ $self->{pids} }, $pid;
	}
	close $l;
	$self->{running} = 1;
	return $self;
}

# ---------------------------------------------------------------- Apache 2.4

package HookTest::Apache;
use strict;
use warnings;

# o: dir, port, modules (names without _module), include (the snippet text),
#    extra (more configuration)
sub new {
	my ($class, %o) = @_;
	my $self = bless {%o}, $class;
	$self->{port} //= HookTest::free_port();
	$self->{root} = "$self->{dir}/apache";
	return $self;
}

sub write_conf {
	my ($self) = @_;
	my $r = $self->{root};
	File::Path::make_path("$r/htdocs", "$r/run");
	my ($user, undef, undef, $group) = HookTest::WebServers::run_user();
	HookTest::WebServers::give("$r/run");
	my $mods = '/usr/lib/apache2/modules';
	my $load = join '', map { "LoadModule ${_}_module $mods/mod_$_.so\n" }
		('mpm_event', 'authz_core', @{ $self->{modules} // [] });
	HookTest::WebServers::write_file("$r/hookinbox.conf", $self->{include});
	my $d = $self->{dir};
	HookTest::WebServers::write_file("$r/httpd.conf", <<"CONF");
# written by tests/lib/HookTest/WebServers.pm
ServerRoot "$r"
DefaultRuntimeDir "$r/run"
PidFile "$r/run/httpd.pid"
Mutex file:$r/run default
Listen 127.0.0.1:$self->{port}
ServerName 127.0.0.1
$load
@{[ defined $user ? "User $user\nGroup $group\n" : '' ]}
ErrorLog "$d/apache.error.log"
LogLevel warn
LogFormat "%h %t \\"%r\\" %>s %b %D" hook
CustomLog "$d/apache.access.log" hook
DocumentRoot "$r/htdocs"
Timeout 30
# keep-alive outlasts the tests' pauses (HookTest/Lighttpd.pm says why)
KeepAliveTimeout 300
StartServers 1
ServerLimit 2
ThreadsPerChild 16
MaxRequestWorkers 32
MinSpareThreads 1
MaxSpareThreads 32
<Directory />
	AllowOverride None
	Require all denied
</Directory>
<Directory "$r/htdocs">
	Require all granted
</Directory>
$self->{extra}
Include "$r/hookinbox.conf"
CONF
	return "$r/httpd.conf";
}

sub start {
	my ($self) = @_;
	my $conf = $self->write_conf;
	HookTest::run($HookTest::WebServers::BIN{apache2}, '-t', '-f', $conf);
	HookTest::run($HookTest::WebServers::BIN{apache2}, '-f', $conf, '-k', 'start');
	HookTest::WebServers::wait_port($self->{port}, 'apache2');
	$self->{running} = 1;
	return $self;
}

sub pid { (HookTest::WebServers::pids_in("$_[0]{root}/run/httpd.pid"))[0] }

sub stop {
	my ($self) = @_;
	return unless $self->{running};
	my $pid = $self->pid;
	if ($pid) {
		kill 'TERM', $pid;
		HookTest::WebServers::wait_gone($pid, 15);
	}
	$self->{running} = 0;
}

sub url { "http://127.0.0.1:$_[0]{port}/hooks" }
sub log { HookTest::slurp("$_[0]{dir}/apache.error.log") }

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

# ---------------------------------------------------------------- nginx

package HookTest::Nginx;
use strict;
use warnings;

# o: dir, port, include (the snippet text)
sub new {
	my ($class, %o) = @_;
	my $self = bless {%o}, $class;
	$self->{port} //= HookTest::free_port();
	$self->{root} = "$self->{dir}/nginx";
	return $self;
}

sub write_conf {
	my ($self) = @_;
	my $r = $self->{root};
	File::Path::make_path("$r/logs", "$r/tmp");
	my ($user, undef, undef, $group) = HookTest::WebServers::run_user();
	HookTest::WebServers::give("$r/tmp");
	HookTest::WebServers::write_file("$r/hookinbox.conf", $self->{include});
	my $d = $self->{dir};
	my $temps = join '', map { "\t${_}_temp_path $r/tmp/$_;\n" } qw(client_body proxy fastcgi uwsgi scgi);
	HookTest::WebServers::write_file("$r/nginx.conf", <<"CONF");
# written by tests/lib/HookTest/WebServers.pm
@{[ defined $user ? "user $user $group;" : '' ]}
worker_processes 1;
pid $r/nginx.pid;
error_log $d/nginx.error.log warn;
events { worker_connections 256; }
http {
	access_log $d/nginx.access.log;
	keepalive_timeout 300s;
$temps
	server {
		listen 127.0.0.1:$self->{port};
		server_name localhost;
		include $r/hookinbox.conf;
	}
}
CONF
	return "$r/nginx.conf";
}

sub start {
	my ($self) = @_;
	my $conf = $self->write_conf;
	my @base = ($HookTest::WebServers::BIN{nginx}, '-p', "$self->{root}/", '-e', "$self->{dir}/nginx.error.log",
		'-c', $conf);
	HookTest::run(@base, '-t', '-q');
	HookTest::run(@base);
	HookTest::WebServers::wait_port($self->{port}, 'nginx');
	$self->{running} = 1;
	return $self;
}

sub pid { (HookTest::WebServers::pids_in("$_[0]{root}/nginx.pid"))[0] }

sub stop {
	my ($self) = @_;
	return unless $self->{running};
	my $pid = $self->pid;
	if ($pid) {
		kill 'QUIT', $pid;
		HookTest::WebServers::wait_gone($pid, 15) or kill 'TERM', $pid;
		HookTest::WebServers::wait_gone($pid, 5);
	}
	$self->{running} = 0;
}

sub url { "http://127.0.0.1:$_[0]{port}/hooks" }
sub log { HookTest::slurp("$_[0]{dir}/nginx.error.log") }

sub DESTROY {
	my ($self) = @_;
	local $?;
	$self->stop;
}

# ---------------------------------------------------------------- the whole set-up

# HookTest (PostgreSQL, configuration, signing, post) with one of the
# servers above in front instead of lighttpd.
package HookTest::Web;
use strict;
use warnings;
use parent -norequire, 'HookTest';

sub new {
	my ($class, %o) = @_;
	my $self = HookTest::new($class, %o, no_lighttpd => 1);
	my $d = $self->dir;
	File::Path::make_path("$d/run", "$d/bin");
	# the responder runs from the temp dir and reads only it and PostgreSQL
	File::Copy::copy("$self->{top}/obj/test/hookinbox.fcgi", "$d/bin/hookinbox.fcgi") or die "copy: $!";
	chmod 0755, "$d/bin/hookinbox.fcgi";
	HookTest::WebServers::give("$d/run", glob("$d/secrets/*"));
	return $self;
}

sub socket_path { $_[0]->dir . '/run/fcgi.sock' }
sub fcgi_bin { $_[0]->dir . '/bin/hookinbox.fcgi' }

# the production paths the snippet names, each with its stand-in here
sub paths {
	my ($self, $rel) = @_;
	my %p = ('/run/hookinbox/fcgi.sock' => $self->socket_path, '/usr/local/sbin/hookinbox.fcgi' => $self->fcgi_bin,
		'/etc/hookinbox/hookinbox.conf' => $self->config);
	my $text = HookTest::WebServers::snippet($rel);
	return map { index($text, $_) >= 0 ? ($_ => $p{$_}) : () } keys %p;
}

sub spawn_fcgi {
	my ($self, %o) = @_;
	$self->{fcgi} = HookTest::SpawnFcgi->new(dir => $self->dir, bin => $self->fcgi_bin, config => $self->config,
		socket => $self->socket_path, %o)->start;
	return $self->{fcgi};
}

sub socket_activated {
	my ($self, %o) = @_;
	$self->{fcgi} = HookTest::SocketActivated->new(dir => $self->dir, bin => $self->fcgi_bin,
		config => $self->config, socket => $self->socket_path, %o)->start;
	return $self->{fcgi};
}

sub stop_fcgi {
	my ($self) = @_;
	my $f = delete $self->{fcgi} or return;
	$f->stop;
}

# o: snippet (path under the top), subst (more replacements), modules, extra
sub apache {
	my ($self, %o) = @_;
	my $text = HookTest::WebServers::snippet($o{snippet}, $self->paths($o{snippet}), %{ $o{subst} // {} });
	$self->{web} = HookTest::Apache->new(dir => $self->dir, modules => $o{modules}, include => $text,
		extra => $o{extra} // '')->start;
	return $self->{web};
}

# o: snippet, subst
sub nginx {
	my ($self, %o) = @_;
	my $text = HookTest::WebServers::snippet($o{snippet}, $self->paths($o{snippet}), %{ $o{subst} // {} });
	$self->{web} = HookTest::Nginx->new(dir => $self->dir, include => $text)->start;
	return $self->{web};
}

sub web { $_[0]{web} }
sub url { my ($self, $ep) = @_; return $self->{web}->url . "/$ep" }

# every line the responder printed, wherever its server sends it
sub responder_log {
	my ($self) = @_;
	return join '', map { HookTest::slurp($self->dir . "/$_") }
		qw(responder.log apache.error.log);
}

sub DESTROY {
	my ($self) = @_;
	local $?;
	# servers first, then PostgreSQL (HookTest keeps the evidence)
	if (my $w = delete $self->{web}) { $w->stop }
	if (my $f = delete $self->{fcgi}) { $f->stop }
	$self->SUPER::DESTROY;
}

# ---------------------------------------------------------------- what every server must pass

package HookTest::Web;

# The endpoints the checks below use; pass to new(endpoints => ...).
our $STRIPE = 'whsec_web_test_5d1c9e8f7a6b';
our $GITHUB = 'gh-web-secret-77aa55cc33';
our $STD = 'whsec_' . MIME::Base64::encode_base64('web-standard-key-0123', '');
our $AUTH = 'auth-hmac-secret-0987654321';

sub endpoints {
	return (
		'stripe-live' => { provider => 'stripe', secrets => [$STRIPE], account => 'acct_w', environment => 'live' },
		'gh' => { provider => 'github', secrets => [$GITHUB] },
		'std' => { provider => 'standard', secrets => [$STD] },
		# a generic scheme that signs in Authorization: the header Apache
		# withholds from FastCGI unless CGIPassAuth is on
		'auth' => { provider => 'hmac', secrets => [$AUTH], header => 'Authorization', prefix => 'HMAC-SHA256=',
			id_field => 'id', type_field => 'type' },
	);
}

sub stripe_event {
	my ($id, %o) = @_;
	return JSON::PP::encode_json({ id => $id, object => 'event', type => $o{type} // 'invoice.paid',
		created => 1700000000, data => { object => { id => 'in_w', object => 'invoice' } }, pad => $o{pad} // '' });
}

sub rows {
	my ($self, $where) = @_;
	return $self->sql('select count(*) from hookinbox.inbox' . ($where ? " where $where" : ''));
}

# The responder behind Apache's mod_proxy_fcgi with the shipped snippet's
# RequestReadTimeout taken out, so that Apache streams each body to the
# responder as it arrives (the responder alone must bound a slow one); the
# whole test is skipped unless Apache, mod_proxy_fcgi and spawn-fcgi are
# installed.  o: threads (the responder's request threads, default 2)
sub streaming_apache {
	my ($class, %o) = @_;
	HookTest::WebServers::need(qw(apache2 mod_proxy_fcgi spawn-fcgi));
	my $t = $class->new(endpoints => { endpoints() }, intake => { threads => $o{threads} // 2 });
	$t->spawn_fcgi;
	$t->apache(snippet => 'etc/apache/hookinbox-proxy-fcgi.conf', modules => [qw(proxy proxy_fcgi)],
		subst => { 'RequestReadTimeout header=20-40,MinRate=500 body=5' => '# (no body timeout in this test)' });
	return $t;
}

# Slow senders: `senders` connections each send headers declaring `length`
# bytes, the first `fast` bytes at once (past a server's read-ahead, 16 KB
# for Apache's mod_proxy) and then trickle the rest at 600 B/s until they
# are answered; sender k writes "<status> <seconds until the answer>" to
# slow.k in the test's dir ("none" without an answer).  Returns their pids
# once the slow bodies have started.  o: senders (default 2), length
# (default 40000), fast (default 20000)
sub slow_senders {
	my ($self, %o) = @_;
	my ($senders, $len, $fast) = ($o{senders} // 2, $o{length} // 40000, $o{fast} // 20000);
	my ($port) = $self->{web}->url =~ m{:(\d+)/};
	my $dir = $self->dir;
	my @kids;
	for my $k (1 .. $senders) {
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			my $t0 = Time::HiRes::time();
			my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or POSIX::_exit(1);
			$s->autoflush(1);
			local $SIG{PIPE} = 'IGNORE';
			print $s "POST /hooks/stripe-live HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				. "Stripe-Signature: t=1,v1=00\r\nContent-Length: $len\r\nConnection: close\r\n\r\n";
			print $s ('x' x $fast);
			my $sel = IO::Select->new($s);
			my $answer = '';
			for (my $sent = $fast; $sent < $len; $sent += 60) {
				last if $sel->can_read(0.1) && sysread($s, $answer, 4096, length $answer);
				print $s ('x' x ($len - $sent < 60 ? $len - $sent : 60)) or last;
			}
			$sel->can_read(10) && sysread($s, $answer, 4096, length $answer) if $answer eq '';
			my ($status) = $answer =~ m{^HTTP/1\.\d (\d+)};
			open my $fh, '>', "$dir/slow.$k" or POSIX::_exit(1);
			printf $fh "%s %.2f\n", $status // 'none', Time::HiRes::time() - $t0;
			close $fh;
			POSIX::_exit(0);
		}
		push @kids, $pid;
	}
	Time::HiRes::sleep(1); # the slow bodies have started
	return @kids;
}

# Slow senders must not take the responder (one per request thread of the
# responder is enough to starve it when the server hands the request over
# before its body arrived): while slow_senders(%o) trickle, a signed
# delivery must be stored at once.  Returns that delivery's seconds.
# o: label, within (seconds, default 2), and slow_senders's
sub slow_body_check {
	my ($self, %o) = @_;
	my ($senders, $len, $fast) = ($o{senders} // 2, $o{length} // 40000, $o{fast} // 20000);
	my @kids = $self->slow_senders(%o);
	my $ev = 'evt_web_slow_' . int(rand(1e9));
	my $b = stripe_event($ev);
	my $t0 = Time::HiRes::time();
	my $r = $self->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($STRIPE, $b) });
	my $took = Time::HiRes::time() - $t0;
	Test::More::is($r->{status}, 200, "$o{label}: a delivery while $senders bodies trickle in at 600 B/s: 200");
	Test::More::cmp_ok($took, '<', $o{within} // 2, sprintf("%s: within %d s (%.2f s), not after the slow bodies "
		. "(%d s)", $o{label}, $o{within} // 2, $took, ($len - $fast) / 600));
	Test::More::is($self->rows("event_id = '$ev'"), 1, "$o{label}: and stored");
	kill 'TERM', @kids;
	waitpid($_, 0) for @kids;
	return $took;
}

# o: limit (the server's body limit in the snippet, bytes), max_body (the
#    responder's), label
sub intake_checks {
	my ($self, %o) = @_;
	my $l = $o{label} // 'server';
	my ($r, $b);

	# Stripe-Signature
	$b = stripe_event('evt_web_1');
	$r = $self->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($STRIPE, $b),
		'Content-Type' => 'application/json' });
	Test::More::is($r->{status}, 200, "$l: signed Stripe event: 200") or Test::More::diag($r->{content});
	Test::More::like($r->{headers}{'content-type'} // '', qr{^application/json}, "$l: JSON reply");
	Test::More::ok(($r->{json}{id} // 0) > 0, "$l: an intake id");
	Test::More::is($r->{json}{duplicate}, JSON::PP::false(), "$l: not a duplicate");
	Test::More::is($self->sql(q{select provider||'|'||account||'|'||event_id||'|'||event_type||'|'||state
		from hookinbox.inbox where event_id = 'evt_web_1'}), 'stripe|acct_w|evt_web_1|invoice.paid|pending',
		"$l: the row in hookinbox.inbox");
	Test::More::is($self->sql(q{select encode(sha256(body), 'hex') from hookinbox.inbox where event_id = 'evt_web_1'}),
		Digest::SHA::sha256_hex($b), "$l: the exact bytes stored");
	Test::More::is($self->sql(q{select id from hookinbox.inbox where event_id = 'evt_web_1'}), $r->{json}{id},
		"$l: the reply's id is the row's");

	# X-Hub-Signature-256 and X-GitHub-* metadata
	$b = JSON::PP::encode_json({ zen => 'web', hook_id => 7 });
	$r = $self->post('gh', $b, { 'X-Hub-Signature-256' => HookTest::github_sig($GITHUB, $b),
		'X-GitHub-Event' => 'ping', 'X-GitHub-Delivery' => 'web-deliv-1', 'Content-Type' => 'application/json' });
	Test::More::is($r->{status}, 200, "$l: signed GitHub event (X-Hub-Signature-256): 200")
		or Test::More::diag($r->{content});
	Test::More::is($self->sql(q{select event_id||'|'||event_type from hookinbox.inbox where provider = 'github'}),
		'web-deliv-1|ping', "$l: X-GitHub-Delivery and X-GitHub-Event reached the responder");

	# webhook-id / webhook-timestamp / webhook-signature
	$b = JSON::PP::encode_json({ type => 'user.created', data => { id => 'u_1' } });
	$r = $self->post('std', $b, { HookTest::standard_sig($STD, 'msg_web_1', $b), 'Content-Type' => 'application/json' });
	Test::More::is($r->{status}, 200, "$l: signed Standard Webhooks event (webhook-signature): 200")
		or Test::More::diag($r->{content});
	Test::More::is($self->rows(q{event_id = 'msg_web_1'}), 1, "$l: Standard Webhooks row");

	# Authorization
	$b = JSON::PP::encode_json({ id => 'auth_web_1', type => 'thing.done' });
	my $auth = 'HMAC-SHA256=' . Digest::SHA::hmac_sha256_hex($b, $AUTH);
	HookTest::record_secret($auth);
	$r = $self->post('auth', $b, { Authorization => $auth, 'Content-Type' => 'application/json' });
	Test::More::is($r->{status}, 200, "$l: signature in Authorization reached the responder: 200")
		or Test::More::diag($r->{content});
	Test::More::is($self->rows(q{event_id = 'auth_web_1'}), 1, "$l: Authorization-signed row");

	my $before = $self->rows;

	# a bad signature: 401 from the responder, so the header did reach it
	$b = stripe_event('evt_web_bad');
	$r = $self->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig('not-the-secret-123', $b) });
	Test::More::is($r->{status}, 401, "$l: bad Stripe signature: 401");
	Test::More::like($r->{content}, qr/"error"/, "$l: 401 is the responder's JSON");
	$r = $self->post('gh', $b, { 'X-Hub-Signature-256' => HookTest::github_sig('not-the-secret-123', $b),
		'X-GitHub-Delivery' => 'web-bad' });
	Test::More::is($r->{status}, 401, "$l: bad X-Hub-Signature-256: 401");
	$r = $self->post('auth', $b, { Authorization => 'HMAC-SHA256=' . ('0' x 64) });
	Test::More::is($r->{status}, 401, "$l: bad Authorization signature: 401");

	# over max_body, under the server's limit: the responder's 413
	my $pad = $o{max_body} + 100 - length(stripe_event('evt_web_big'));
	$b = stripe_event('evt_web_big', pad => 'x' x $pad);
	die "bad sizes" unless length($b) > $o{max_body} && length($b) < $o{limit};
	$r = $self->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($STRIPE, $b) });
	Test::More::is($r->{status}, 413, "$l: body over max_body: 413");
	Test::More::like($r->{content}, qr/"error"/, "$l: that 413 is the responder's JSON");

	# over the server's own limit: the server's 413 (not a 500)
	$b = stripe_event('evt_web_huge', pad => 'x' x ($o{limit} * 2));
	$r = $self->post('stripe-live', $b, { 'Stripe-Signature' => HookTest::stripe_sig($STRIPE, $b) });
	Test::More::is($r->{status}, 413, "$l: body over the server's limit: 413");

	Test::More::is($self->rows, $before, "$l: the rejected requests stored nothing");

	# what the responder saw: one log line per request, and no secret
	my $log = $self->responder_log;
	Test::More::like($log, qr/event=request endpoint=stripe-live outcome=accepted status=200/,
		"$l: the responder logged the accepted request");
	Test::More::unlike($log, qr/\Q$STRIPE\E|\Q$GITHUB\E|\Q$AUTH\E/, "$l: no secret in any log");
}

# Transfer-Encoding: chunked, as HTTP::Tiny sends a body given as code;
# returns the response
sub post_chunked {
	my ($self, $ep, $body, $headers) = @_;
	my @parts = unpack('(a100)*', $body);
	return $self->{http}->request('POST', $self->url($ep),
		{ headers => $headers, content => sub { shift @parts } });
}

1;
