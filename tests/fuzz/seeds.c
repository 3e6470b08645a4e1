// SPDX-License-Identifier: Apache-2.0
/*
 * Seed corpora for the fuzz targets, made at build time from real files
 * of this machine (nothing binary is committed):
 *
 *   seeds OUTDIR FILE...
 *
 * writes OUTDIR/<target>/<name> for the targets that take ELF-derived
 * input: whole small files and the vDSO (elf, deltas, symbols),
 * serialized stack-delta tables (deltas), CFI sections with their header
 * (ehframe), Go tables with code (gopclntab), stored records and database
 * files (store_rec, store_db) and process images (pycode).  The Python
 * builds for store_rec and pycode come from EP_FUZZ_PYTHONS as for
 * fuzz_pycode.  tests/fuzz/run.sh adds the text seeds.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deltas.h"
#include "dwinline.h"
#include "elfmap.h"
#include "fuzz.h"
#include "gopclntab.h"
#include "interp_python.h"
#include "../unit/py_fixture.h"
#include "store.h"
#include "store_test.h"
#include "../unit/synth_elf.h"
#include "v8_image.h"

#define WHOLE_MAX (256u << 10)	 /* whole files up to this size */
#define HEAD_LEN (64u << 10)	 /* else their head */
#define CFI_CHUNK (16u << 10)	 /* CFI prefixes */
#define TABLE_MAX (1u << 20)	 /* serialized tables */
#define GO_TEXT_MAX (64u << 10)

static const char *out_dir;
static int written;

static void write_seed(const char *target, const char *name, const void *a,
		       size_t alen, const void *b, size_t blen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out_dir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, target, name);
	f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "seeds: %s: %s\n", path, strerror(errno));
		return;
	}
	if ((alen && fwrite(a, 1, alen, f) != alen) ||
	    (blen && fwrite(b, 1, blen, f) != blen))
		fprintf(stderr, "seeds: %s: short write\n", path);
	fclose(f);
	written++;
}

static void cfi_seeds(const struct elfm *e, const char *base)
{
	static const char *const secs[] = { ".eh_frame", ".debug_frame" };
	struct fz_cfi_hdr h = { 0 };
	const Elf64_Shdr *sh;
	const uint8_t *p;
	char name[512];
	void *owned;
	size_t len;
	int i;

	if (elfm_text_span(e, &h.text_lo, &h.text_hi) != 0)
		return;
	for (i = 0; i < 2; i++) {
		sh = elfm_section(e, secs[i]);
		if (!sh || elfm_section_load(e, sh, &p, &len, &owned) != 0)
			continue;
		h.sec_addr = sh->sh_addr;
		h.debug_frame = (uint8_t)i;
		snprintf(name, sizeof(name), "%s%s", base, secs[i]);
		write_seed("ehframe", name, &h, sizeof(h), p,
			   len < CFI_CHUNK ? len : CFI_CHUNK);
		free(owned);
	}
}

static void go_seeds(const struct elfm *e, const char *base)
{
	const Elf64_Shdr *text = elfm_section(e, ".text"), *sh;
	struct fz_go_hdr h = { 0 };
	struct gopc_table *t = NULL;
	const uint8_t *code, *tab;
	size_t clen, tlen;
	unsigned n, i;
	char name[512];

	if (!text || gopc_open(e, &t) != 0)
		return;
	sh = elfm_shdrs(e, &n);
	for (i = 1; i < n; i++)
		if (sh[i].sh_addr == gopc_vaddr(t) &&
		    elfm_section_bytes(e, &sh[i], &tab, &tlen) == 0)
			break;
	if (i < n && elfm_section_bytes(e, text, &code, &clen) == 0) {
		h.text_addr = text->sh_addr;
		h.text_end = text->sh_addr + text->sh_size;
		h.tab_addr = gopc_vaddr(t);
		h.text_len = clen < GO_TEXT_MAX ? (uint32_t)clen : GO_TEXT_MAX;
		/* one buffer: header and code, then the table */
		{
			uint8_t *b = malloc(sizeof(h) + h.text_len);

			if (b) {
				memcpy(b, &h, sizeof(h));
				memcpy(b + sizeof(h), code, h.text_len);
				snprintf(name, sizeof(name), "%s.gopclntab",
					 base);
				write_seed("gopclntab", name, b,
					   sizeof(h) + h.text_len, tab, tlen);
				free(b);
			}
		}
	}
	gopc_free(t);
}

