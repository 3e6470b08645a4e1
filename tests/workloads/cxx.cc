// SPDX-License-Identifier: Apache-2.0
// C++ with libstdc++: std::sort with a lambda, and exceptions thrown in a
// loop.  Half the time each: main -> sort_phase -> std::sort -> lambda;
// main -> throw_phase -> thrower -> __cxa_throw -> _Unwind_RaiseException.
// Usage: cxx SECONDS
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "common.h"

static volatile unsigned long sink;

NOINLINE static void sort_phase(std::vector<unsigned> &v, double end)
{
	while (wl_now() < end) {
		for (auto &x : v)
			x = (unsigned)rand();
		std::sort(v.begin(), v.end(), [](unsigned a, unsigned b) {
			sink++;
			return (a ^ 0x5555u) < (b ^ 0x5555u);
		});
	}
}

NOINLINE static void thrower(int i)
{
	if (i >= 0)
		throw std::runtime_error("x");
}

NOINLINE static void throw_phase(double end)
{
	for (int i = 0; wl_now() < end; i++) {
		try {
			thrower(i);
		} catch (const std::exception &e) {
			sink++;
		}
	}
}

int main(int argc, char **argv)
{
	std::vector<unsigned> v(50000);
	double secs = wl_secs(argc, argv, 10), t = wl_now();

	while (wl_now() < t + secs) {
		sort_phase(v, wl_now() + 0.05);
		throw_phase(wl_now() + 0.05);
	}
	return 0;
}
