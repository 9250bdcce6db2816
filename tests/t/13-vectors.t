# SPDX-License-Identifier: ISC
# The providers' published vectors replayed through lighttpd and the test
# build of the responder, with the clock set to each vector's own "now"
# (HOOKINBOX_TEST_NOW, read only by the test build): signatures that the
# provider's SDK accepts pass, and those it rejects are refused.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use Digest::SHA qw(sha256_hex);
use File::Temp qw(tempdir);
use HookTest;

my $top = HookTest::top();
# the published set, and the providers added since (tests/data/more-vectors.mjs,
# tests/data/batch-vectors.mjs, tests/data/hmac2-vectors.mjs), and gitlab's, the
# generic hmac's and svix's refusals (tests/data/base-vectors.mjs)
my @vectors = map {
	open my $fh, '<', "$top/tests/data/$_" or die "$_: $!";
	local $/;
	@{ decode_json(<$fh>)->{vectors} };
} qw(provider-vectors.json provider-vectors-more.json provider-vectors-batch.json
      provider-vectors-hmac2.json provider-vectors-asym.json provider-vectors-base.json);
my %provider = (standardwebhooks => 'standard');

# key_file and ca_file as text, cert_cache as {URL: PEM}: written under a
# directory of the vector's, and the endpoint keys naming them
my $files = tempdir(CLEANUP => 1);
sub endpoint_files {
	my ($name, $f) = @_;
	my %keys;
	for my $key (sort keys %$f) {
		my $path = "$files/$name-$key";
		if (ref $f->{$key}) {
			mkdir $path or die "$path: $!";
			write_file("$path/" . sha256_hex($_) . '.pem', $f->{$key}{$_}) for keys %{ $f->{$key} };
		} else {
			write_file($path, $f->{$key});
		}
		$keys{$key} = $path;
	}
	return %keys;
}
sub write_file {
	my ($path, $text) = @_;
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh or die "$path: $!";
}

# one endpoint per vector: its own secret (and Twilio's public URL)
my (%endpoints, @cases);
my $n = 0;
for my $v (@vectors) {
	my $ver = $v->{verify};
	my $name = 'v' . ++$n;
	# receiver-side rotation and a vector's own window are endpoint settings
	my %ep = (provider => $provider{ $v->{provider} } // $v->{provider},
		secrets => [$ver->{secret}, @{ $ver->{additional_secrets} // [] }]);
	$ep{tolerance} = $ver->{stripe_tolerance} if $ver->{stripe_tolerance};
	# what the asymmetric providers read from files (key_file, ca_file, cert_cache), and other keys
	%ep = (%ep, %{ $ver->{endpoint} // {} }, endpoint_files($name, $ver->{files} // {}));
	my $path = "/hooks/$name";
	# the URL the provider signs (Twilio, Square) is the endpoint's public_url
	if (defined $ver->{url}) {
		my ($base, $query) = split /\?/, $ver->{url}, 2;
		$ep{public_url} = $base;
		$path .= "?$query" if defined $query;
	}
	$endpoints{$name} = \%ep;
	push @cases, { v => $v, name => $name, path => $path, now => $ver->{now} || time() };
}

my $t = HookTest->new(endpoints => \%endpoints, procs => 1);
my %by_now;
push @{ $by_now{ $_->{now} } }, $_ for @cases;
for my $now (sort keys %by_now) {
	$t->httpd->restart(HOOKINBOX_TEST_NOW => $now);
	for my $c (@{ $by_now{$now} }) {
		my $v = $c->{v};
		# the vectors are text; the wire carries their UTF-8 bytes
		my $body = $v->{verify}{body};
		utf8::encode($body);
		my %headers = %{ $v->{verify}{headers} };
		utf8::encode($_) for values %headers;
		my $r = $t->post(undef, $body, \%headers,
			url => 'http://127.0.0.1:' . $t->httpd->{port} . $c->{path});
		my $reason = $r->{json} ? ($r->{json}{error} // '') : '';
		# past the signature, a vector body may still lack an event id: 400 of the envelope
		my $verified = $r->{status} == 200 || ($r->{status} == 400 && $reason !~ /signature|timestamp|header|token|parameters/);
		if ($v->{expect} eq 'accept') {
			ok($verified, "$v->{id}: verified ($r->{status} $reason)");
		} else {
			ok(!$verified && ($r->{status} == 401 || $r->{status} == 400),
				"$v->{id}: refused ($r->{status} $reason)");
		}
	}
}
is(scalar(@cases), 236, 'all 236 vectors replayed');
done_testing();