/* The serialized table of an ELF image, or NULL. */
static void *table_of(const void *img, size_t len, size_t *out_len)
{
	struct dt_extract_opts o = { .no_debuglink = true };
	struct dt_file *f = NULL;
	void *buf = NULL;

	if (dt_extract_mem(img, len, &o, &f) != 0 || !f->n_rows ||
	    dt_file_serialize(f, &buf, out_len) != 0 || *out_len > TABLE_MAX) {
		free(buf);
		buf = NULL;
	}
	dt_file_free(f);
	return buf;
}

/* The image (DWARF to walk) and its inline-chain table (a blob to load). */
static void dwinline_seeds(const void *img, size_t len, const char *base)
{
	struct dwi_table *t = NULL;
	char name[512];
	const void *blob;
	size_t blen;
	int fd = fz_memfd(img, len);

	if (fd < 0)
		return;
	write_seed("dwinline", base, img, len, NULL, 0);
	if (dwi_build_fd(fd, NULL, &t) == 0) {
		blob = dwi_blob(t, &blen);
		snprintf(name, sizeof(name), "%s.dwi", base);
		write_seed("dwinline", name, blob, blen, NULL, 0);
		dwi_free(t);
	}
	close(fd);
}

static void elf_seeds(const void *img, size_t len, const char *base)
{
	struct elfm *e = NULL;
	char name[512];
	size_t tlen;
	void *table;

	if (len <= WHOLE_MAX) {
		write_seed("elf", base, img, len, NULL, 0);
		write_seed("deltas", base, img, len, NULL, 0);
		write_seed("symbols", base, img, len, NULL, 0);
		dwinline_seeds(img, len, base);
	} else {
		snprintf(name, sizeof(name), "%s.head", base);
		write_seed("elf", name, img, HEAD_LEN, NULL, 0);
	}
	table = table_of(img, len, &tlen);
	if (table) {
		snprintf(name, sizeof(name), "%s.table", base);
		write_seed("deltas", name, table, tlen, NULL, 0);
		free(table);
	}
	if (elfm_open_mem(img, len, &e) != 0)
		return;
	cfi_seeds(e, base);
	go_seeds(e, base);
	elfm_free(e);
}

static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		buf = malloc(st.st_size);
		if (buf && read(fd, buf, st.st_size) != st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = st.st_size;
	}
	close(fd);
	return buf;
}

/* The vDSO of this process: a small, real, stripped ELF file. */
/* MiniDebugInfo: an image whose .gnu_debugdata is an xz stream of an
 * ELF file with a .symtab (symbols.c decompresses and reads it). */
