<?php
// usort.php: a PHP comparator called back from the internal usort, in a
// class: Sorter::compare <- usort <- Sorter::sortAll <- {main}.
//   php usort.php SECONDS
class Sorter {
    public function compare($a, $b) {
        $x = 0;
        for ($i = 0; $i < 200; $i++) {
            $x += $i * $a;
        }
        return $a <=> $b;
    }

    public function sortAll($n) {
        $v = [];
        for ($i = 0; $i < $n; $i++) {
            $v[] = mt_rand();
        }
        usort($v, [$this, "compare"]);
        return $v[0];
    }
}

$deadline = microtime(true) + (float)($argv[1] ?? 30);
$s = new Sorter();
while (microtime(true) < $deadline) {
    $s->sortAll(2000);
}
