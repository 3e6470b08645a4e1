// SPDX-License-Identifier: Apache-2.0
#include "nm_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nm_syms(const char *path, const char *opts, const char *types,
	    bool sized, struct nm_sym **out)
{
	char cmd[1024], line[8192], type;
	struct nm_sym *v = NULL, s, *nv;
	int n = 0, cap = 0, pos;
	FILE *p;

	*out = NULL;
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s %s 2>/dev/null",
		 opts, path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		pos = 0;
		if (sscanf(line, "%llx %llx %c %n", &s.addr, &s.size, &type,
			   &pos) < 3 || !pos || !type || !strchr(types, type) ||
		    (sized && !s.size))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(s.name, sizeof(s.name), "%s", line + pos);
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = s;
	}
	pclose(p);
	*out = v;
	return n;
}