static void minidebuginfo_seed(void)
{
	static const char strtab[] = "\0mdi_one\0mdi_two";
	Elf64_Sym syms[3] = { { 0 } };
	struct synth_sec inner[] = {
		{ ".strtab", SHT_STRTAB, 0, 0, strtab, sizeof(strtab), 0, 0 },
		{ ".symtab", SHT_SYMTAB, 0, 0, syms, sizeof(syms), 1,
		  sizeof(Elf64_Sym) },
	};
	struct synth_sec outer[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x401000,
		  "\xc3\xc3\xc3\xc3", 4, 0, 0 },
		{ ".gnu_debugdata", SHT_PROGBITS, 0, 0, NULL, 0, 0, 0 },
	};
	uint8_t *in, *out = NULL, *img = NULL;
	size_t in_len, out_len = 0, img_len, cap;

	for (int i = 1; i < 3; i++) {
		syms[i].st_name = i == 1 ? 1 : 9;
		syms[i].st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
		syms[i].st_shndx = 1;
		syms[i].st_value = 0x401000 + 2 * (i - 1);
		syms[i].st_size = 2;
	}
	in = synth_elf(inner, 2, &in_len);
	cap = in_len + 1024;
	out = in ? malloc(cap) : NULL;
	if (out && lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, in,
					   in_len, out, &out_len,
					   cap) == LZMA_OK) {
		outer[1].data = out;
		outer[1].size = out_len;
		img = synth_elf(outer, 2, &img_len);
		if (img)
			write_seed("symbols", "minidebuginfo", img, img_len,
				   NULL, 0);
	}
	free(img);
	free(out);
	free(in);
}

static void vdso_seeds(void)
{
	const uint8_t *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	size_t len;

	if (!base)
		return;
	/* the section headers come last in the vDSO image */
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (len > 64 * 1024)
		return;
	elf_seeds(base, len, "vdso");
}

static int python_infos(struct py_info *out, int max)
{
	const char *env = getenv("EP_FUZZ_PYTHONS");
	char *list, *path, *save = NULL;
	int n = 0;

	if (!env)
		return 0;
	list = strdup(env);
	for (path = strtok_r(list, ":", &save); path && n < max;
	     path = strtok_r(NULL, ":", &save))
		if (fix_py_detect(path, 0, &out[n]) == 0)
			n++;
	free(list);
	return n;
}

/* Records as stored, and database files holding them. */
static void store_seeds(const void *table, size_t tlen,
			const struct py_info *py, int npy)
{
	char dir[] = "/tmp/ep-seeds-XXXXXX", path[64], name[64];
	struct store_opts o = { .max_bytes = 8 << 20, .no_sync = true };
	struct store *s = NULL;
	uint8_t id[16] = { 0 };
	void *data, *raw;
	size_t len;
	int i;

	if (!mkdtemp(dir) || store_open(dir, &o, &s) != 0)
		return;
	id[0] = 0;
	if (table)
		store_put(s, id, STORE_KIND_DELTAS, table, tlen);
	id[0] = 1;
	store_put(s, id, STORE_KIND_DELTAS, NULL, 0);
	for (i = 0; i < npy && i < 2; i++) {
		id[0] = (uint8_t)(2 + i);
		store_put(s, id, STORE_KIND_INTERP(INTERP_PYTHON), &py[i], sizeof(py[i]));
	}
	for (i = 0; i < 4; i++) {
		static const unsigned kinds[] = { STORE_KIND_DELTAS,
						  STORE_KIND_INTERP(INTERP_PYTHON) };
		unsigned k;

		id[0] = (uint8_t)i;
		for (k = 0; k < 2; k++) {
			uint8_t kind = (uint8_t)(kinds[k] - 1);

			if (store_test_get_raw(s, id, kinds[k], &raw, &len))
				continue;
			snprintf(name, sizeof(name), "rec-%d-%u", i, kinds[k]);
			write_seed("store_rec", name, &kind, 1, raw, len);
			free(raw);
		}
	}
	store_free(s);
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	data = slurp(path, &len);
	if (data)
		write_seed("store_db", "records.mdb", data, len, NULL, 0);
	free(data);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		fprintf(stderr, "seeds: could not remove %s\n", dir);
}

/* A method of a class in a user script, laid out as PHP 8.2 has it: the
 * zend_function at 0, its name, class, class name and file after it
 * (addresses from 0x10000, as fuzz_phpframe maps its image). */
