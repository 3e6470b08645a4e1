# SPDX-License-Identifier: Apache-2.0
# CPU-bound pure Python for tests/integration/test_vs_perf.c: recursion,
# str and bytes work in C, sorted() calling back into a lambda, dicts and
# json (C accelerated); runs until killed.
import json
import random


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def strings(n):
    s = 0
    for i in range(n):
        s += len(str(i) * 3)
    return s


def sorting(rng, n):
    a = [rng.random() for _ in range(n)]
    return sorted(a, key=lambda x: -x)[0]


def dicts(n):
    d = {}
    for i in range(n):
        d["k%d" % (i % 997)] = d.get("k%d" % (i % 991), 0) + i
    return len(json.dumps(d)) + len(json.loads(json.dumps(d)))


rng = random.Random(1)
while True:
    fib(20)
    strings(20000)
    sorting(rng, 20000)
    dicts(20000)
