// SPDX-License-Identifier: Apache-2.0
/*
 * The load bias of a mapping (elfaddr.h), for every layout the linkers
 * make: against the program headers of real binaries (copied from
 * readelf -lW) mapped the way a loader maps them, and against the loader
 * itself: programs and libraries this test links with ld.bfd, lld and
 * mold run, and the process manager's bias for each of their mappings is
 * compared with the kernel's (AT_ENTRY - e_entry) and ld.so's
 * (dl_iterate_phdr's dlpi_addr).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfmaps_mem.h"
#include "elfaddr.h"
#include "exemgr.h"
#include "procmgr.h"
#include "test.h"

/* ---- synthetic: program headers of real files ------------------------- */

struct load {
	uint64_t offset, vaddr, filesz;
	uint32_t flags;
};

#define R PF_R
#define RX (PF_R | PF_X)
#define RW (PF_R | PF_W)

struct layout {
	const char *name;
	struct load l[8];
	unsigned n;
	bool pie;
};

/* Each from `readelf -lW` of a binary built here (tests/workloads/split.c
 * unless said otherwise). */
static const struct layout layouts[] = {
	{ "bfd pie (separate-code)",
	  { { 0, 0, 0x6b0, R }, { 0x1000, 0x1000, 0x48d, RX },
	    { 0x2000, 0x2000, 0x2d4, R }, { 0x2dd0, 0x3dd0, 0x258, RW } }, 4, true },
	{ "bfd non-pie",
	  { { 0, 0x400000, 0x580, R }, { 0x1000, 0x401000, 0x47d, RX },
	    { 0x2000, 0x402000, 0x2cc, R }, { 0x2df8, 0x403df8, 0x230, RW } }, 4, false },
	{ "bfd -z noseparate-code",
	  { { 0, 0, 0xda4, RX }, { 0xdd0, 0x1dd0, 0x258, RW } }, 2, true },
	{ "lld pie",
	  { { 0, 0, 0x8a4, R }, { 0x8b0, 0x18b0, 0x490, RX },
	    { 0xd40, 0x2d40, 0x1d8, RW }, { 0xf18, 0x3f18, 0x48, RW } }, 4, true },
	{ "lld non-pie",
	  { { 0, 0x200000, 0x7ec, R }, { 0x7f0, 0x2017f0, 0x480, RX },
	    { 0xc70, 0x202c70, 0x1a0, RW }, { 0xe10, 0x203e10, 0x40, RW } }, 4, false },
	{ "mold pie",
	  { { 0, 0, 0x7d8, R }, { 0x7e0, 0x17e0, 0x4a7, RX },
	    { 0xc88, 0x2c88, 0x220, RW }, { 0xea8, 0x3ea8, 0x40, RW } }, 4, true },
	{ "mold non-pie",
	  { { 0, 0x200000, 0x770, R }, { 0x770, 0x201770, 0x495, RX },
	    { 0xc08, 0x202c08, 0x1f8, RW }, { 0xe00, 0x203e00, 0x40, RW } }, 4, false },
	{ "bfd text on 2 MiB pages",
	  { { 0, 0, 0x6b0, R }, { 0x200000, 0x200000, 0x48d, RX },
	    { 0x400000, 0x400000, 0x2d4, R }, { 0x5ffdd0, 0x7ffdd0, 0x258, RW } }, 4, true },
	{ "rustc 1.95 (its lld)",
	  { { 0, 0, 0x16504, R }, { 0x16510, 0x17510, 0x3f350, RX },
	    { 0x55860, 0x57860, 0x2898, RW }, { 0x580f8, 0x5b0f8, 0x9c0, RW } }, 4, true },
	{ "Chromium's libvulkan.so.1 (lld)",
	  { { 0, 0, 0x2b674, R }, { 0x2b674, 0x2c674, 0x483dc, RX },
	    { 0x73a50, 0x75a50, 0x1118, RW }, { 0x74b68, 0x77b68, 0x8, RW } }, 4, true },
	/* split text: a function in a section placed with
	 * --section-start=fartext=0x800000 gets its own PF_X segment; lld
	 * puts both executable segments on file page 0x1000 */
	{ "lld split text",
	  { { 0, 0x200000, 0x318, R }, { 0x1000, 0x800000, 0x5, RX },
	    { 0x1005, 0x801005, 0x2ff, R }, { 0x1310, 0x802310, 0x170, RX },
	    { 0x1480, 0x803480, 0x1a0, RW }, { 0x1620, 0x804620, 0x30, RW } }, 6, false },
	{ "lld split text pie",
	  { { 0, 0, 0x318, R }, { 0x1000, 0x800000, 0x5, RX },
	    { 0x1005, 0x801005, 0x3af, R }, { 0x13c0, 0x8023c0, 0x180, RX },
	    { 0x1540, 0x803540, 0x1d8, RW }, { 0x1718, 0x804718, 0x38, RW } }, 6, true },
	{ "lld split text on 2 MiB pages",
	  { { 0, 0, 0x318, R }, { 0x200000, 0x800000, 0x5, RX },
	    { 0x200005, 0xa00005, 0x3af, R }, { 0x2003c0, 0xc003c0, 0x180, RX },
	    { 0x200540, 0xe00540, 0x1d8, RW }, { 0x200718, 0x1000718, 0x38, RW } }, 6, true },
	{ "mold split text",
	  { { 0, 0x200000, 0x557, R }, { 0x560, 0x201560, 0x185, RX },
	    { 0x1000, 0x800000, 0x5, RX }, { 0x1008, 0x801008, 0x1f8, RW },
	    { 0x1200, 0x802200, 0x30, RW } }, 5, false },
	{ "bfd split text",
	  { { 0, 0, 0x650, R }, { 0x1000, 0x1000, 0x181, RX },
	    { 0x2000, 0x2000, 0x114, R }, { 0x2dd0, 0x3dd0, 0x248, RW },
	    { 0x4000, 0x800000, 0x5, RX } }, 5, true },
	/* the vDSO (6.x): one segment at address 0 */
	{ "vdso", { { 0, 0, 0x1a3f, RX } }, 1, true },
};