static void phpframe_seeds(void)
{
	uint8_t img[10 + 512] = { 0 };
	uint8_t *m = img + 10;
	uint64_t data = 42 | (2ULL << 32), v;
	static const struct {
		unsigned at;
		const char *s;
	} strs[] = { { 256, "compare" }, { 320, "Sorter" }, { 384, "/srv/usort.php" } };
	unsigned i;

	memcpy(img, &data, 8);
	img[8] = 152; /* zend_op_array.filename in 8.2 */
	m[0] = 2;     /* ZEND_USER_FUNCTION */
	v = 0x10000 + 256;
	memcpy(m + 8, &v, 8); /* function_name */
	v = 0x10000 + 200;
	memcpy(m + 16, &v, 8); /* scope: a class entry at 200 */
	v = 0x10000 + 320;
	memcpy(m + 200 + 8, &v, 8); /* zend_class_entry.name */
	v = 0x10000 + 384;
	memcpy(m + 152, &v, 8); /* filename */
	for (i = 0; i < 3; i++) {
		uint64_t len = strlen(strs[i].s);

		memcpy(m + strs[i].at + 16, &len, 8);
		memcpy(m + strs[i].at + 24, strs[i].s, len);
	}
	write_seed("phpframe", "method", img, sizeof(img), NULL, 0);
}

/* An interpreted method, Split.work (Split.java), laid out as JDK 17 has
 * it: Method at 0, ConstMethod at 64 (bytecodes at 112, line table after
 * them), ConstantPool at 256, the holder Klass at 400, Symbols after
 * (addresses from 0x10000, as fuzz_hotspotframe maps its image). */
static void hotspotframe_seeds(void)
{
	uint8_t img[9 + 640] = { 0 };
	uint8_t *m = img + 9;
	static const uint8_t lines[] = { 0xff, 0, 20, (4 << 3) | 1, 0 };
	static const struct {
		unsigned at;
		const char *s;
	} syms[] = { { 448, "work" }, { 480, "Split.java" }, { 520, "Split" } };
	uint64_t v;
	uint16_t u;
	unsigned i;

	img[0] = 0; /* a frame, JDK 17 streams */
	v = 0x10000 + 64 + 48 + 4; /* bcp: bci 4 */
	memcpy(img + 1, &v, 8);
	v = 0x10000 + 64;
	memcpy(m + 8, &v, 8); /* Method::_constMethod */
	v = 0x10000 + 256;
	memcpy(m + 64 + 8, &v, 8); /* ConstMethod::_constants */
	u = 1;
	memcpy(m + 64 + 28, &u, 2); /* _flags: has a line-number table */
	u = 8;
	memcpy(m + 64 + 32, &u, 2); /* _code_size */
	u = 1;
	memcpy(m + 64 + 34, &u, 2); /* _name_index */
	memcpy(m + 64 + 48 + 8, lines, sizeof(lines));
	v = 0x10000 + 400;
	memcpy(m + 256 + 24, &v, 8); /* ConstantPool::_pool_holder */
	u = 2;
	memcpy(m + 256 + 54, &u, 2); /* _source_file_name_index */
	v = 0x10000 + 448;
	memcpy(m + 256 + 72 + 8, &v, 8); /* the pool's entry 1 */
	v = 0x10000 + 480;
	memcpy(m + 256 + 72 + 16, &v, 8); /* entry 2 */
	v = 0x10000 + 520;
	memcpy(m + 400 + 24, &v, 8); /* Klass::_name */
	for (i = 0; i < 3; i++) {
		u = (uint16_t)strlen(syms[i].s);
		memcpy(m + syms[i].at + 4, &u, 2);
		memcpy(m + syms[i].at + 6, syms[i].s, u);
	}
	write_seed("hotspotframe", "method", img, sizeof(img), NULL, 0);
}

/* A JavaScript function as node 20 (V8 11.3) lays it out: the JSFunction
 * at 0, its SharedFunctionInfo, whose name is a cons string of two
 * one-byte strings, its Script and the script's two-byte name, and the
 * maps giving their instance types (tagged pointers: address + 1;
 * addresses from 0x10000, as fuzz_v8frame maps its image). */
