// SPDX-License-Identifier: Apache-2.0
/* The header oracle's output, for the offset table tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offsets_oracle.h"
#include "rep_fixture.h"
#include "test.h"

struct oracle_row *oracle_load(const char *runtime, size_t *n)
{
	struct oracle_row *rows = NULL, *grown;
	size_t cap = 0;
	char path[1024], line[256];
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "%s/tests/tools/%s_offsets.txt",
		 test_srcdir(), runtime);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(rows, cap * sizeof(*rows));
			if (!grown)
				goto bad;
			rows = grown;
		}
		if (sscanf(line, "%7s %15s %31s %lu", rows[*n].version,
			   rows[*n].build, rows[*n].name, &rows[*n].value) != 4)
			goto bad;
		(*n)++;
	}
	fclose(f);
	return rows;
bad:
	fclose(f);
	free(rows);
	*n = 0;
	return NULL;
}

int oracle_regenerate(const char *runtime, const char *env, const char *what)
{
	const char *git = getenv(env);
	char cmd[2048], out[512];

	if (!git || !*git) {
		test_skip("%s unset (%s): the kept oracle output is checked, "
			  "not regenerated", env, what);
		return 1;
	}
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && tests/tools/interp_offsets.sh %s %s > '%s' && "
		 "diff -u tests/tools/%s_offsets.txt '%s' | head -40",
		 test_srcdir(), runtime, git, test_tmppath("oracle.txt"),
		 runtime, test_tmppath("oracle.txt"));
	if (fix_run(cmd, out, sizeof(out)) || out[0]) {
		test_fail(__FILE__, __LINE__, "regenerated %s oracle differs: %s",
			  runtime, out);
		return -1;
	}
	return 0;
}

bool oracle_check_const(const struct oracle_row *r,
			const struct oracle_const *c, size_t n,
			const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(r->name, c[i].name) == 0)
			return ASSERT_EQ(c[i].value, r->value, what);
	test_fail(__FILE__, __LINE__, "%s: a value no test reads", what);
	return false;
}
