// SPDX-License-Identifier: Apache-2.0
/*
 * The test runtime (bpf/test_runtime.h): a toy interpreter whose loop
 * ep_fakert_eval() runs "functions" (code objects) in frame records
 * linked through ep_fakert_current, as a real VM keeps its frames.  main
 * runs alpha and beta, which burn CPU 2:1 below the loop; beta's code
 * "inlined" gamma (no frame record of its own, as a JIT inlines a
 * callee).  Expected stacks, leaf first: burn; alpha (fakert:10) or
 * gamma (fakert:30) then beta (fakert:20); main (fakert:1); the native
 * main.  Usage: fakert SECONDS
 */
#include <stdint.h>

#include "common.h"

/* bpf/test_runtime.h */
#define FRAME_MAGIC 0x31544b4146504521ULL
#define CODE_MAGIC 0x31444f4346504521ULL

struct fakert_code {
	uint64_t magic;
	const char *name;
	uint64_t line;
	const struct fakert_code *inlined;
};

struct fakert_frame {
	uint64_t magic;
	const struct fakert_code *code;
	struct fakert_frame *prev;
};

static const struct fakert_code f_main = { CODE_MAGIC, "main", 1, NULL };
static const struct fakert_code f_alpha = { CODE_MAGIC, "alpha", 10, NULL };
static const struct fakert_code f_gamma = { CODE_MAGIC, "gamma", 30, NULL };
static const struct fakert_code f_beta = { CODE_MAGIC, "beta", 20, &f_gamma };

struct fakert_frame *volatile ep_fakert_current;
static volatile unsigned long sink;

NOINLINE static void burn(unsigned long n)
{
	unsigned long x = n, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
}

NOINLINE void ep_fakert_eval(const struct fakert_code *code, unsigned long work)
{
	struct fakert_frame f = { FRAME_MAGIC, code, ep_fakert_current };

	__atomic_store_n(&ep_fakert_current, &f, __ATOMIC_RELEASE);
	if (code == &f_main) {
		ep_fakert_eval(&f_alpha, 2 * work);
		ep_fakert_eval(&f_beta, work);
	} else {
		burn(work);
	}
	__atomic_store_n(&ep_fakert_current, f.prev, __ATOMIC_RELEASE);
	__atomic_store_n(&f.magic, 0, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_secs(argc, argv, 10);

	/* phases of tens of ms: far longer than a sampling period, so the
	 * samples cannot beat with the alpha/beta cycle */
	while (wl_now() < end)
		ep_fakert_eval(&f_main, 10000000);
	return 0;
}