static void v8frame_seeds(void)
{
	uint8_t m[1024] = { 0 };
	static const struct {
		unsigned at, type;
	} maps[] = { { 768, 262 }, { 800, 8 }, { 832, 167 }, { 864, 1 | 8 },
		     { 896, 0 } };
	static const char name2[] = "/srv/split.js";
	uint64_t v;
	uint32_t len;
	unsigned i;

#define PUT_PTR(at, to)                                                        \
	do {                                                                   \
		v = 0x10000 + (to) + 1;                                        \
		memcpy(m + (at), &v, 8);                                       \
	} while (0)
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		memcpy(m + maps[i].at + 12, &maps[i].type, 2);
	PUT_PTR(24, 64);	 /* JSFunction.shared */
	PUT_PTR(64, 768);	 /* SFI map */
	PUT_PTR(64 + 16, 256); /* name_or_scope_info: a cons string */
	PUT_PTR(64 + 32, 320); /* script_or_debug_info */
	PUT_PTR(256, 864);
	len = 9;
	memcpy(m + 256 + 12, &len, 4);
	PUT_PTR(256 + 16, 128); /* first: "chain" */
	PUT_PTR(256 + 24, 192); /* second: "_60()" */
	PUT_PTR(128, 800);
	len = 5;
	memcpy(m + 128 + 12, &len, 4);
	memcpy(m + 128 + 16, "chain", 5);
	PUT_PTR(192, 800);
	len = 3;
	memcpy(m + 192 + 12, &len, 4);
	memcpy(m + 192 + 16, "_60", 3);
	PUT_PTR(320, 832);	 /* Script map */
	PUT_PTR(320 + 16, 384); /* its name: two-byte */
	PUT_PTR(384, 896);
	len = sizeof(name2) - 1;
	memcpy(m + 384 + 12, &len, 4);
	for (i = 0; i < len; i++)
		m[384 + 16 + 2 * i] = (uint8_t)name2[i];
#undef PUT_PTR
	write_seed("v8frame", "cons-name", m, sizeof(m), NULL, 0);
	{
		/* an optimized frame with two inlined functions: its pc is
		 * the image's last word, as fuzz_v8frame takes it */
		uint8_t im[V8_IMAGE_SIZE];

		v8_inline_image(im);
		write_seed("v8frame", "inlined", im, sizeof(im), NULL, 0);
	}
}

/* Ruby 3.1 frames (addresses from 0x10000, as fuzz_rubyframe maps its
 * image): a method's iseq (label "heavy" embedded, path on the heap,
 * three line entries and the succinct index of positions 0, 2 and 5, the
 * pc at position 3: line 27) and its method entry, owned by a class
 * named "Burner" (its __classpath__, ID 0x120, in its instance variable
 * table); and a C function's method entry whose ID (serial 600) is named
 * "sort_by" through the ID table's Arrays. */
static void put64(uint8_t *m, unsigned at, uint64_t v)
{
	memcpy(m + at, &v, 8);
}

