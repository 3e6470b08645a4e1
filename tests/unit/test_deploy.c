// SPDX-License-Identifier: Apache-2.0
/* The deployment files: the DaemonSet and the systemd unit agree with each
 * other and with the binary's flags (ci/check_deploy.py). */
#include "test.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(deploy_daemonset_and_unit_agree)
{
	char cmd[2048], out[4096] = "";
	size_t n;
	FILE *p;
	int status;

	if (system("/usr/bin/python3 -c 'import yaml' 2>/dev/null") != 0) {
		test_skip("python3-yaml is not installed");
		return;
	}
	/* the flags come from the binary when it is built */
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/ci/check_deploy.py %s 2>&1",
		 test_srcdir(), access(test_bin(), X_OK) == 0 ? test_bin() : "");
	p = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(p, "run check_deploy.py"))
		return;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	status = pclose(p);
	if (!ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "ci/check_deploy.py passes"))
		printf("%s", out);
}
