// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle events for the process manager: exec (forget the old
 * image; the new one loads on its first sample) and exit (drop the
 * process' state).  Raw tracepoints need no tracefs, see the
 * tracepoint's arguments rather than its record (so the 6.16 change of
 * sched_process_exit's record layout does not affect them; the task stays
 * the first argument), and, unlike BTF tracepoints, need no kernel BTF to
 * attach: libbpf then never parses /sys/kernel/btf/vmlinux when the CO-RE
 * relocations come from the cached minimal BTF (userspace/kbtf.c).
 */
#include "maps.bpf.h"

static __always_inline void send_event(__u32 pid, __u32 type)
{
	struct pid_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	/* the counters: the CPU's (its sampler's scratch; a sample that
	 * interrupts this program touches its other parts only) */
	struct scratch *s = get_scratch();

	if (!ev) {
		if (s)
			metric_inc(s, METRIC_EVENTS_FULL);
		return;
	}
	ev->ktime = bpf_ktime_get_ns();
	ev->pid = pid;
	ev->type = type;
	ev->addr = 0;
	/* neither is urgent (an exec only forgets, an exit lingers): the
	 * drain thread's next pass takes them, so a host's hundreds of execs
	 * a second do not each wake it */
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
	if (s)
		metric_inc(s, METRIC_EVENTS_SENT);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	bool loaded;
	__u64 key;

	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return 0;
	if (filter_cgroups && !cgroup_wanted())
		return 0;
	/* a new image: whatever was known of the old one is stale, and
	 * its first sample asks for its load at once (a fork's child
	 * sampled before its exec was reported; the rate limit would hold
	 * the new image's report back for report_interval_ns) */
	loaded = bpf_map_delete_elem(&pid_info, &pid) == 0;
	pid_info_changed(pid);
	key = (__u64)pid << 8 | PEV_UNKNOWN_PID;
	bpf_map_delete_elem(&reported, &key);
	key = (__u64)pid << 8 | PEV_UNKNOWN_PC;
	bpf_map_delete_elem(&reported, &key);
	/* userland has mappings to forget only for a process it loaded
	 * (it writes pid_info last): a shell's or a build's children,
	 * exec'd before any sample, cost it nothing */
	if (loaded)
		send_event(pid, PEV_EXEC);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	/* a thread's exit: its off-CPU stack would wait for a switch-in
	 * that never comes (its last switch-out keeps none) */
	if (offcpu_threshold)
		bpf_map_delete_elem(&offcpu_stacks, &tid);
	/* do_exit() decrements signal->live before this tracepoint: zero
	 * means the whole thread group is gone */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!bpf_map_lookup_elem(&pid_info, &pid))
		return 0;
	send_event(pid, PEV_EXIT);
	return 0;
}
