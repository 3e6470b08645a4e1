// SPDX-License-Identifier: Apache-2.0
/*
 * Perl's offset tables (interp_perl.c, for every version and build
 * covered) against the header oracle: what the compiler laid out with
 * each version's own headers (tests/tools/perl_offsets.txt), and the
 * constants the unwinder and the names rest on; detection of threaded
 * and non-threaded builds; names read with each layout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp.h"
#include "interp_fixture.h"
#include "interp_perl.h"
#include "offsets_oracle.h"
#include "perl.h"
#include "rep_fixture.h"
#include "test.h"

#define F(x) { #x, offsetof(struct perl_offsets, x) }
#define W(x) { #x, offsetof(struct perl_offsets, walk.x) }
static const struct {
	const char *name;
	size_t off;
} fields[] = {
	W(i_curcop),   W(i_curstackinfo), W(si_cxstack),   W(si_prev),
	W(si_cxix),    W(si_type),	  W(cx_size),	   W(cx_oldcop),
	W(cx_cv),      W(cop_line),	  F(cop_file),	   F(cop_file_gv),
	F(cv_stash),   F(cv_gv),	  F(cv_flags),	   F(gv_gp),
	F(gp_egv),     F(gv_namehek),	  F(gv_stash),	   F(hv_max),
	F(hv_array),   F(hv_aux),	  F(aux_name),	   F(aux_name_count),
};

/* What the code takes as given, in every version. */
static const struct oracle_const constants[] = {
	{ "si_cxix_size", 4 },	/* read as 4 bytes by perl.bpf.h */
	{ "si_type_size", 4 },
	{ "cop_line_size", 4 },
	{ "cx_type", 0 },	/* the context's type: its first byte */
	{ "sv_any", 0 },
	{ "sv_flags", PERL_SV_FLAGS },
	{ "hek_len", PERL_HEK_LEN },
	{ "hek_key", PERL_HEK_KEY },
	{ "SVf_OOK", PERL_SVF_OOK },
	{ "CVf_NAMED", PERL_CVF_NAMED },
	{ "CXTYPEMASK", PERL_CXTYPEMASK },
	{ "CXt_SUB", PERL_CXT_SUB },
	{ "CXt_FORMAT", PERL_CXT_FORMAT },
	{ "CXt_EVAL", PERL_CXT_EVAL },
	{ "PERLSI_MAIN", PERL_SI_MAIN },
};

static bool check_row(const struct oracle_row *r)
{
	const struct perl_offsets *o;
	unsigned version;
	bool threaded = strcmp(r->build, "threaded") == 0;
	char what[96];
	size_t i;

	snprintf(what, sizeof(what), "perl %s %s %s", r->version, r->build,
		 r->name);
	if (!ASSERT_EQ(sscanf(r->version, "5.%u", &version), 1, what))
		return false;
	o = perl_offsets_of(5, version, threaded);
	if (!ASSERT_NOT_NULL(o, what))
		return false;
	if (strcmp(r->name, "threaded") == 0)
		return ASSERT_EQ(r->value, threaded, what);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint16_t v;

		if (strcmp(r->name, fields[i].name))
			continue;
		memcpy(&v, (const char *)o + fields[i].off, sizeof(v));
		return ASSERT_EQ(v, r->value, what);
	}
	return oracle_check_const(r, constants,
				  sizeof(constants) / sizeof(constants[0]), what);
}

TEST(perl_offsets_vs_headers)
{
	static const char *const builds[] = { "threaded", "nonthreaded" };
	struct oracle_row *rows;
	size_t n, i, ok = 0, seen;
	unsigned v;
	int b;

	rows = oracle_load("perl", &n);
	if (!ASSERT_NOT_NULL(rows, "tests/tools/perl_offsets.txt"))
		return;
	for (i = 0; i < n; i++)
		ok += check_row(&rows[i]);
	/* every version and build of the table is in the oracle */
	for (v = 30; v <= 40; v += 2) {
		for (b = 0; b < 2; b++) {
			char ver[8];

			snprintf(ver, sizeof(ver), "5.%u", v);
			for (seen = 0, i = 0; i < n; i++)
				seen += strcmp(rows[i].version, ver) == 0 &&
					strcmp(rows[i].build, builds[b]) == 0;
			ASSERT_NOT_NULL(perl_offsets_of(5, v, b == 0), ver);
			ASSERT_GE(seen, 38, ver);
		}
	}
	ASSERT_EQ(perl_offsets_of(5, 28, true), NULL, "5.28: not covered");
	ASSERT_EQ(perl_offsets_of(5, 42, false), NULL, "5.42: not covered");
	test_note("%zu of %zu oracle values equal (6 versions x 2 builds)", ok,
		  n);
	ASSERT_EQ(ok, n, "every value");
	free(rows);
}

