// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle events for the process manager: exec (load the new
 * image's mappings at once, before the first sample asks) and exit (drop
 * the process' state).  BTF tracepoints need no tracefs and see typed
 * arguments, so the 6.16 change of sched_process_exit's record layout does
 * not affect them.
 */
#include "maps.bpf.h"

static __always_inline void send_event(__u32 pid, __u32 type)
{
	struct pid_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		metric_inc(METRIC_EVENTS_FULL);
		return;
	}
	ev->ktime = bpf_ktime_get_ns();
	ev->pid = pid;
	ev->type = type;
	ev->addr = 0;
	bpf_ringbuf_submit(ev, 0);
	metric_inc(METRIC_EVENTS_SENT);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 pid = p->tgid;

	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return 0;
	if (filter_cgroups && !cgroup_wanted())
		return 0;
	/* a new image: whatever was known of the old one is stale */
	bpf_map_delete_elem(&pid_info, &pid);
	send_event(pid, PEV_EXEC);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 pid = p->tgid;

	/* do_exit() decrements signal->live before this tracepoint: zero
	 * means the whole thread group is gone */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!bpf_map_lookup_elem(&pid_info, &pid))
		return 0;
	send_event(pid, PEV_EXIT);
	return 0;
}
