// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel matrix (tests/qemu/): every BPF program verified, and a
 * profile taken, on Debian 12's 6.1 and 6.12 kernels (generic, cloud, rt)
 * under qemu, on their arm64 cloud builds under qemu-system-aarch64 (SKIP
 * without the cross build, make ARCH=arm64) and on the host kernel.  Part of `make test` so that CI shows
 * it; EP_SKIP_QEMU=1 leaves it out (it downloads the kernels once, then
 * takes a minute or two).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../unit/test.h"

TEST_ROOT(qemu_kernel_matrix)
{
	char cmd[2048], line[1024];
	int pass = 0, fail = 0, skip = 0, status;
	FILE *p;

	if (getenv("EP_SKIP_QEMU")) {
		test_skip("EP_SKIP_QEMU is set");
		return;
	}
	/* The skeleton header of the build under test: make test passes
	 * EP_SKEL ($(O)/skel), which run-matrix.sh reads from the
	 * environment (default: build/skel). */
	snprintf(cmd, sizeof(cmd),
		 "EP_BIN='%s' EP_WORKLOAD='%s/split-nofp-pie' "
		 "'%s/tests/qemu/run-matrix.sh' 2>&1",
		 test_bin(), test_workloads(), test_srcdir());
	p = popen(cmd, "r");
	if (!ASSERT_TRUE(p != NULL, "run the matrix"))
		return;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "PASS ", 5))
			pass++;
		else if (!strncmp(line, "FAIL ", 5))
			fail++;
		else if (!strncmp(line, "SKIP ", 5))
			skip++;
		/* every row and the summary show in the test's output */
		if (!strncmp(line, "PASS ", 5) || !strncmp(line, "FAIL ", 5) ||
		    !strncmp(line, "SKIP ", 5) || !strncmp(line, "matrix:", 7))
			test_note("%s", line);
		else if (fail)
			printf("      %s\n", line); /* the failed row's log */
	}
	status = pclose(p);
	ASSERT_EQ(fail, 0, "rows failed");
	/* six x86 guests, two arm64 guests, the host */
	ASSERT_EQ(pass + skip, 9, "nine rows");
	ASSERT_GE(pass, 1, "at least the host row passed");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "run-matrix.sh exit code");
}
