/* SPDX-License-Identifier: GPL-2.0 */
/* The HotSpot unwinder: the walk is described in hotspot.h. */
#ifndef EP_HOTSPOT_BPF_H
#define EP_HOTSPOT_BPF_H

#include "maps.bpf.h"
#include "hotspot.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct hotspot_proc);
} hotspot_procs SEC(".maps") __weak;

/* One interpreted frame per call: the native step then unwinds it by its
 * frame pointer, and the next frame (interpreted again, the call stub,
 * or native code) comes back here or goes on natively. */
static __always_inline int hotspot_unwind(struct scratch *s, __u64 lookup)
{
	struct hotspot_proc *p;
	__u64 fp = s->st.regs[R_FP], method = 0, bcp = 0;

	/* only anonymous code: libjvm.so's own frames are native */
	if (s->st.cur.file_id)
		return INTERP_NOT_HERE;
	p = bpf_map_lookup_elem(&hotspot_procs, &s->st.pid);
	if (!p) {
		/* a JVM attached before its interpreter existed: ask for
		 * a sync (rate-limited), so its tables are read again */
		metric_inc(METRIC_HOTSPOT_NOT_READY);
		report_pid(s->st.pid, PEV_UNKNOWN_PC, lookup, false);
		return INTERP_NOT_HERE;
	}
	if (lookup < p->interp_lo || lookup >= p->interp_hi)
		return INTERP_NOT_HERE;
	if (!fp || bpf_probe_read_user(&method, 8,
				       (const void *)(fp + p->method_slot)) ||
	    bpf_probe_read_user(&bcp, 8, (const void *)(fp + p->bcp_slot))) {
		metric_inc(METRIC_ERR_HOTSPOT_READ);
		return INTERP_NOT_HERE;
	}
	if (!method)
		return INTERP_NOT_HERE;
	/* at the leaf the interpreter keeps the bcp in r13 and writes its
	 * slot only at calls: both go, userland takes the one inside the
	 * method's bytecodes */
	if (!(s->st.flags & ST_RETURN_ADDR)) {
		if (!push_frame(s, FRAME_WORD(FRAME_INTERP(INTERP_HOTSPOT), 0,
					      s->st.regs[13]),
				method, bcp, 2))
			return INTERP_NOT_HERE;
	} else if (!push_frame(s, FRAME_WORD(FRAME_INTERP(INTERP_HOTSPOT), 0,
					     bcp),
			       method, 0, 1)) {
		return INTERP_NOT_HERE;
	}
	s->st.n_interp[INTERP_HOTSPOT]++;
	return INTERP_REPLACED;
}

#endif
