// SPDX-License-Identifier: Apache-2.0
/* The ELF symbol reader against binutils' nm (an independent oracle). */
#include "test.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "budget.h"
#include "nm_oracle.h"
#include "symbols.h"
#include "synth_elf.h"

/* Function symbols from nm, with its options args. */
static int nm_read(const char *args, const char *path, struct nm_sym **out)
{
	char opts[256];

	snprintf(opts, sizeof(opts), "%s --without-symbol-versions", args);
	return nm_syms(path, opts, "TtWi", false, out);
}

/* Is name one of the oracle's names at addr? */
static bool oracle_has(struct nm_sym *v, int n, unsigned long long addr,
		       const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].addr == addr && !strcmp(v[i].name, name))
			return true;
	return false;
}

/* path's names against nm's of oracle (the same file, or the file
 * before it was stripped). */
static void check_file_vs(const char *path, const char *oracle,
			  const char *nm_args, int min_syms)
{
	struct symb_table *t = NULL;
	struct nm_sym *v = NULL;
	int fd, n, i, checked = 0, bad = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		test_skip("%s not present", path);
		return;
	}
	ASSERT_OK(symb_load_fd(fd, &t), "symb_load_fd");
	close(fd);
	n = nm_read(nm_args, oracle, &v);
	ASSERT_GE(n, min_syms, "oracle symbols");
	ASSERT_GE(symb_count(t), 1, "symbols read");
	for (i = 0; i < n; i++) {
		uint64_t off = 1;
		const char *name;

		if (!v[i].size)
			continue;
		/* the start and the middle of the function */
		name = symb_lookup(t, v[i].addr, &off);
		checked++;
		if (!name || off != 0 || !oracle_has(v, n, v[i].addr, name)) {
			if (bad++ < 5)
				printf("    %s: 0x%llx: got %s, nm says %s\n", path,
				       v[i].addr, name ? name : "(null)", v[i].name);
			continue;
		}
		name = symb_lookup(t, v[i].addr + v[i].size / 2, &off);
		if (!name || off != v[i].size / 2 ||
		    !oracle_has(v, n, v[i].addr, name))
			bad++;
	}
	test_note("%s: %d functions checked, %u symbols, %d disagree", path,
		  checked, symb_count(t), bad);
	ASSERT_GE(checked, min_syms, "functions checked");
	ASSERT_EQ(bad, 0, "lookups that disagree with nm");
	free(v);
	symb_free(t);
}

static void check_file(const char *path, const char *nm_args, int min_syms)
{
	check_file_vs(path, path, nm_args, min_syms);
}

TEST(symbols_libc_dynsym_vs_nm)
{
	check_file("/lib/x86_64-linux-gnu/libc.so.6", "-D", 1000);
}

TEST(symbols_cxx_demangled_vs_nm)
{
	/* nm -C demangles with binutils' demangler, not libstdc++'s */
	check_file("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "-D -C", 1000);
}

TEST(symbols_symtab_of_built_binary)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/split-fp", test_workloads());
	if (access(path, R_OK)) {
		test_skip("workloads not built (make workloads)");
		return;
	}
	check_file(path, "", 10);
}

TEST(symbols_past_size_is_unknown)
{
	struct symb_table *t = NULL;
	struct nm_sym *v = NULL;
	int fd, n, i, gaps = 0;

	fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open libc"))
		return;
	ASSERT_OK(symb_load_fd(fd, &t), "load");
	close(fd);
	n = nm_read("-D", "/lib/x86_64-linux-gnu/libc.so.6", &v);
	/* right past a sized function, where nm has nothing: no name */
	for (i = 0; i < n && gaps < 50; i++) {
		unsigned long long end = v[i].addr + v[i].size;
		bool covered = false;
		int j;

		if (!v[i].size)
			continue;
		for (j = 0; j < n; j++)
			if (v[j].addr <= end && end < v[j].addr + v[j].size)
				covered = true;
		if (covered)
			continue;
		gaps++;
		ASSERT_TRUE(symb_lookup(t, end, NULL) == NULL, "no symbol in a gap");
	}
	ASSERT_GE(gaps, 10, "gaps checked");
	free(v);
	symb_free(t);
}

TEST(symbols_demangle)
{
	char *d;

	d = symb_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	ASSERT_STREQ(d, "std::vector<int, std::allocator<int> >::push_back(int const&)",
		     "C++");
	free(d);
	/* Rust legacy mangling: the hash suffix goes */
	d = symb_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	ASSERT_STREQ(d, "core::fmt::write", "Rust legacy");
	free(d);
	ASSERT_TRUE(symb_demangle("main") == NULL, "plain C name");
}