static void rubyframe_seeds(void)
{
	static uint8_t img[40 + 2100];
	uint8_t *m = img + 40;
	const uint64_t A = 0x10000;
	uint32_t v32;
	unsigned i;

	memset(img, 0, sizeof(img));
	/* RUBY_FRAME_DATA(RUBY_FRAME_ISEQ, the method entry at 1200) */
	put64(img, 0, ((A + 1200) >> 3) << 2 | 1);
	put64(img, 8, A);
	put64(img, 16, A + 1024 + 8 * 4);
	put64(img, 32, 0x120);		 /* classpath ID; attached: 0 */
	put64(m, 16, A + 64);		 /* iseq->body */
	put64(m, 64 + 8, A + 1024);	 /* iseq_encoded */
	put64(m, 64 + 64, A + 400);	 /* location.pathobj */
	put64(m, 64 + 80, A + 304);	 /* location.label */
	put64(m, 64 + 88, 2 * 26 + 1);	 /* first_lineno, a Fixnum */
	put64(m, 64 + 120, A + 500);	 /* insns_info.body */
	v32 = 3;
	memcpy(m + 64 + 136, &v32, 4);	 /* insns_info.size */
	put64(m, 64 + 144, A + 600);	 /* succ_index_table */
	put64(m, 304, 0x05 | (5ull << 14)); /* String, embedded, 5 bytes */
	memcpy(m + 320, "heavy", 5);
	put64(m, 400, 0x05 | (1ull << 13)); /* String on the heap */
	put64(m, 416, 12);
	put64(m, 424, A + 440);
	memcpy(m + 440, "/srv/spin.rb", 12);
	for (i = 0; i < 3; i++) {
		v32 = 26 + i;
		memcpy(m + 500 + 12 * i, &v32, 4);
	}
	/* ranks of positions 0..8: 1 1 2 2 2 3 3 3 3 */
	put64(m, 600, 1 | 1 << 7 | 2 << 14 | 2 << 21 | 2ull << 28 | 3ull << 35 |
			      3ull << 42 | 3ull << 49 | 3ull << 56);
	put64(m, 1200, 0x1a | 6ull << 12); /* an imemo ment */
	put64(m, 1200 + 32, A + 1304);	   /* its owner, a class */
	put64(m, 1304, 0x02);
	put64(m, 1304 + 24, A + 1400);	   /* RClass.ptr: the classext */
	put64(m, 1400 + 8, A + 1504);	   /* its iv_tbl, an st_table */
	put64(m, 1504 + 32, 0);		   /* entries_start */
	put64(m, 1504 + 40, 1);		   /* entries_bound */
	put64(m, 1504 + 48, A + 1600);	   /* entries: hash, key, record */
	put64(m, 1600 + 8, 0x120);
	put64(m, 1600 + 16, A + 1704);
	put64(m, 1704, 0x05 | (6ull << 14));
	memcpy(m + 1720, "Burner", 6);
	write_seed("rubyframe", "iseq", img, 40 + 1800, NULL, 0);

	memset(img, 0, sizeof(img));
	put64(img, 0, 2); /* RUBY_FRAME_CFUNC */
	put64(img, 8, A);
	put64(img, 24, A + 200);	 /* ruby_global_symbols */
	put64(m, 16, A + 64);		 /* me->def */
	put64(m, 64 + 8, 0x401000);	 /* def->body.cfunc.func */
	put64(m, 64 + 32, 600 << 4 | 1); /* def->original_id */
	v32 = 1000;
	memcpy(m + 200, &v32, 4);	 /* last_id */
	put64(m, 216, A + 240);		 /* ids */
	put64(m, 240, 0x07 | (1ull << 13) | (2ull << 15)); /* embedded, 2 */
	put64(m, 264, A + 304);
	put64(m, 304, 0x07);		 /* an Array on the heap */
	put64(m, 320, 1024);
	put64(m, 336, A + 400);
	put64(m, 400 + 8 * 176, A + 2000);
	put64(m, 2000, 0x05 | (7ull << 14));
	memcpy(m + 2016, "sort_by", 7);
	write_seed("rubyframe", "cfunc", img, sizeof(img), NULL, 0);
}

/* A HEK at m + at: its 32-bit length at +4, then its key (the NUL is
 * the image's zero). */
static void put_hek(uint8_t *m, unsigned at, const char *key)
{
	int32_t len = (int32_t)strlen(key);

	memcpy(m + at + 4, &len, 4);
	memcpy(m + at + 8, key, (size_t)len);
}

/* A named sub (CVf_NAMED: its name a HEK in the CV) of package main
 * and its COP, laid out as Perl 5.36 has them (addresses from 0x10000,
 * as fuzz_perlframe maps its image). */