static const struct layout *layout(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (!strcmp(layouts[i].name, name))
			return &layouts[i];
	abort(); /* a typo in this file */
}

static unsigned segs_of(const struct layout *ly, struct ea_seg *segs)
{
	Elf64_Phdr ph[8] = { 0 };
	unsigned i;

	for (i = 0; i < ly->n; i++)
		ph[i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = ly->l[i].flags,
				      .p_offset = ly->l[i].offset,
				      .p_vaddr = ly->l[i].vaddr,
				      .p_filesz = ly->l[i].filesz,
				      .p_memsz = ly->l[i].filesz };
	return ea_segs_from_phdrs(ph, ly->n, segs, EA_MAX_SEGS);
}

#define PG(x) ((x) & ~(EA_PAGE_SIZE - 1))
#define PGUP(x) PG((x) + EA_PAGE_SIZE - 1)

/* The file-backed mappings a loader makes of ly at bias (ld.so's
 * _dl_map_segments, the kernel's elf_map: each segment from its file page
 * to the end of its last page), in address order. */
static unsigned loader_maps(const struct layout *ly, uint64_t bias,
			    struct ea_map *out)
{
	unsigned i;

	for (i = 0; i < ly->n; i++) {
		const struct load *l = &ly->l[i];

		out[i] = (struct ea_map){ bias + PG(l->vaddr),
					  bias + PGUP(l->vaddr + l->filesz),
					  PG(l->offset), l->flags };
	}
	return ly->n;
}

/* maps[which] first, then the other executable ones (all of them when
 * only_x is 0). */
static unsigned with_peers(const struct ea_map *maps, unsigned n,
			   unsigned which, uint32_t only_x, struct ea_map *out)
{
	unsigned i, k = 0;

	out[k++] = maps[which];
	for (i = 0; i < n; i++)
		if (i != which && (!only_x || (maps[i].prot & PF_X)))
			out[k++] = maps[i];
	return k;
}

