#!/usr/bin/perl
# callbacks.pl: Perl called back from C and through references:
#   a sort block calling a sub:  main <- sorter <- (sort block) <- by_weight
#   a map callback:              main <- mapper <- weigh (map's block)
#   a code reference:            main <- via_ref <- $code -> Pkg::target
# each burning CPU in weigh.  perl callbacks.pl SECONDS
use strict;
use warnings;

package Pkg;
sub target { my $x = 0; $x += main::weigh($_) for 1 .. 2000; return $x; }

package main;

sub weigh {
    my ($v) = @_;
    my $x = 0;
    for my $i (1 .. 300) { $x += $i * $v; }
    return $x;
}

sub by_weight { return weigh($_[0]) <=> weigh($_[1]); }

sub sorter {
    my @v = map { int(rand(1000)) } 1 .. 200;
    my @s = sort { by_weight($a, $b) } @v;
    return $s[0];
}

sub mapper {
    my @w = map { weigh($_) } 1 .. 2000;
    return $w[0];
}

my $code = \&Pkg::target;
sub via_ref { return $code->(); }

my $deadline = time + ($ARGV[0] // 30);
while (time < $deadline) {
    sorter();
    mapper();
    via_ref();
}
