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

#include "arr.h"

/* ---- the request queue ------------------------------------------------ */

int pm_request(struct pm *pm, pid_t pid, unsigned why)
{
	uint64_t seq;

	if (hm_get(&pm->req_by_pid, (uint64_t)pid, &seq)) {
		pm->reqs[seq % PM_REQ_MAX].why |= why;
		pm->st.requests_merged++;
		return 0;
	}
	if (pm->req_tail - pm->req_head >= PM_REQ_MAX ||
	    hm_put(&pm->req_by_pid, (uint64_t)pid, pm->req_tail)) {
		pm->st.requests_dropped++;
		return -ENOSPC;
	}
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

int pm_sync_many(struct pm *pm, const pid_t *pids, int n)
{
	int i, synced = 0;

	hm_init(&pm->scan_files);
	pm->scanning = true;
	for (i = 0; i < n; i++)
		if (pm_sync(pm, pids[i]) == 0)
			synced++;
	pm->scanning = false;
	hm_free(&pm->scan_files);
	return synced;
}

int pm_scan_running(struct pm *pm)
{
	DIR *d = opendir("/proc");
	pid_t *pids = NULL;
	struct dirent *e;
	uint32_t n = 0, cap = 0;
	int synced;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX ||
		    pm_proc_state((pid_t)pid) != 'R')
			continue;
		if (ARR_PUSH(pids, n, cap, INT32_MAX))
			break; /* load those listed so far */
		pids[n++] = (pid_t)pid;
	}
	closedir(d);
	synced = pm_sync_many(pm, pids, (int)n);
	free(pids);
	return synced;
}
