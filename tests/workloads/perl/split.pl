#!/usr/bin/perl
# split.pl: CPU time split 60/30/10 over three sub chains, by the
# process' CPU clock (times), so the split holds on a busy host; subs are
# defined before use (named CVs on 5.36), and the light chain recurses
# (a sub calling itself goes through its glob).
#   heavy  <- chain_60 <- run <- main
#   medium <- chain_30 <- run <- main
#   light  <- rec (x3) <- chain_10 <- run <- main
#   perl split.pl SECONDS
use strict;
use warnings;

sub cpu { my @t = times; return $t[0] + $t[1]; }

sub spin {
    my ($s) = @_;
    my $end = cpu() + $s;
    my $x = 0;
    while (cpu() < $end) {
        for my $i (1 .. 2000) { $x += $i * $i; }
    }
    return $x;
}

sub heavy { return spin(0.060); }
sub medium { return spin(0.030); }
sub light { return spin(0.010); }
sub chain_60 { return heavy(); }
sub chain_30 { return medium(); }
sub rec { my ($n) = @_; return $n ? rec($n - 1) : light(); }
sub chain_10 { return rec(2); }

sub run {
    my ($seconds) = @_;
    my $deadline = time + $seconds;
    while (time < $deadline) {
        chain_60();
        chain_30();
        chain_10();
    }
}

run($ARGV[0] // 30);
