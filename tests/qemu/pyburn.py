# SPDX-License-Identifier: Apache-2.0
# pyburn.py: the kernel matrix's Python workload.  CPU split 60/30/10 over
#   heavy  <- chain_60 <- run <- <module>
#   medium <- chain_30 <- run <- <module>
#   light  <- chain_10 <- run <- <module>
# as in tests/workloads/python/split.py, except that each share is an
# amount of work, not of thread CPU time.  Under TCG on a busy host a
# guest's vCPU loses the host CPU for slices of milliseconds, which the
# guest charges to the running thread but never samples.  A phase that
# ends on its CPU clock loses up to a whole slice, so a 10 ms phase loses
# less of its share than a 60 ms one: with split.py, light measured 13-17%
# on a host at load 9.  A phase that ends on its work loses slices in
# proportion to its length.
#
# One line on stdout, "pyburn: running", once the loop starts: check.sh
# starts the profiler only then, so that no sample falls in the
# interpreter's start-up (seconds under TCG, with no <module> frame yet).
#
#   python -S -E pyburn.py [SECONDS]
import sys, time

def spin(n):
    # x stays below 2**30: one CPython digit, the same cost per round
    x = 0
    for i in range(n):
        x ^= i
    return x

def calibrate():
    """Rounds of spin() in 1 ms of this CPU: a round of the split below
    lasts about 100 ms, short next to a profile of a few seconds."""
    n = 1000
    while True:
        t = time.thread_time()
        spin(n)
        dt = time.thread_time() - t
        if dt >= 0.05:
            return max(1, int(n / (dt * 1000)))
        n *= 2

def heavy(unit): return spin(60 * unit)

def medium(unit): return spin(30 * unit)

def light(unit): return spin(10 * unit)

def chain_60(unit): return heavy(unit)

def chain_30(unit): return medium(unit)

def chain_10(unit): return light(unit)

def run(seconds, unit):
    deadline = time.time() + seconds
    while time.time() < deadline:
        chain_60(unit)
        chain_30(unit)
        chain_10(unit)

if __name__ == "__main__":
    unit = calibrate()
    print("pyburn: running", flush=True)
    run(float(sys.argv[1]) if len(sys.argv) > 1 else 30, unit)
