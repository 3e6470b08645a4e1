// SPDX-License-Identifier: Apache-2.0
#include "metrics_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics_list.h"

struct listed {
	const char *name, *type, *key;
};

#define LISTED_(name, type, labels, help, key, source) { #name, #type, key },
static const struct listed listed[] = { AGENT_METRICS(LISTED_) };

/* A line of text that starts with head. */
static bool has_line(const char *text, const char *head)
{
	size_t hl = strlen(head);
	const char *p = text;

	while ((p = strstr(p, head))) {
		if (p == text || p[-1] == '\n')
			return true;
		p += hl;
	}
	return false;
}

/* The summary key key=, or one of its series' key_<...>=. */
static bool has_key(const char *summary, const char *key)
{
	size_t kl = strlen(key);
	const char *p = summary;

	while ((p = strstr(p, key))) {
		const char *e = p + kl;
		size_t rest = strcspn(e, " \n"); /* of this key=value */

		if ((p == summary || p[-1] == ' ') &&
		    (*e == '=' || (*e == '_' && memchr(e, '=', rest))))
			return true;
		p = e;
	}
	return false;
}

int metrics_check_all(const char *prom, const char *summary, char *why,
		      size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(listed) / sizeof(listed[0]); i++) {
		const struct listed *m = &listed[i];
		char head[256];

		snprintf(head, sizeof(head), "# HELP ebpf_profiler_%s ", m->name);
		if (!has_line(prom, head))
			goto bad;
		snprintf(head, sizeof(head), "# TYPE ebpf_profiler_%s %s\n", m->name,
			 m->type);
		if (!has_line(prom, head))
			goto bad;
		snprintf(head, sizeof(head), "ebpf_profiler_%s ", m->name);
		if (!has_line(prom, head)) {
			snprintf(head, sizeof(head), "ebpf_profiler_%s{", m->name);
			if (!has_line(prom, head))
				goto bad;
		}
		if (!has_key(summary, m->key)) {
			snprintf(why, len, "%s: no summary key %s", m->name, m->key);
			return -1;
		}
		continue;
bad:
		snprintf(why, len, "%s: no line \"%s\"", m->name, head);
		return -1;
	}
	return (int)i;
}