TEST(symbols_not_elf)
{
	struct symb_table *t = NULL;
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);

	if (!ASSERT_GE(fd, 0, "open"))
		return;
	ASSERT_EQ(symb_load_fd(fd, &t), -ENOEXEC, "not ELF");
	ASSERT_TRUE(t == NULL, "no table");
	close(fd);
}

/* The symbols of an ELF image of the n sections secs: the table, or NULL
 * after a failed assertion. */
static struct symb_table *load_image(const struct synth_sec *secs, int n)
{
	struct symb_table *t = NULL;
	int fd = synth_elf_fd(secs, n);
	bool ok;

	if (!ASSERT_GE(fd, 0, "image"))
		return NULL;
	ok = ASSERT_OK(symb_load_fd(fd, &t), "load");
	close(fd);
	return ok ? t : NULL;
}

/* The symbols of an image of .text (0x2000 bytes at 0x1000), .symtab
 * (syms_size bytes at syms), .strtab (strs_size bytes at strs) and the
 * n_extra (at most 2) sections extra after them. */
static struct symb_table *load_symtab(const Elf64_Sym *syms, size_t syms_size,
				      const char *strs, size_t strs_size,
				      const struct synth_sec *extra, int n_extra)
{
	struct synth_sec secs[5] = {
		SYNTH_SYMTAB_SECS(0x2000, syms, syms_size, strs, strs_size),
	};
	int i;

	for (i = 0; i < n_extra; i++)
		secs[3 + i] = extra[i];
	return load_image(secs, 3 + n_extra);
}

/* An address and the name a lookup finds there (NULL: none). */
struct sym_want {
	uint64_t addr;
	const char *name;
	const char *what;
};

/* t (freed) has count symbols (what: why that many) and finds each of
 * want. */
static void symtab_finds(struct symb_table *t, unsigned count,
			 const char *what, const struct sym_want *want,
			 size_t n)
{
	uint64_t off;
	size_t i;

	ASSERT_EQ(symb_count(t), count, what);
	for (i = 0; i < n; i++) {
		const char *name = symb_lookup(t, want[i].addr, &off);

		if (want[i].name)
			ASSERT_STREQ(name, want[i].name, want[i].what);
		else
			ASSERT_TRUE(name == NULL, want[i].what);
	}
	symb_free(t);
}

/* Names and tables a hostile file may hold (elfm_for_each_sym): a name
 * that runs off the end of its string table, an offset past it, a table
 * of entries that are not Elf64_Sym, one linked to no section.  The good
 * symbol is found, the others are not, and nothing is read out of
 * bounds (the fuzz targets check that under ASan). */
TEST(symbols_hostile_tables)
{
	static const char strs[] = { 0, 'o', 'k', 0, 'c', 'u', 't' };
	Elf64_Sym syms[4] = {
		{ 0 },
		SYNTH_FUNC(1, 0x1000, 16),
		SYNTH_FUNC(4, 0x1100, 16),
		SYNTH_FUNC(4000, 0x1200, 16),
	};
	const struct synth_sec extra[2] = {
		/* the same entries read 16 bytes apart: refused */
		{ ".dynsym", SHT_DYNSYM, 0, 0, syms, sizeof(syms), 3, 16 },
		/* linked to a section that does not exist: refused */
		{ ".symtab.2", SHT_SYMTAB, 0, 0, syms, sizeof(syms), 99,
		  sizeof(Elf64_Sym) },
	};
	static const struct sym_want want[] = {
		{ 0x1004, "ok", "ok" },
		{ 0x1104, NULL, "a name without its NUL is no name" },
		{ 0x1204, NULL, "a name past the table is no name" },
	};
	struct symb_table *t = load_symtab(syms, sizeof(syms), strs,
					   sizeof(strs), extra, 2);

	if (t)
		symtab_finds(t, 1, "only the whole name", want, ARRAY_SIZE(want));
}

/* Two symbols at one address with sizes past INT_MAX apart: the sort
 * compared them by an int subtraction that overflowed (found by
 * fuzz_symbols under UBSan), an inconsistent order for qsort. */
