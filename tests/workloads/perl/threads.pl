#!/usr/bin/perl
# threads.pl: two ithreads, each with its own interpreter, burning CPU in
# their own subs, beside the main thread in its own:
#   main thread:  main <- main_loop <- burn_main
#   thread 1:     worker_a <- burn_a      thread 2: worker_b <- burn_b
#   perl threads.pl SECONDS
use strict;
use warnings;
use threads;

sub spin { my $x = 0; for my $i (1 .. 20000) { $x += $i * $i; } return $x; }
sub burn_a { return spin(); }
sub burn_b { return spin(); }
sub burn_main { return spin(); }
sub worker_a { my ($d) = @_; burn_a() while time < $d; return 0; }
sub worker_b { my ($d) = @_; burn_b() while time < $d; return 0; }
sub main_loop { my ($d) = @_; burn_main() while time < $d; return 0; }

my $deadline = time + ($ARGV[0] // 30);
my @t = (threads->create(\&worker_a, $deadline),
	 threads->create(\&worker_b, $deadline));
main_loop($deadline);
$_->join for @t;
