// SPDX-License-Identifier: Apache-2.0
/* The CPython builds the Python tests use; see python_interps.h. */
#include "python_interps.h"

#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "debugfind.h"
#include "elfmap.h"

char *pyi_run(const char *fmt, ...)
{
	char cmd[4096], *buf = NULL;
	size_t len = 0, cap = 0;
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	for (;;) {
		size_t n;

		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb)
				break;
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, p);
		if (!n)
			break;
		len += n;
	}
	if (pclose(p) != 0 || !buf) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

/* The file holding path's DWARF: path itself, or the separate debug file
 * named by its build id under /usr/lib/debug (what gdb loads). */
static void find_dwarf(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct elfm *e = NULL;
	const uint8_t *id;
	char dbg[PATH_MAX];
	size_t n;

	out[0] = 0;
	if (fd < 0)
		return;
	if (elfm_open_fd(fd, &e))
		goto cleanup;
	if (elfm_section(e, ".debug_info"))
		snprintf(out, cap, "%s", path);
	else if (elfm_build_id(e, &id, &n) == 0 &&
		 dbgf_build_id_path(id, n, NULL, dbg, sizeof(dbg)) == 0 &&
		 access(dbg, R_OK) == 0)
		snprintf(out, cap, "%s", dbg);
cleanup:
	elfm_free(e);
	close(fd);
}

static void add(struct pyi *p, const char *label, const char *bin,
		const char *lib, unsigned minor)
{
	snprintf(p->label, sizeof(p->label), "%s", label);
	snprintf(p->bin, sizeof(p->bin), "%s", bin);
	snprintf(p->lib, sizeof(p->lib), "%s", lib);
	p->minor = minor;
	find_dwarf(lib, p->dbg, sizeof(p->dbg));
}

/* The newest "3.<minor>.<patch>" under dir (plain releases only). */
static bool newest_pyenv(const char *dir, unsigned minor, char *out,
			 size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int best = -1;

	if (!d)
		return false;
	while ((de = readdir(d))) {
		unsigned maj, min, patch;
		int n = 0;

		if (sscanf(de->d_name, "%u.%u.%u%n", &maj, &min, &patch, &n) !=
			    3 ||
		    de->d_name[n] || maj != 3 || min != minor ||
		    (int)patch <= best)
			continue;
		if (snprintf(out, cap, "%s", de->d_name) >= (int)cap)
			continue;
		best = (int)patch;
	}
	closedir(d);
	return best >= 0;
}

int pyi_find(struct pyi *list, int max)
{
	char root[PATH_MAX] = "", *out;
	const char *env = getenv("PYENV_ROOT");
	unsigned minor;
	int n = 0;

	if (access("/usr/bin/python3.11", X_OK) == 0 && n < max)
		add(&list[n++], "debian-3.11", "/usr/bin/python3.11",
		    "/usr/bin/python3.11", 11);
	else
		test_note("no /usr/bin/python3.11: Debian build skipped");
	out = pyi_run("pyenv root 2>/dev/null");
	if (out && out[0]) {
		out[strcspn(out, "\n")] = 0;
		snprintf(root, sizeof(root), "%s", out);
	} else if (env && env[0]) {
		snprintf(root, sizeof(root), "%s", env);
	} else if (getenv("HOME")) {
		snprintf(root, sizeof(root), "%s/.pyenv", getenv("HOME"));
	}
	free(out);
	for (minor = 8; minor <= 13; minor++) {
		char vdir[PATH_MAX], ver[64], bin[PATH_MAX], lib[PATH_MAX];
		char label[80];

		snprintf(vdir, sizeof(vdir), "%s/versions", root);
		if (!root[0] || !newest_pyenv(vdir, minor, ver, sizeof(ver))) {
			test_note("no pyenv build of 3.%u: skipped", minor);
			continue;
		}
		if (snprintf(bin, sizeof(bin), "%s/%s/bin/python3.%u", vdir,
			     ver, minor) >= (int)sizeof(bin) ||
		    snprintf(lib, sizeof(lib), "%s/%s/lib/libpython3.%u.so.1.0",
			     vdir, ver, minor) >= (int)sizeof(lib) ||
		    access(bin, X_OK) != 0) {
			test_note("pyenv %s: no %s: skipped", ver, bin);
			continue;
		}
		/* Built without --enable-shared: CPython is in the binary. */
		if (access(lib, R_OK) != 0)
			snprintf(lib, sizeof(lib), "%s", bin);
		if (snprintf(label, sizeof(label), "pyenv-%s", ver) >=
		    (int)sizeof(label))
			continue;
		if (n < max)
			add(&list[n++], label, bin, lib, minor);
	}
	return n;
}

void pyi_each(void (*fn)(const struct pyi *p))
{
	/* The runner keeps the subtest's name until the test ends. */
	static struct pyi list[PYI_MAX];
	int i, n = pyi_find(list, PYI_MAX);

	if (n == 0) {
		test_skip("no CPython 3.8-3.13 on this machine");
		return;
	}
	for (i = 0; i < n && !test_skipped(); i++)
		if (test_start_subtest(list[i].label))
			fn(&list[i]);
}