static void perlframe_seeds(void)
{
	uint8_t img[24 + 512] = { 0 };
	uint8_t *m = img + 24;
	const uint64_t A = 0x10000, line = 22;
	uint32_t flags = 0x8000, oook = 0x02000000;

	put64(img, 0, line);
	put64(img, 8, A); /* the CV */
	put64(img, 16, A + 400); /* the COP */
	put64(m, 0, A + 64); /* CV's body at 64 */
	memcpy(m + 64 + 0x5c, &flags, 4);
	put64(m, 64 + 0x38, A + 200); /* the name HEK at 200 */
	put_hek(m, 200, "by_weight");
	put64(m, 64 + 0x20, A + 240); /* the stash (an HV head) at 240 */
	memcpy(m + 240 + 12, &oook, 4);
	put64(m, 240, A + 280); /* its body at 280, aux at body + 0x20 */
	put64(m, 280 + 0x20, A + 360); /* its name HEK at 360 */
	put_hek(m, 360, "main");
	put64(m, 400 + 0x30, A + 460); /* the COP's file */
	memcpy(m + 460, "/srv/callbacks.pl", 17);
	write_seed("perlframe", "named_sub", img, sizeof(img), NULL, 0);
	/* the same in a non-threaded 5.36 (fuzz_perlframe's layout 7): the
	 * COP's file is a GV (at 160, its body at 320) named by a HEK (at
	 * 480) "_<file" */
	put64(img, 0, line | (uint64_t)7 << 32);
	put64(m, 400 + 0x30, A + 160);
	put64(m, 160, A + 320);
	put64(m, 320 + 0x20, A + 480);
	put_hek(m, 480, "_</srv/a.pl");
	write_seed("perlframe", "named_sub_nonthreaded", img, sizeof(img),
		   NULL, 0);
}

static void pycode_seeds(int layouts)
{
	/* a patch: the first frame's code pointer moved into the table */
	static const uint8_t patch[] = { 0x00, 0x30, 8, 0, 0x60, 0, 0,
					 0x12, 0x7f, 0, 0 };
	char name[32];
	int i;

	for (i = 0; i <= layouts; i++) {
		struct fz_py_hdr h = { .layout = (uint8_t)i, .ops = 7,
				       .instr = (uint32_t)i };

		snprintf(name, sizeof(name), "layout-%d", i);
		write_seed("pycode", name, &h, sizeof(h), NULL, 0);
		snprintf(name, sizeof(name), "layout-%d-patched", i);
		write_seed("pycode", name, &h, sizeof(h), patch,
			   sizeof(patch));
	}
}

int main(int argc, char **argv)
{
	struct py_info py[8];
	void *first_table = NULL;
	size_t first_len = 0;
	int i, npy;

	if (argc < 2) {
		fprintf(stderr, "usage: seeds OUTDIR FILE...\n");
		return 2;
	}
	out_dir = argv[1];
	mkdir(out_dir, 0755);
	vdso_seeds();
	minidebuginfo_seed();
	for (i = 2; i < argc; i++) {
		size_t len;
		void *img = slurp(argv[i], &len);
		char *copy, *base;

		if (!img) {
			fprintf(stderr, "seeds: %s: skipped\n", argv[i]);
			continue;
		}
		copy = strdup(argv[i]);
		base = basename(copy);
		elf_seeds(img, len, base);
		if (!first_table)
			first_table = table_of(img, len, &first_len);
		free(copy);
		free(img);
	}
	npy = python_infos(py, 8);
	store_seeds(first_table, first_len, py, npy);
	free(first_table);
	pycode_seeds(npy);
	phpframe_seeds();
	hotspotframe_seeds();
	v8frame_seeds();
	perlframe_seeds();
	rubyframe_seeds();
	printf("  SEEDS    %d files in %s\n", written, out_dir);
	return 0;
}
