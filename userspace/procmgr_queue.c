// SPDX-License-Identifier: Apache-2.0
/*
 * The process manager's request queue (bounded at PM_REQ_MAX, requests for
 * one pid merged) and its batches of syncs (pm_sync_many, pm_scan_running).
 */
#include "procmgr.h"
#include "procmgr_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "arr.h"
#include "log.h"

/* ---- the request queue ------------------------------------------------ */

int pm_request(struct pm *pm, pid_t pid, unsigned why)
{
	bool added;
	uint64_t *seq = hm_slot(&pm->req_by_pid, (uint64_t)pid, &added);

	if (seq && !added) {
		pm->reqs[*seq % PM_REQ_MAX].why |= why;
		pm->st.requests_merged++;
		return 0;
	}
	if (!seq || pm->req_tail - pm->req_head >= PM_REQ_MAX) {
		if (seq)
			hm_del(&pm->req_by_pid, (uint64_t)pid);
		pm->st.requests_dropped++;
		return -ENOSPC;
	}
	*seq = pm->req_tail;
	pm->reqs[pm->req_tail % PM_REQ_MAX] = (struct pm_req){ pid, why };
	pm->req_tail++;
	pm->st.requests++;
	return 0;
}

uint32_t pm_pending(struct pm *pm)
{
	return (uint32_t)(pm->req_tail - pm->req_head);
}

bool pm_is_pending(struct pm *pm, pid_t pid)
{
	uint64_t seq;

	return hm_get(&pm->req_by_pid, (uint64_t)pid, &seq);
}

int pm_service(struct pm *pm, uint64_t budget_ns)
{
	uint64_t t0 = exe_now_ns();
	int n = 0;

	while (pm->req_head != pm->req_tail) {
		struct pm_req r = pm->reqs[pm->req_head % PM_REQ_MAX];

		if (n && budget_ns && exe_now_ns() - t0 >= budget_ns)
			break;
		/* out of the queue first: a hook that runs in pm_sync may
		 * queue again */
		pm->req_head++;
		hm_del(&pm->req_by_pid, (uint64_t)r.pid);
		/* an exec first: a sync, asked before it or after, reads
		 * the new image */
		if (r.why & PM_REQ_EXEC)
			pm_exec(pm, r.pid);
		if (r.why & PM_REQ_SYNC)
			pm_sync(pm, r.pid);
		if (r.why & PM_REQ_EXIT)
			pm_exit(pm, r.pid);
		pm->st.requests_served++;
		n++;
	}
	return n;
}

/* Load pids in turn, each file opened once, until *stop (set by another
 * thread; stop may be NULL), then queue the rest: the poll loop loads
 * them in this order. */
static int sync_until(struct pm *pm, const pid_t *pids, int n,
		      const bool *stop)
{
	int i, synced = 0;

	hm_init(&pm->scan_files);
	pm->scanning = true;
	for (i = 0; i < n; i++) {
		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			break;
		if (pm_sync(pm, pids[i]) == 0)
			synced++;
	}
	pm->scanning = false;
	hm_free(&pm->scan_files);
	for (; i < n; i++)
		pm_request(pm, pids[i], PM_REQ_SYNC);
	return synced;
}

int pm_sync_many(struct pm *pm, const pid_t *pids, int n)
{
	return sync_until(pm, pids, n, NULL);
}

/* A process the scan looked at: the CPU time it had used by the first
 * look (to tell whether it ran during the scan), and its share of a CPU
 * since it started, in thousandths. */
struct scan_proc {
	pid_t pid;
	bool running;
	uint32_t share;
	uint64_t ticks;
};

/* Clock ticks since boot, as /proc/PID/stat gives a start time. */
static uint64_t boot_ticks(long hz)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * (uint64_t)hz +
	       (uint64_t)ts.tv_nsec / (1000000000ULL / (uint64_t)hz);
}

/* The running ones first, then by share: the order they are sampled in. */
static int by_urgency(const void *a, const void *b)
{
	const struct scan_proc *x = a, *y = b;

	if (x->running != y->running)
		return x->running ? -1 : 1;
	return x->share > y->share ? -1 : x->share < y->share;
}

/* sync_until over the scan's choice, in its order (pids: room for n). */
static int load_or_queue(struct pm *pm, const struct scan_proc *cs,
			 uint32_t n, pid_t *pids, const bool *stop)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pids[i] = cs[i].pid;
	return sync_until(pm, pids, (int)n, stop);
}