TEST(elfaddr_every_mapping_of_every_layout)
{
	const uint64_t base = 0x7f1234560000ULL;
	size_t li;

	for (li = 0; li < sizeof(layouts) / sizeof(layouts[0]); li++) {
		const struct layout *ly = &layouts[li];
		uint64_t want = ly->pie ? base : 0, bias;
		struct ea_map maps[8], set[8];
		struct ea_seg segs[EA_MAX_SEGS];
		unsigned ns = segs_of(ly, segs), nm, i, k, n_exec = 0;
		char what[160];

		if (!test_start_subtest(ly->name))
			continue;
		nm = loader_maps(ly, want, maps);
		for (i = 0; i < ly->n; i++)
			n_exec += !!(ly->l[i].flags & PF_X);
		for (i = 0; i < nm; i++) {
			/* as procmgr: with the file's other executable
			 * mappings */
			if (maps[i].prot & PF_X) {
				k = with_peers(maps, nm, i, PF_X, set);
				snprintf(what, sizeof(what), "%s: r-x mapping at +0x%llx",
					 ly->name,
					 (unsigned long long)(maps[i].start - want));
				ASSERT_OK(ea_bias(segs, ns, set, k, &bias), what);
				ASSERT_EQ(bias, want, what);
				/* one executable segment: the mapping alone */
				if (n_exec == 1) {
					ASSERT_OK(ea_bias(segs, ns, &maps[i], 1, &bias),
						  what);
					ASSERT_EQ(bias, want, what);
				}
			}
			/* any mapping, with all the others */
			k = with_peers(maps, nm, i, 0, set);
			snprintf(what, sizeof(what), "%s: mapping %u with all", ly->name, i);
			ASSERT_OK(ea_bias(segs, ns, set, k, &bias), what);
			ASSERT_EQ(bias, want, what);
		}
	}
}

/* What the old rule (the first PT_LOAD whose page holds the offset) got
 * wrong: the lld text mapping is a page off. */
TEST(elfaddr_lld_text_is_not_the_rodata_segment)
{
	const struct layout *ly = layout("lld pie");
	struct ea_seg segs[EA_MAX_SEGS];
	unsigned ns = segs_of(ly, segs);
	struct ea_map text = { 0x555555555000ULL, 0x555555556000ULL, 0, RX };
	struct ea_map ro = { 0x555555554000ULL, 0x555555555000ULL, 0, R };
	uint64_t bias;

	ASSERT_OK(ea_bias(segs, ns, &text, 1, &bias), "text");
	ASSERT_EQ(bias, 0x555555554000ULL, "text bias");
	/* pc of spin (ELF 0x1a2d in that build) */
	ASSERT_EQ(ea_elf_addr(bias, 0x555555555a2dULL), 0x1a2d, "ELF address");
	ASSERT_EQ(ea_runtime_addr(bias, 0x1a2d), 0x555555555a2dULL, "and back");
	ASSERT_OK(ea_bias(segs, ns, &ro, 1, &bias), "rodata");
	ASSERT_EQ(bias, 0x555555554000ULL, "rodata bias");
}

/* lld's split text: two r-x mappings from file page 0x1000 of one size;
 * alone, each could be either segment; together they agree. */
TEST(elfaddr_split_text_settled_by_the_other_mapping)
{
	const struct layout *ly = layout("lld split text pie");
	const uint64_t base = 0x560000000000ULL;
	struct ea_seg segs[EA_MAX_SEGS];
	unsigned ns = segs_of(ly, segs);
	struct ea_map far = { base + 0x800000, base + 0x801000, 0x1000, RX };
	struct ea_map text = { base + 0x802000, base + 0x803000, 0x1000, RX };
	struct ea_map set[2] = { text, far };
	uint64_t bias;

	ASSERT_OK(ea_bias(segs, ns, set, 2, &bias), "text with far");
	ASSERT_EQ(bias, base, "text");
	set[0] = far;
	set[1] = text;
	ASSERT_OK(ea_bias(segs, ns, set, 2, &bias), "far with text");
	ASSERT_EQ(bias, base, "far");
}

