/* SPDX-License-Identifier: GPL-2.0 */
/* The test runtime's unwinder (layout and purpose: test_runtime.h). */
#ifndef EP_TEST_BPF_H
#define EP_TEST_BPF_H

#include "maps.bpf.h"
#include "test_runtime.h"

HASH_MAP(test_procs, __u32, struct test_proc, 256);

/* One record per loop invocation, innermost first: the first from
 * ep_fakert_current, each next from the record's prev (the cursor,
 * icur[INTERP_TEST][0]; [1] is set once the walk started). */
static __always_inline int test_unwind(struct scratch *s, __u64 lookup)
{
	struct test_proc *p =
		INTERP_PROC(s, test_procs, TEST, struct test_proc);
	__u64 *cur = s->st.icur[INTERP_TEST];
	struct test_frame f;
	__u64 rec = cur[0];

	if (!p || lookup < p->eval_lo || lookup >= p->eval_hi)
		return INTERP_NOT_HERE;
	if (!cur[1]) {
		cur[1] = 1;
		if (read_user(&rec, sizeof(rec), p->current))
			rec = 0;
	}
	if (!rec || read_user(&f, sizeof(f), rec)) {
		interp_end(s, INTERP_TEST, METRIC_ERR_TEST_READ);
		return INTERP_NOT_HERE;
	}
	if (f.magic != TEST_FRAME_MAGIC) {
		interp_end(s, INTERP_TEST, METRIC_ERR_TEST_MAGIC);
		return INTERP_NOT_HERE;
	}
	if (!interp_push(s, INTERP_TEST, 0, f.code, 0, 1))
		return INTERP_NOT_HERE;
	cur[0] = f.prev;
	if (!f.prev)
		interp_end(s, INTERP_TEST, 0);
	return INTERP_REPLACED;
}

#endif
