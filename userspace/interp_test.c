// SPDX-License-Identifier: Apache-2.0
/*
 * The test runtime's module (bpf/test_runtime.h says what the runtime is): found
 * by its two symbols, attached by their addresses, a frame named from the
 * frame record in the process.  Everything a real runtime module does, in
 * its smallest form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfmap.h"
#include "interp.h"
#include "test_runtime.h"

#define TEST_INFO_FORMAT 1

/* What detection keeps (store record): ELF addresses. */
struct test_info {
	uint32_t format;
	uint32_t pad;
	uint64_t eval_lo, eval_hi, current;
};

static int test_detect(void *state, const struct interp_file *file,
		       void **data, size_t *len)
{
	static const char *const names[] = { "ep_fakert_eval",
					     "ep_fakert_current" };
	uint64_t value[2] = { 0 }, size[2] = { 0 };
	struct test_info *info;

	(void)state;
	if (elfm_find_syms(file->elf, names, 2, value, size) != 2 || !size[0])
		return -ENOENT;
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	*info = (struct test_info){ .format = TEST_INFO_FORMAT,
				    .eval_lo = value[0],
				    .eval_hi = value[0] + size[0],
				    .current = value[1] };
	*data = info;
	*len = sizeof(*info);
	return 0;
}

static int test_check(const void *record)
{
	const struct test_info *info = record;

	return info->eval_hi > info->eval_lo ? 0 : -EINVAL;
}

static int test_attach(void *state, struct interp_mgr *im,
		       const struct interp_attach *a)
{
	const struct test_info *info = a->files[0].data;
	uint64_t bias = a->files[0].bias;
	uint32_t key = (uint32_t)a->pid;
	struct test_proc tp = {
		.eval_lo = info->eval_lo + bias,
		.eval_hi = info->eval_hi + bias,
		.current = info->current + bias,
	};

	(void)state;
	return interp_map_update(im, INTERP_TEST, &key, &tp);
}

/* One code object's name and line into out. */
static int test_code_name(pid_t pid, uint64_t addr, struct test_code *code,
			  struct interp_symbol *out)
{
	char name[64];
	int err;

	err = interp_read_process(NULL, pid, addr, code, sizeof(*code));
	if (err)
		return err;
	if (code->magic != TEST_CODE_MAGIC)
		return -EINVAL;
	err = interp_read_process(NULL, pid, code->name, name, sizeof(name));
	if (err)
		return err;
	name[sizeof(name) - 1] = 0;
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->file, sizeof(out->file), "fakert");
	out->line = (uint32_t)code->line;
	return 0;
}

/* The frame's code, then the codes it inlined, one into the next: out
 * innermost first, as the interface asks (a chain deeper than max keeps
 * its innermost max, shifting the outer ones out). */
static int test_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			  struct interp_symbol *out, unsigned max)
{
	struct interp_symbol sym;
	struct test_code code;
	uint64_t addr;
	unsigned n = 0, depth, i;
	int err;

	(void)state;
	if (f->n_payload < 1)
		return -EINVAL;
	for (addr = f->payload[0], depth = 0; addr && depth < INTERP_CHAIN_MAX;
	     addr = code.inlined, depth++) {
		err = test_code_name(pid, addr, &code, &sym);
		if (err)
			return err;
		if (n == max)
			n--;
		/* the newest (innermost) first: shift the outer ones */
		for (i = n; i > 0; i--)
			out[i] = out[i - 1];
		sym.address = out[0].address;
		out[0] = sym;
		n++;
	}
	return n;
}

const struct interp_module interp_module_test = {
	INTERP_MODULE_METRICS(TEST_METRICS),
	.opt_in = true,
	INTERP_MODULE_DATA(test, struct test_info, TEST_INFO_FORMAT),
	.detect = test_detect,
	.check = test_check,
	.attach = test_attach,
	.symbolize = test_symbolize,
};