TEST(elfaddr_no_segment_holds_the_offset)
{
	struct ea_seg s = { .vaddr = 0x1000, .offset = 0x1000, .filesz = 0x100,
			    .flags = RX };
	struct ea_map m = { 0x7f0000005000ULL, 0x7f0000006000ULL, 0x5000, RX };
	uint64_t bias = 1;

	ASSERT_EQ(ea_bias(&s, 1, &m, 1, &bias), -ENOENT, "past the segment");
	ASSERT_EQ(bias, 0x7f0000000000ULL, "offsets taken as addresses");
	ASSERT_EQ(ea_bias(NULL, 0, &m, 1, &bias), -ENOENT, "no segments");
}

/* Headers whose sums wrap: no wrap-around match, no crash. */
TEST(elfaddr_hostile_headers)
{
	struct ea_seg s[3] = {
		{ .vaddr = 0, .offset = UINT64_MAX - 0x10, .filesz = 0x100, .flags = RX },
		{ .vaddr = 0, .offset = 0x1000, .filesz = UINT64_MAX, .flags = RX },
		{ .vaddr = UINT64_MAX, .offset = 0, .filesz = UINT64_MAX, .flags = RX },
	};
	struct ea_map m = { 0x1000, 0x2000, 0x0, RX }, hi = { 0x1000, 0x500, 0x1000, RX };
	uint64_t bias;

	ASSERT_OK(ea_bias(s, 3, &m, 1, &bias), "segment 2 holds offset 0");
	ASSERT_EQ(bias, 0x1000 - 0 - (UINT64_MAX - 0), "its bias, modulo 2^64");
	/* end below start: treated as empty, still resolved */
	ASSERT_OK(ea_bias(s, 3, &hi, 1, &bias), "empty mapping");
}

TEST(elfaddr_segments_kept_executable_first)
{
	Elf64_Phdr ph[12] = { 0 };
	struct ea_seg out[EA_MAX_SEGS];
	unsigned i, n;

	for (i = 0; i < 12; i++) {
		ph[i].p_type = PT_LOAD;
		ph[i].p_flags = R;
		ph[i].p_offset = ph[i].p_vaddr = i * 0x1000;
		ph[i].p_filesz = 0x100;
	}
	ph[10].p_flags = ph[11].p_flags = RX;
	ph[0].p_type = PT_PHDR;
	ph[1].p_filesz = 0; /* bss only: no file pages */
	n = ea_segs_from_phdrs(ph, 12, out, EA_MAX_SEGS);
	ASSERT_EQ(n, EA_MAX_SEGS, "bounded");
	ASSERT_EQ(out[0].offset, 0xa000, "executable first");
	ASSERT_EQ(out[1].offset, 0xb000, "both");
	ASSERT_EQ(out[1].flags, RX, "with their flags");
	ASSERT_EQ(out[2].offset, 0x2000, "then the others, in file order");
	ASSERT_EQ(ea_segs_from_phdrs(ph, 12, out, 1), 1, "max 1");
	ASSERT_EQ(out[0].offset, 0xa000, "max 1: the first executable");
}

TEST(elfaddr_prot_from_maps_perms)
{
	ASSERT_EQ(ea_prot("r-xp"), RX, "r-xp");
	ASSERT_EQ(ea_prot("rw-p"), RW, "rw-p");
	ASSERT_EQ(ea_prot("rwxs"), PF_R | PF_W | PF_X, "rwxs");
	ASSERT_EQ(ea_prot("---p"), 0, "---p");
	ASSERT_EQ(ea_prot(""), 0, "empty");
}

/* ---- real binaries, real loaders -------------------------------------- */

/* Loads the libraries it is given, prints ld.so's bias of every object
 * (dl_iterate_phdr; "-" names the program), then waits to be looked at.
 * far() is in its own section: with --section-start it gets its own text
 * segment. */