TEST(perl_offsets_regenerated)
{
	oracle_regenerate("perl", "EP_PERL5_GIT",
			  "a clone of Perl's sources with its v5.X.0 tags");
}

/* ---- detection of each build ----------------------------------------------- */

/* A program with the symbols of a perl binary (exported, as perl's are):
 * threaded (PL_curinterp, PL_thr_key) or not (the interpreter's
 * variables as globals, and a PL_curinterp all the same, as a
 * non-threaded 5.36 built from its sources has), of version 5.<version>. */
static int fake_perl(const char *name, unsigned version, bool threaded)
{
	char src[1024], cmd[1024];
	const char *c = test_tmppath("perl.c"), *bin = test_tmppath(name);

	snprintf(src, sizeof(src),
		 "const unsigned char PL_revision = 5, PL_version = %u, "
		 "PL_subversion = 1;\n"
		 "%s\n"
		 "int Perl_runops_standard(int x) { return x * 3 + PL_version; }\n"
		 "int main(void) { return Perl_runops_standard(1); }\n",
		 version,
		 threaded ? "void *PL_curinterp; unsigned PL_thr_key;" :
			    "void *PL_curinterp, *PL_curcop, *PL_curstackinfo;");
	if (fix_write_file(c, src, strlen(src)))
		return -1;
	snprintf(cmd, sizeof(cmd), "cc -O1 -rdynamic -o %s %s", bin, c);
	if (fix_run(cmd, NULL, 0))
		return -1;
	return open(bin, O_RDONLY | O_CLOEXEC);
}

/* The address of a dynamic symbol of the file, from nm. */
static uint64_t nm_addr(const char *bin, const char *sym)
{
	char cmd[512], out[64];

	snprintf(cmd, sizeof(cmd), "nm -D %s | awk '$3 == \"%s\" {print $1}'",
		 bin, sym);
	if (fix_run(cmd, out, sizeof(out)))
		return 0;
	return strtoull(out, NULL, 16);
}

TEST(perl_detect_threaded_and_not)
{
	static const struct {
		unsigned version;
		bool threaded;
		int err;
	} cases[] = {
		{ 30, false, 0 }, { 40, false, 0 },	  { 36, true, 0 },
		{ 32, true, 0 },  { 28, false, -ENOTSUP }, { 42, true, -ENOTSUP },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perl_info r;
		void *data = NULL;
		size_t len = 0;
		const char *bin;
		char name[32];
		int fd, err;

		snprintf(name, sizeof(name), "perl5.%u%s", cases[i].version,
			 cases[i].threaded ? "t" : "");
		if (!test_start_subtest(name))
			continue;
		fd = fake_perl(name, cases[i].version, cases[i].threaded);
		if (!ASSERT_GE(fd, 0, "cc"))
			continue;
		bin = test_tmppath(name);
		err = fix_detect_fd(INTERP_PERL, bin, fd, &data, &len);
		close(fd);
		ASSERT_EQ(err, cases[i].err, "detection");
		if (err || !ASSERT_OK(fix_record(INTERP_PERL, data, len, &r,
					       sizeof(r)),
				      "its record")) {
			free(data);
			continue;
		}
		ASSERT_EQ(r.version, cases[i].version, "version");
		ASSERT_EQ(r.subversion, 1, "subversion");
		ASSERT_EQ(r.threaded, cases[i].threaded, "build");
		ASSERT_EQ(r.loop_lo, nm_addr(bin, "Perl_runops_standard"),
			  "runops");
		if (cases[i].threaded) {
			ASSERT_EQ(r.interp, nm_addr(bin, "PL_curinterp"),
				  "PL_curinterp");
			ASSERT_EQ(r.thr_key, nm_addr(bin, "PL_thr_key"),
				  "PL_thr_key");
			ASSERT_EQ(r.curcop, 0, "no globals");
		} else {
			ASSERT_EQ(r.curcop, nm_addr(bin, "PL_curcop"),
				  "PL_curcop");
			ASSERT_EQ(r.curstackinfo, nm_addr(bin, "PL_curstackinfo"),
				  "PL_curstackinfo");
			ASSERT_EQ(r.interp, 0, "no interpreter struct");
		}
		free(data);
	}
}

/* ---- names with each layout -------------------------------------------------- */

/* A process' memory: 4 KiB at IMG_BASE. */
#define IMG_BASE 0x10000ull
struct img {
	uint8_t b[4096];
};