TEST(symbols_huge_sizes)
{
	static const char strs[] = "\0big\0small\0next";
	Elf64_Sym syms[4] = {
		{ 0 },
		SYNTH_FUNC(1, 0x1000, 0x80000386),
		SYNTH_FUNC(5, 0x1000, 902),
		SYNTH_FUNC(11, 0x2000, 16),
	};
	static const struct sym_want want[] = {
		{ 0x1010, "big", "the larger size wins" },
		{ 0x2004, "next", "next" },
	};
	struct symb_table *t = load_symtab(syms, sizeof(syms), strs,
					   sizeof(strs), NULL, 0);

	if (t)
		symtab_finds(t, 2, "one symbol per address", want, ARRAY_SIZE(want));
}

/* An image of n function symbols at 0x1000 + i, all named name, or with
 * distinct names of that length (the last bytes tell them apart). */
static int name_image(uint32_t n, const char *name, bool distinct)
{
	size_t nlen = strlen(name), slen = 1 + (distinct ? n : 1) * (nlen + 1);
	Elf64_Sym *syms = calloc(n + 1, sizeof(*syms));
	char *strs = calloc(1, slen);
	struct synth_sec secs[3] = {
		SYNTH_SYMTAB_SECS((size_t)n + 16, syms, (n + 1) * sizeof(*syms),
				  strs, slen),
	};
	uint32_t i;
	int fd = -1;

	if (!syms || !strs)
		goto out;
	for (i = 0; i < (distinct ? n : 1); i++) {
		char *p = strs + 1 + (size_t)i * (nlen + 1);

		memcpy(p, name, nlen);
		if (distinct && nlen >= 8)
			snprintf(p + nlen - 8, 9, "%08x", i);
	}
	for (i = 1; i <= n; i++)
		syms[i] = (Elf64_Sym){ .st_name = distinct ? 1 + (i - 1) * (nlen + 1) : 1,
				       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = 1, .st_value = 0x1000 + i - 1,
				       .st_size = 1 };
	fd = synth_elf_fd(secs, 3);
out:
	free(syms);
	free(strs);
	return fd;
}

/* The bloat: symbols sharing one long name hold it once (a
 * million of them held 1.08 GB), and a file with more symbols than the
 * bound keeps no names and is counted. */
TEST(symbols_interned_and_bounded)
{
	struct symb_table *t = NULL;
	char name[1001];
	uint64_t before, off;
	size_t held;
	int fd;

	memset(name, 'x', 1000);
	name[1000] = 0;
	name[0] = 'f';
	fd = name_image(200000, name, false);
	if (!ASSERT_GE(fd, 0, "image"))
		return;
	held = mallinfo2().uordblks;
	if (ASSERT_OK(symb_load_fd(fd, &t), "load")) {
		held = mallinfo2().uordblks - held;
		ASSERT_EQ(symb_count(t), 200000, "every symbol");
		ASSERT_STREQ(symb_lookup(t, 0x1000 + 12345, &off), name, "named");
		/* 16 bytes a symbol and 8 for its demangled name, not 1000 */
		ASSERT_LT(held, 200000 * 32, "memory held");
		test_note("200k symbols of one 1000-byte name hold %zu KiB",
			  held / 1024);
	}
	symb_free(t);
	close(fd);

	fd = name_image(SYMB_MAX_SYMS + 1, "f", false);
	if (!ASSERT_GE(fd, 0, "image"))
		return;
	before = budget_count(BUDGET_SYMBOLS);
	t = NULL;
	ASSERT_EQ(symb_load_fd(fd, &t), -EFBIG, "over the bound");
	ASSERT_TRUE(t == NULL, "no table");
	ASSERT_EQ(budget_count(BUDGET_SYMBOLS), before + 1, "counted");
	close(fd);
}

/* Distinct names past SYMB_MAX_NAME_BYTES: no names, counted. */
TEST(symbols_name_bytes_bounded)
{
	const size_t nlen = 1 << 20;
	uint32_t n = SYMB_MAX_NAME_BYTES / nlen + 1;
	struct symb_table *t = NULL;
	char *name = malloc(nlen + 1);
	uint64_t before;
	int fd;

	if (!ASSERT_NOT_NULL(name, "name"))
		return;
	memset(name, 'b', nlen);
	name[nlen] = 0;
	fd = name_image(n, name, true);
	free(name);
	if (!ASSERT_GE(fd, 0, "image"))
		return;
	before = budget_count(BUDGET_SYMBOL_BYTES);
	ASSERT_EQ(symb_load_fd(fd, &t), -EFBIG, "over the bound");
	ASSERT_TRUE(t == NULL, "no table");
	ASSERT_EQ(budget_count(BUDGET_SYMBOL_BYTES), before + 1, "counted");
	close(fd);
	/* one name fewer fits */
	name = malloc(nlen + 1);
	memset(name, 'b', nlen);
	name[nlen] = 0;
	fd = name_image(n - 2, name, true);
	free(name);
	if (ASSERT_GE(fd, 0, "image") && ASSERT_OK(symb_load_fd(fd, &t), "within"))
		ASSERT_EQ(symb_count(t), n - 2, "all kept");
	symb_free(t);
	close(fd);
}