static const char loader_src[] =
	"#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <link.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"__attribute__((noinline, section(\"fartext\"))) int far(int x) { return x * 3; }\n"
	"static int each(struct dl_phdr_info *i, size_t n, void *a)\n"
	"{ printf(\"%lx %s\\n\", (unsigned long)i->dlpi_addr,\n"
	"         i->dlpi_name[0] ? i->dlpi_name : \"-\"); return 0; }\n"
	"int main(int argc, char **argv)\n"
	"{ for (int i = 1; i < argc; i++) if (!dlopen(argv[i], RTLD_NOW))\n"
	"      printf(\"! %s\\n\", dlerror());\n"
	"  dl_iterate_phdr(each, 0); printf(\"ready %d\\n\", far(argc));\n"
	"  fflush(stdout); pause(); return 0; }\n";
static const char lib_src[] =
	"__attribute__((noinline, section(\"fartext\"))) int lib_far(int x) { return x + 1; }\n"
	"int lib_fn(int x) { return lib_far(x) * 2; }\n";

static bool have(const char *tool)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* Build with cc; false (and a note) when it fails. */
static bool build(const char *out, const char *src, const char *flags)
{
	char cmd[PATH_MAX * 4];

	if (snprintf(cmd, sizeof(cmd), "cc -O2 %s -o %s %s -ldl 2>%s.log", flags,
		     out, src, out) >= (int)sizeof(cmd))
		return false;
	if (system(cmd) == 0)
		return true;
	test_note("cc %s: failed (see %s.log)", flags, out);
	return false;
}

struct object {
	uint64_t bias;
	dev_t dev;
	ino_t ino;
	bool vdso, main, seen;
	char name[256];
};

/* The kernel's bias of the program: AT_ENTRY - e_entry. */
static bool kernel_bias(pid_t pid, uint64_t *bias)
{
	char path[64];
	uint64_t av[2], entry = 0;
	Elf64_Ehdr eh;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_ENTRY)
			entry = av[1];
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, &eh, sizeof(eh)) != sizeof(eh))
		entry = 0;
	close(fd);
	*bias = entry - eh.e_entry;
	return entry != 0;
}

/* Every mapping procmgr reads of pid gets the bias its object's loader
 * used.  objs[0..n) are the objects with a known bias.  Returns how many
 * mappings were checked. */
static int check_process(pid_t pid, struct object *objs, int n, const char *what)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct pm *pm = NULL;
	struct pm_proc *p;
	int checked = 0, i;
	uint32_t j;
	char msg[400];

	if (!ASSERT_OK(bm_mem_new(1 << 15, &bm), "maps") ||
	    !ASSERT_OK(exe_mgr_new(bm, NULL, &em), "exe manager") ||
	    !ASSERT_OK(pm_new(em, bm, &pm), "process manager") ||
	    !ASSERT_OK(pm_sync(pm, pid), "pm_sync"))
		goto out;
	p = pm_find(pm, pid);
	for (j = 0; p && j < p->n_maps; j++) {
		const struct pm_mapping *m = &p->maps[j];

		if (!m->file)
			continue;
		for (i = 0; i < n; i++) {
			struct object *o = &objs[i];

			if (o->vdso ? !m->file->is_vdso :
				      (m->file->dev != o->dev || m->file->ino != o->ino))
				continue;
			snprintf(msg, sizeof(msg), "%s: %s mapping %llx-%llx off %llx",
				 what, o->name, (unsigned long long)m->start,
				 (unsigned long long)m->end,
				 (unsigned long long)m->offset);
			ASSERT_EQ(m->bias, o->bias, msg);
			o->seen = true;
			checked++;
		}
	}
	for (i = 0; i < n; i++) {
		snprintf(msg, sizeof(msg), "%s: %s has an executable mapping", what,
			 objs[i].name);
		ASSERT_TRUE(objs[i].seen, msg);
	}
out:
	pm_free(pm);
	exe_mgr_free(em);
	bm_mem_free(bm);
	return checked;
}

/* Start argv with its stdout on a pipe; read its lines up to "ready"
 * into objs (name and bias from dl_iterate_phdr).  Returns the pid, or
 * -1; *n gets the objects. */
