// SPDX-License-Identifier: Apache-2.0
#include "interp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_python.h"
#include "log.h"
#include "store.h"

struct interp_mgr {
	struct bpfmaps *bm;
	struct store *store;
	bool python;
	struct py_ctx *py;
	struct interp_stats st;
};

static int parse_tracers(struct interp_mgr *im, const char *tracers)
{
	const char *p = tracers;

	if (!tracers || !strcmp(tracers, "all")) {
		im->python = true;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 6 && !strncmp(p, "python", 6))
			im->python = true;
		else if (n == 6 && !strncmp(p, "native", 6))
			; /* always on */
		else if (n) {
			fprintf(stderr,
				"ebpf-profiler: -tracers: unknown tracer \"%.*s\" "
				"(known: native, python)\n",
				(int)n, p);
			return -EINVAL;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

int interp_mgr_new(struct bpfmaps *bm, struct store *store,
		   const char *tracers, struct interp_mgr **out)
{
	struct interp_mgr *im = calloc(1, sizeof(*im));
	int err;

	*out = NULL;
	if (!im)
		return -ENOMEM;
	im->bm = bm;
	im->store = store;
	err = parse_tracers(im, tracers);
	if (!err && im->python)
		err = py_ctx_new(NULL, &im->py);
	if (err) {
		free(im);
		return err;
	}
	*out = im;
	return 0;
}

void interp_mgr_free(struct interp_mgr *im)
{
	if (!im)
		return;
	py_ctx_free(im->py);
	free(im);
}

bool interp_python_enabled(const struct interp_mgr *im)
{
	return im && im->python;
}

/* A file's detection result, from the store or computed and stored.  An
 * empty record means "not CPython". */
static int python_detect(struct interp_mgr *im, struct exe_file *f, int fd,
			 struct py_info *info)
{
	void *buf = NULL;
	size_t len = 0;
	int err;

	if (im->store &&
	    store_get(im->store, f->id.b, STORE_KIND_PYTHON, &buf, &len) == 0) {
		err = -ENOENT;
		if (len == sizeof(*info)) {
			memcpy(info, buf, sizeof(*info));
			if (info->format == PY_INFO_FORMAT)
				err = py_info_check(info);
		} else if (len != 0) {
			err = -EINVAL;
		}
		free(buf);
		if (err != -EINVAL) {
			im->st.detect_cached++;
			return err;
		}
	}
	err = py_detect_fd(fd, f->path, 0, info);
	if (im->store && (err == 0 || err == -ENOENT || err == -ENOTSUP))
		store_put(im->store, f->id.b, STORE_KIND_PYTHON, info,
			  err ? 0 : sizeof(*info));
	return err;
}

void interp_detect(void *arg, struct exe_file *f, int fd)
{
	struct interp_mgr *im = arg;
	struct py_info info;

	if (!im->python || f->is_vdso)
		return;
	if (python_detect(im, f, fd, &info))
		return;
	f->interp_data = malloc(sizeof(info));
	if (!f->interp_data)
		return;
	memcpy(f->interp_data, &info, sizeof(info));
	f->interp = INTERP_PYTHON;
	im->st.files_python++;
	log_info("file %s: CPython %u.%u", f->path, info.major, info.minor);
}

void interp_synced(void *arg, struct pm_proc *p)
{
	struct interp_mgr *im = arg;
	const struct pm_mapping *m = NULL;
	struct py_proc pp;
	uint32_t i, key = (uint32_t)p->pid;
	bool had;

	if (!im->python)
		return;
	for (i = 0; i < p->n_maps; i++)
		if (p->maps[i].file && p->maps[i].file->interp == INTERP_PYTHON) {
			m = &p->maps[i];
			break;
		}
	if (!m) {
		interp_forget(im, p->pid);
		return;
	}
	/* a resync replaces the process: count it once */
	had = py_ctx_proc(im->py, p->pid) != NULL;
	/* userland first: it refuses a layout it cannot read safely, and
	 * then BPF does not get it either */
	if (py_ctx_add_proc(im->py, p->pid, m->file->interp_data, m->bias)) {
		interp_forget(im, p->pid);
		return;
	}
	py_proc_fill(m->file->interp_data, m->bias, &pp);
	if (bm_update(im->bm, BM_PY_PROCS, &key, &pp)) {
		im->st.map_full++;
		log_warn_once("py_procs map is full: Python frames of new processes are not unwound");
		if (had)
			im->st.procs_python--;
		py_ctx_remove_proc(im->py, p->pid);
		return;
	}
	if (!had)
		im->st.procs_python++;
}

void interp_forget(void *arg, pid_t pid)
{
	struct interp_mgr *im = arg;
	uint32_t key = (uint32_t)pid;

	if (!im->python)
		return;
	if (py_ctx_proc(im->py, pid)) {
		py_ctx_remove_proc(im->py, pid);
		im->st.procs_python--;
	}
	bm_remove(im->bm, BM_PY_PROCS, &key);
}

int interp_frame(void *arg, uint32_t pid, unsigned kind, __u64 data,
		 __u64 payload, struct rep_location *out, char *name,
		 size_t name_len, char *file, size_t file_len)
{
	struct interp_mgr *im = arg;
	struct py_frame_info fi;
	int err;

	if (kind != FRAME_PYTHON || !im->python)
		return -ENOTSUP;
	out->kind = REP_FRAME_PYTHON;
	err = py_symbolize(im->py, (pid_t)pid, payload, (uint32_t)data, &fi);
	if (err) {
		im->st.symbolize_fail++;
		snprintf(name, name_len, "[python 0x%llx]",
			 (unsigned long long)payload);
		return 0;
	}
	im->st.symbolize_ok++;
	snprintf(name, name_len, "%s", fi.name);
	snprintf(file, file_len, "%s", fi.file);
	out->line = fi.line > 0 ? (uint32_t)fi.line : 0;
	return 0;
}

void interp_get_stats(struct interp_mgr *im, struct interp_stats *out)
{
	*out = im->st;
}