/*
 * MiniDebugInfo made the way Fedora's find-debuginfo makes it
 * (tests/tools/minidebuginfo.sh).  The stripped file
 * names every function as nm names them in the binary before it was
 * stripped; without the section it names none of its static functions.
 */
TEST(symbols_minidebuginfo_vs_nm)
{
	const char *dir = test_tmpdir();
	char cmd[8192], path[512], orig[512], bare[512];
	struct symb_table *t = NULL;
	uint64_t off;
	int fd;

	snprintf(orig, sizeof(orig), "%s/mdi", dir);
	snprintf(path, sizeof(path), "%s/mdi-mini", dir);
	snprintf(bare, sizeof(bare), "%s/mdi-bare", dir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; command -v xz gcc nm objcopy >/dev/null; "
		 "printf '%%s\\n' "
		 "'__attribute__((noinline)) static int mdi_one(int x) { return x * 3 + 1; }' "
		 "'__attribute__((noinline)) static int mdi_two(int x) { return mdi_one(x) ^ 7; }' "
		 "'__attribute__((noinline)) int mdi_three(int x) { return mdi_two(x) + 2; }' "
		 "'int main(int c, char **v) { (void)v; return mdi_three(c) & 1; }' > mdi.c; "
		 "gcc -O1 -g -o mdi mdi.c; "
		 "%s/tests/tools/minidebuginfo.sh mdi mdi-mini mdi-bare",
		 dir, test_srcdir());
	if (system(cmd)) {
		test_skip("could not build the MiniDebugInfo binary (gcc, xz, binutils)");
		return;
	}
	check_file_vs(path, orig, "", 4);

	/* the control: the same file without the section */
	fd = open(bare, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open the bare binary"))
		return;
	ASSERT_OK(symb_load_fd(fd, &t), "symb_load_fd");
	close(fd);
	if (t) {
		const char *name;
		struct nm_sym *v = NULL;
		int n = nm_read("", orig, &v), i, named = 0;

		for (i = 0; i < n; i++) {
			name = symb_lookup(t, v[i].addr, &off);
			if (name && !strcmp(name, v[i].name) &&
			    !strncmp(name, "mdi_", 4))
				named++;
		}
		ASSERT_EQ(named, 0, "mdi_ functions named without MiniDebugInfo");
		free(v);
		symb_free(t);
	}
}

/* A .gnu_debugdata that is not xz, or cut short, is skipped: the file's
 * other names stay (zlib's .dynsym). */
TEST(symbols_minidebuginfo_damaged)
{
	static const char *const lib = "/lib/x86_64-linux-gnu/libz.so.1";
	const char *dir = test_tmpdir();
	char cmd[4096], path[512];
	struct symb_table *t = NULL;
	uint32_t want = 0;
	int fd, k;

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; head -c 3000 /dev/urandom > junk; "
		 "printf '\\3757zXZ\\0\\0\\4' > cut; "
		 "objcopy --add-section .gnu_debugdata=junk %s mdi-bad; "
		 "objcopy --add-section .gnu_debugdata=cut %s mdi-cut",
		 dir, lib, lib);
	if (access(lib, R_OK) || system(cmd)) {
		test_skip("no %s, or objcopy failed", lib);
		return;
	}
	for (k = 0; k < 3; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 k == 1 ? "mdi-bad" : "mdi-cut");
		fd = open(k ? path : lib, O_RDONLY | O_CLOEXEC);
		if (!ASSERT_GE(fd, 0, "open"))
			return;
		ASSERT_OK(symb_load_fd(fd, &t), "symb_load_fd");
		close(fd);
		if (!k)
			want = t ? symb_count(t) : 0;
		else
			ASSERT_EQ(t ? symb_count(t) : 0, want,
				  "the names of the file without the section");
		symb_free(t);
		t = NULL;
	}
	ASSERT_GE(want, 50, "zlib's exported functions");
}