static pid_t start_loader(char *const argv[], struct object *objs, int max, int *n)
{
	int fds[2], k = 0;
	char line[600];
	pid_t pid;
	FILE *f;

	*n = 0;
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		struct object *o = &objs[k];
		unsigned long long b;
		char name[256];
		struct stat st;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "ready", 5))
			break;
		if (line[0] == '!') {
			test_note("loader: %s", line);
			continue;
		}
		if (k == max || sscanf(line, "%llx %255s", &b, name) != 2)
			continue;
		memset(o, 0, sizeof(*o));
		o->bias = b;
		snprintf(o->name, sizeof(o->name), "%s", name);
		o->vdso = !strcmp(name, "linux-vdso.so.1");
		o->main = !strcmp(name, "-");
		if (o->main)
			snprintf(line, sizeof(line), "/proc/%d/exe", (int)pid);
		if (!o->vdso && stat(o->main ? line : name, &st) == 0) {
			o->dev = st.st_dev;
			o->ino = st.st_ino;
		} else if (!o->vdso) {
			continue;
		}
		k++;
	}
	if (f)
		fclose(f);
	*n = k;
	return pid;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

struct variant {
	const char *name, *tool, *flags;
};

TEST(elfaddr_real_loaders_agree)
{
	static const struct variant vs[] = {
		{ "bfd-pie", NULL, "-fpie -pie" },
		{ "bfd-nopie", NULL, "-fno-pie -no-pie" },
		{ "bfd-hugepage", NULL,
		  "-fpie -pie -Wl,-zcommon-page-size=2097152 -Wl,-zmax-page-size=2097152" },
		{ "bfd-noseparate", NULL, "-fpie -pie -Wl,-z,noseparate-code" },
		{ "bfd-splittext", NULL, "-fpie -pie -Wl,--section-start=fartext=0x800000" },
		{ "lld-pie", "ld.lld", "-fpie -pie -fuse-ld=lld" },
		{ "lld-nopie", "ld.lld", "-fno-pie -no-pie -fuse-ld=lld" },
		{ "lld-splittext", "ld.lld",
		  "-fpie -pie -fuse-ld=lld -Wl,--section-start=fartext=0x800000" },
		{ "lld-splittext-nopie", "ld.lld",
		  "-fno-pie -no-pie -fuse-ld=lld -Wl,--section-start=fartext=0x800000" },
		{ "mold-pie", "ld.mold", "-fpie -pie -fuse-ld=mold" },
		{ "mold-nopie", "ld.mold", "-fno-pie -no-pie -fuse-ld=mold" },
		{ "mold-splittext", "ld.mold",
		  "-fno-pie -no-pie -fuse-ld=mold -Wl,--section-start=fartext=0x800000" },
	};
	/* libraries: ours by each linker, and Chromium's (lld) when there */
	static const struct variant libs[] = {
		{ "libt-bfd.so", NULL, "-fpic -shared" },
		{ "libt-lld.so", "ld.lld", "-fpic -shared -fuse-ld=lld" },
		{ "libt-lld-split.so", "ld.lld",
		  "-fpic -shared -fuse-ld=lld -Wl,--section-start=fartext=0x400000" },
		{ "libt-mold.so", "ld.mold", "-fpic -shared -fuse-ld=mold" },
	};
	static const char *const chromium[] = { "/usr/lib/chromium/libEGL.so",
						"/usr/lib/chromium/libvulkan.so.1" };
	char src[PATH_MAX], lsrc[PATH_MAX], *argv[16];
	char paths[8][PATH_MAX];
	struct object objs[64];
	int nargs = 1, n, total = 0;
	size_t i;
	FILE *f;

	snprintf(src, sizeof(src), "%s", test_tmppath("loader.c"));
	snprintf(lsrc, sizeof(lsrc), "%s", test_tmppath("lib.c"));
	f = fopen(src, "w");
	if (!ASSERT_NOT_NULL(f, "loader.c"))
		return;
	fputs(loader_src, f);
	fclose(f);
	f = fopen(lsrc, "w");
	if (!ASSERT_NOT_NULL(f, "lib.c"))
		return;
	fputs(lib_src, f);
	fclose(f);
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (libs[i].tool && !have(libs[i].tool)) {
			test_note("no %s: %s not built (make deps)", libs[i].tool,
				  libs[i].name);
			continue;
		}
		snprintf(paths[i], sizeof(paths[i]), "%s", test_tmppath(libs[i].name));
		if (build(paths[i], lsrc, libs[i].flags))
			argv[nargs++] = paths[i];
	}
	for (i = 0; i < sizeof(chromium) / sizeof(chromium[0]); i++)
		if (access(chromium[i], R_OK) == 0)
			argv[nargs++] = (char *)chromium[i];
		else
			test_note("no %s (Debian's chromium)", chromium[i]);
	argv[nargs] = NULL;

	for (i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		char exe[PATH_MAX];
		uint64_t kb;
		pid_t pid;
		int j;

		if (!test_start_subtest(vs[i].name))
			continue;
		if (vs[i].tool && !have(vs[i].tool)) {
			test_skip("no %s (make deps installs %s)", vs[i].tool,
				  strstr(vs[i].tool, "lld") ? "lld" : "mold");
			continue;
		}
		snprintf(exe, sizeof(exe), "%s", test_tmppath(vs[i].name));
		if (!ASSERT_TRUE(build(exe, src, vs[i].flags), vs[i].name))
			continue;
		argv[0] = exe;
		pid = start_loader(argv, objs, 64, &n);
		if (!ASSERT_GT(pid, 0, "loader started"))
			continue;
		for (j = 0; j < n; j++)
			if (objs[j].main && ASSERT_TRUE(kernel_bias(pid, &kb), "auxv"))
				ASSERT_EQ(objs[j].bias, kb, "ld.so and the kernel agree");
		ASSERT_GE(n, 5, "objects: program, vDSO, libc, ld.so, ours");
		j = check_process(pid, objs, n, vs[i].name);
		test_note("%s: %d objects, %d mappings checked", vs[i].name, n, j);
		total += j;
		stop(pid);
	}
	test_note("%d mappings in all", total);
}

