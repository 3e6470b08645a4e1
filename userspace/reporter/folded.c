// SPDX-License-Identifier: Apache-2.0
/*
 * Folded ("collapsed") stacks: "comm;root;...;leaf count\n", the input of
 * flamegraph.pl, inferno and speedscope.  Identical lines (same thread name
 * and frames, any tid or cpu) are merged; lines are sorted bytewise, so the
 * output of a batch is always the same.  Counts are integers after one
 * space, which is what speedscope's parser insists on.
 */
#include "rep_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


struct line_sort {
	const char *const *keys;
};

static int cmp_lines(const void *a, const void *b, void *arg)
{
	const struct line_sort *ls = arg;

	return strcmp(ls->keys[*(const uint32_t *)a], ls->keys[*(const uint32_t *)b]);
}

int rep_encode_folded(const struct rep_batch *b, char **buf, size_t *len)
{
	struct rep_names names = { 0 };
	struct intern lines = { 0 };
	struct rep_buf line = { 0 }, out = { 0 };
	uint64_t *counts = NULL;
	uint32_t *path = NULL, *order = NULL, maxn = 0, i, j;
	const char *const *keys;
	size_t n_lines;
	int err;

	err = rep_names_init(&names, b);
	if (err)
		goto cleanup;
	for (i = 0; i < b->n_stacks; i++)
		if (b->stacks[i].n > maxn)
			maxn = b->stacks[i].n;
	path = calloc(maxn + 1, sizeof(*path));
	/* a line per sample at most */
	counts = calloc(b->n_samples + 1, sizeof(*counts));
	if (!path || !counts)
		goto nomem;
	for (i = 0; i < b->n_samples; i++) {
		const struct rep_sample *s = &b->samples[i];
		uint32_t n = rep_sample_path(b, s, path);
		int64_t id;

		if (!s->count)
			continue;
		line.len = 0;
		rep_buf_puts(&line, rep_thread_label(b, s));
		if (line.err)
			goto nomem;
		rep_name_sanitize(line.p);
		for (j = 0; j < n; j++) {
			rep_buf_add(&line, ";", 1);
			rep_buf_puts(&line, names.loc[path[j]]);
		}
		if (line.err)
			goto nomem;
		id = intern_add(&lines, line.p, line.len, NULL);
		if (id < 0)
			goto nomem;
		counts[id] += s->count;
	}
	order = calloc(lines.n + 1, sizeof(*order));
	if (!order)
		goto nomem;
	keys = (const char *const *)intern_keys(&lines, &n_lines);
	for (i = 0; i < n_lines; i++)
		order[i] = i;
	qsort_r(order, n_lines, sizeof(*order), cmp_lines,
		&(struct line_sort){ keys });
	for (i = 0; i < n_lines; i++)
		rep_buf_printf(&out, "%s %" PRIu64 "\n", keys[order[i]],
			       counts[order[i]]);
	err = rep_buf_take(&out, buf, len);
	goto cleanup;
nomem:
	err = -ENOMEM;
cleanup:
	rep_buf_free(&out);
	rep_buf_free(&line);
	intern_free(&lines);
	rep_names_free(&names);
	free(counts);
	free(path);
	free(order);
	return err;
}
