# SPDX-License-Identifier: ISC
# The intake acceptance table again, with one responder process of eight
# threads that share one committing connection (group commit).
use strict;
use warnings;
$ENV{HOOKINBOX_INTAKE_THREADS} = 8;
use File::Spec;
my $file = File::Spec->rel2abs(($0 =~ s{[^/]*$}{}r) . '10-intake.t');
do $file;
die $@ if $@;