/* A Rust program with the machine's rustc defaults (lld's layout). */
TEST(elfaddr_rust_default_linker)
{
	const char *rustcs[] = { getenv("RUSTC"), "/root/.cargo/bin/rustc", NULL };
	char cmd[PATH_MAX * 4], rustc[PATH_MAX] = "", home[PATH_MAX];
	const char *bin = test_tmppath("rust-split");
	struct object o = { .main = true };
	struct stat st;
	char *argv[] = { (char *)bin, "60", NULL };
	pid_t pid;
	size_t i;

	snprintf(home, sizeof(home), "%s/.cargo/bin/rustc",
		 getenv("HOME") ? getenv("HOME") : "/root");
	if (access(home, X_OK) == 0)
		snprintf(rustc, sizeof(rustc), "%s", home);
	for (i = 0; !rustc[0] && i < 2; i++)
		if (rustcs[i] && access(rustcs[i], X_OK) == 0)
			snprintf(rustc, sizeof(rustc), "%s", rustcs[i]);
	if (!rustc[0] && have("rustc"))
		snprintf(rustc, sizeof(rustc), "rustc");
	if (!rustc[0]) {
		test_skip("no rustc (rustup: ~/.cargo/bin/rustc)");
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s -O -o %s %s/tests/workloads/rust/split.rs 2>%s.log",
		 rustc, bin, test_srcdir(), bin);
	if (!ASSERT_EQ(system(cmd), 0, "rustc -O"))
		return;
	snprintf(cmd, sizeof(cmd), "readelf -p .comment %s | grep -q 'Linker: LLD'", bin);
	test_note("linked by %s", system(cmd) == 0 ? "LLD" : "another linker");
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(bin, argv);
		_exit(127);
	}
	if (!ASSERT_GT(pid, 0, "started"))
		return;
	usleep(200000);
	snprintf(o.name, sizeof(o.name), "rust-split");
	if (ASSERT_TRUE(kernel_bias(pid, &o.bias), "auxv") &&
	    ASSERT_OK(stat(bin, &st), "stat")) {
		o.dev = st.st_dev;
		o.ino = st.st_ino;
		test_note("%d mappings checked", check_process(pid, &o, 1, "rust"));
	}
	stop(pid);
}