static int img_read(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct img *m = arg;

	(void)pid;
	if (addr < IMG_BASE || addr - IMG_BASE + len > sizeof(m->b))
		return -EFAULT;
	memcpy(buf, m->b + (addr - IMG_BASE), len);
	return 0;
}

static void put(struct img *m, uint64_t addr, uint64_t v, size_t n)
{
	memcpy(m->b + (addr - IMG_BASE), &v, n);
}

static void put_hek(struct img *m, uint64_t addr, const char *s)
{
	put(m, addr + PERL_HEK_LEN, strlen(s), 4);
	memcpy(m->b + (addr - IMG_BASE) + PERL_HEK_KEY, s, strlen(s));
}

/* A sub "burn" of package "Pkg" at line 7 of /t/x.pl as the layout o
 * lays it out: named by its CV (CVf_NAMED) or by its glob. */
static void sub_image(struct img *m, const struct perl_offsets *o, bool named)
{
	const uint64_t cv = IMG_BASE, body = IMG_BASE + 0x100,
		       gv = IMG_BASE + 0x200, gbody = IMG_BASE + 0x280,
		       gp = IMG_BASE + 0x300, hek = IMG_BASE + 0x380,
		       hv = IMG_BASE + 0x400, hbody = IMG_BASE + 0x440,
		       array = IMG_BASE + 0x500, pkg = IMG_BASE + 0x600,
		       cop = IMG_BASE + 0x700, file = IMG_BASE + 0x800,
		       fgv = IMG_BASE + 0x880, fbody = IMG_BASE + 0x900;
	uint64_t aux;

	memset(m, 0, sizeof(*m));
	put(m, cv, body, 8);
	put(m, body + o->cv_flags, named ? PERL_CVF_NAMED : 0, 4);
	put_hek(m, hek, "burn");
	if (named) {
		put(m, body + o->cv_gv, hek, 8);
		put(m, body + o->cv_stash, hv, 8);
	} else {
		put(m, body + o->cv_gv, gv, 8);
		put(m, gv, gbody, 8);
		put(m, gv + o->gv_gp, gp, 8); /* gp_egv 0: the glob itself */
		put(m, gbody + o->gv_namehek, hek, 8);
		put(m, gbody + o->gv_stash, hv, 8);
	}
	put(m, hv, hbody, 8);
	put(m, hv + PERL_SV_FLAGS, PERL_SVF_OOK, 4);
	if (o->hv_aux) {
		aux = hbody + o->hv_aux;
	} else { /* after the 8 buckets */
		put(m, hbody + o->hv_max, 7, 8);
		put(m, hv + o->hv_array, array, 8);
		aux = array + 8 * 8;
	}
	put(m, aux + o->aux_name, pkg, 8);
	put_hek(m, pkg, "Pkg");
	put(m, cop + o->walk.cop_line, 7, 4);
	if (o->cop_file_gv) { /* the file's glob, "_<file" */
		put(m, cop + o->cop_file, fgv, 8);
		put(m, fgv, fbody, 8);
		put(m, fbody + o->gv_namehek, file, 8);
		put_hek(m, file, "_</t/x.pl");
	} else {
		put(m, cop + o->cop_file, file, 8);
		memcpy(m->b + (file - IMG_BASE), "/t/x.pl", 8);
	}
}

TEST(perl_names_every_layout)
{
	static struct img m;
	unsigned v, named, threaded, n = 0;

	for (v = 30; v <= 40; v += 2) {
		for (threaded = 0; threaded < 2; threaded++) {
			const struct perl_offsets *o =
				perl_offsets_of(5, v, threaded);

			if (!ASSERT_NOT_NULL(o, "layout"))
				continue;
			for (named = 0; named < 2; named++) {
				struct interp_frame f = {
					.kind = INTERP_PERL,
					.data = 7,
					.n_payload = 2,
					.payload = { IMG_BASE, IMG_BASE + 0x700 },
				};
				struct interp_symbol out;
				char what[64];

				snprintf(what, sizeof(what), "5.%u %s %s", v,
					 threaded ? "threaded" : "non-threaded",
					 named ? "named CV" : "glob");
				sub_image(&m, o, named);
				if (!ASSERT_OK(perl_frame_name(img_read, &m, 1, o,
							       &f, &out),
					       what))
					continue;
				n += ASSERT_STREQ(out.name, "Pkg::burn", what) &
				     ASSERT_STREQ(out.file, "/t/x.pl", what) &
				     ASSERT_EQ(out.line, 7, what);
			}
		}
	}
	test_note("%u of 24 layouts x CV kinds named", n);
}
