<?php
// split.php: CPU time split 60/30/10 over three call chains, by the
// process' CPU clock (getrusage), so the split holds on a busy host.
//   heavy  <- chain_60 <- run <- {main}
//   medium <- chain_30 <- run <- {main}
//   light  <- chain_10 <- run <- {main}
// and a class method (Sorter::compare, called back from usort) under
// Sorter::sortAll.  php split.php SECONDS
function cpu_ms() {
    $r = getrusage();
    return $r["ru_utime.tv_sec"] * 1000.0 + $r["ru_utime.tv_usec"] / 1000.0
         + $r["ru_stime.tv_sec"] * 1000.0 + $r["ru_stime.tv_usec"] / 1000.0;
}

function spin($ms) {
    $end = cpu_ms() + $ms;
    $x = 0;
    while (cpu_ms() < $end) {
        for ($i = 0; $i < 2000; $i++) {
            $x += $i * $i;
        }
    }
    return $x;
}

function heavy() { return spin(60); }
function medium() { return spin(30); }
function light() { return spin(10); }
function chain_60() { return heavy(); }
function chain_30() { return medium(); }
function chain_10() { return light(); }

function run($seconds) {
    $deadline = microtime(true) + $seconds;
    while (microtime(true) < $deadline) {
        chain_60();
        chain_30();
        chain_10();
    }
}

run((float)($argv[1] ?? 30));
