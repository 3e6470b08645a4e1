# SPDX-License-Identifier: Apache-2.0
# CPU-bound Perl for tests/integration/test_vs_perf.c: regular
# expressions, hashes, sort with a comparator, sprintf and recursion; runs
# until killed.
use strict;
use warnings;

sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }

my $text = join(" ", map { sprintf("word%d-%x", $_, $_ * 7919) } 1 .. 5000);
my $n = 0;
for (;;) {
	my %count;
	$count{$1}++ while $text =~ /word(\d*?)(\d)-/g;
	my @keys = sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count;
	my $s = join(",", map { sprintf("%s=%d", $_, $count{$_}) } @keys);
	(my $t = $text) =~ s/(\d+)-([0-9a-f]+)/$2-$1/g;
	$n += fib(18) + length($s) + length($t);
}