/*
 * Which processes are sampled first once sampling is live: those that run
 * often.  The main thread's state alone misses most of them: a runtime
 * that works 2 ms every 10 ms is asleep at most instants, and a JVM's main
 * thread sleeps for good while others work.  /proc/PID/stat also gives the
 * CPU time of the whole thread group and the start time, in the same
 * small read: a process that used PM_SCAN_BUSY_PERMILLE of a CPU since it
 * started runs often enough to be sampled soon, and a sleeper's share is
 * nil (3,000 of them load nothing).  The shares sum to at most the number
 * of CPUs, so at most 1000 / PM_SCAN_BUSY_PERMILLE processes per CPU
 * qualify.  A second read after the first loads catches the ones that ran
 * during the scan (whose average is low: a long-lived daemon that just got
 * busy), at the clock tick's resolution.  /proc/PID/sched's exec_start
 * would date the last run exactly, but it is one thread's (the JVM's main
 * thread again), a 2 KiB text, and needs CONFIG_SCHED_DEBUG.
 */
int pm_scan_running(struct pm *pm, const bool *stop)
{
	DIR *d = opendir("/proc");
	struct scan_proc *cs = NULL, *rest = NULL;
	pid_t pids[PM_SCAN_MAX]; /* what each load_or_queue loads, in order */
	struct dirent *e;
	uint32_t n = 0, cap = 0, n_rest = 0, cap_rest = 0, i;
	long hz = sysconf(_SC_CLK_TCK);
	pid_t self = getpid();
	uint64_t now;
	int synced;

	if (!d)
		return -errno;
	if (hz <= 0)
		hz = 100;
	now = boot_ticks(hz);
	while ((e = readdir(d))) {
		struct pm_stat st;
		struct scan_proc c;
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		uint64_t age;

		/* not the daemon itself: it is running now because it scans
		 * (it loads on its first sample, as any other process) */
		if (*end || pid <= 0 || pid > INT32_MAX || pid == self ||
		    pm_proc_stat((pid_t)pid, &st))
			continue;
		pm->st.scan_listed++;
		age = now > st.start ? now - st.start : 1;
		c = (struct scan_proc){ (pid_t)pid, st.state == 'R',
					st.ticks * 1000 >= age * 1000 ?
						1000 :
						(uint32_t)(st.ticks * 1000 / age),
					st.ticks };
		/* two ticks at least: a share of one tick is a fresh
		 * process' start-up, not a habit */
		if (!c.running && (c.share < PM_SCAN_BUSY_PERMILLE ||
				   st.ticks < 2)) {
			if (!ARR_PUSH(rest, n_rest, cap_rest, PM_SCAN_MAX * 64))
				rest[n_rest++] = c;
			continue;
		}
		if (n >= PM_SCAN_MAX || ARR_PUSH(cs, n, cap, PM_SCAN_MAX)) {
			pm->st.scan_capped++;
			continue;
		}
		cs[n++] = c;
		if (c.running)
			pm->st.scan_running++;
		else
			pm->st.scan_busy++;
	}
	closedir(d);
	qsort(cs, n, sizeof(*cs), by_urgency);
	for (i = 0; i < n; i++)
		log_debug("start-up scan: pid %d %s (%u/1000 of a CPU since "
			  "its start)", (int)cs[i].pid,
			  cs[i].running ? "running" : "busy", cs[i].share);
	synced = load_or_queue(pm, cs, n, pids, stop);
	/* the second look: what ran while those loaded */
	n = 0;
	for (i = 0; i < n_rest; i++) {
		struct pm_stat st;

		if (pm_proc_stat(rest[i].pid, &st) ||
		    (st.state != 'R' && st.ticks == rest[i].ticks))
			continue;
		if (pm->st.scan_running + pm->st.scan_busy + n >= PM_SCAN_MAX ||
		    ARR_PUSH(cs, n, cap, PM_SCAN_MAX)) {
			pm->st.scan_capped++;
			continue;
		}
		cs[n++] = rest[i];
		pm->st.scan_grew++;
		log_debug("start-up scan: pid %d ran during the scan",
			  (int)rest[i].pid);
	}
	free(rest);
	synced += load_or_queue(pm, cs, n, pids, stop);
	free(cs);
	return synced;
}
