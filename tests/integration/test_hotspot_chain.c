// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's compiled-frame names (interp_hotspot_names.c) on a memory image
 * laid out here by hand, in place of a JVM's process: a Method (its
 * ConstMethod, line table, ConstantPool, holder Klass, Symbols) as
 * JDK 17 has it, and an nmethod, JDK 17's or JDK 25's layout, whose
 * PcDescs, scopes and metadata say which methods were inlined at which
 * pc.  No root: nothing is loaded into the kernel.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/types.h>

#include "../fuzz/hotspot_offsets.h"
#include "../unit/test.h"
#include "hotspot.h"
#include "interp_hotspot.h"

#define IMG_BASE 0x10000ULL
#define IMG_LEN 65536
/* two Methods (A.outer at 0, B.inner at 1024), the nmethod at 8192: its
 * PcDescs at +1024, metadata at +512, scopes at +768, code at +32768,
 * its deopt handler after every PcDesc's pc */
#define M_OUTER 0
#define M_INNER 1024
#define NM 8192
#define NM_META 512
#define NM_SCOPES 768
#define NM_PCS 1024
#define NM_CODE 32768
#define NM_DEOPT 20000
#define N_PCS 1000

static uint8_t img[IMG_LEN];

static int img_read(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr < IMG_BASE || addr - IMG_BASE > IMG_LEN ||
	    len > IMG_LEN - (addr - IMG_BASE))
		return -EFAULT;
	memcpy(buf, img + (addr - IMG_BASE), len);
	return 0;
}

static void put(size_t at, uint64_t v, size_t width)
{
	memcpy(img + at, &v, width);
}

/* A Method at m, JDK 17's offsets: "cls.name (file)", 8 bytes of
 * bytecodes whose bci 0 is line line0 and bci 4 line line0 + 1. */
static void lay_method(size_t m, const char *cls, const char *name,
		       const char *file, unsigned line0)
{
	const uint8_t lines[] = { 0xff, 0, (uint8_t)(2 * line0),
				  (4 << 3) | 1, 0 };
	const char *syms[] = { name, file, cls };
	unsigned i;

	put(m + 8, IMG_BASE + m + 64, 8);	   /* _constMethod */
	put(m + 64 + 8, IMG_BASE + m + 256, 8);	   /* _constants */
	put(m + 64 + 28, 1, 2);			   /* has a line table */
	put(m + 64 + 32, 8, 2);			   /* _code_size */
	put(m + 64 + 34, 1, 2);			   /* _name_index */
	memcpy(img + m + 64 + 48 + 8, lines, sizeof(lines));
	put(m + 256 + 24, IMG_BASE + m + 400, 8);  /* _pool_holder */
	put(m + 256 + 54, 2, 2);		   /* source file index */
	put(m + 256 + 72 + 8, IMG_BASE + m + 448, 8);  /* entry 1 */
	put(m + 256 + 72 + 16, IMG_BASE + m + 512, 8); /* entry 2 */
	put(m + 400 + 24, IMG_BASE + m + 576, 8);  /* Klass::_name */
	for (i = 0; i < 3; i++) {
		size_t at = m + 448 + 64 * i;

		put(at + 4, strlen(syms[i]), 2);
		memcpy(img + at + 6, syms[i], strlen(syms[i]));
	}
}

/* The image for *vm (JDK 17's offsets, and JDK 25's nmethod layout
 * when jdk25): A.outer inlined B.inner at PcDescs 0 to 499 (scope 1: B
 * at bci 4, sent from scope 4: A at bci 0), A alone from 500 on (scope
 * 4); a PcDesc every 16 bytes of code, a scope at every 7th. */
static void lay_image(struct hs_vm *vm, bool jdk25)
{
	const uint8_t scopes[] = { 0, /* 0 is no scope */
				   4, 2, 5,	/* at 1: sender 4, B, bci 4 */
				   0, 1, 1 };	/* at 4: none, A, bci 0 */
	uint64_t nm = IMG_BASE + NM;
	unsigned i;

	*vm = hs_offsets_jdk17();
	if (jdk25)
		hs_offsets_nm25(vm);
	memset(img, 0, sizeof(img));
	lay_method(M_OUTER, "A", "outer", "A.java", 10);
	lay_method(M_INNER, "B", "inner", "B.java", 20);
	put(NM + vm->nm_method, IMG_BASE + M_OUTER, 8);
	put(NM + NM_META, IMG_BASE + M_OUTER, 8);
	put(NM + NM_META + 8, IMG_BASE + M_INNER, 8);
	memcpy(img + NM + NM_SCOPES, scopes, sizeof(scopes));
	for (i = 0; i < N_PCS; i++) {
		put(NM + NM_PCS + 16 * i, 16 * i, 4);
		put(NM + NM_PCS + 16 * i + 4,
		    i % 7 != 3 ? 0 : i < 500 ? 1 : 4, 4);
	}
	if (!jdk25) {
		/* to JDK 22: code and scopes absolute, the rest
		 * header-relative */
		put(NM + vm->blob_code_begin, nm + NM_CODE, 8);
		put(NM + vm->cm_scopes_data, nm + NM_SCOPES, 8);
		put(NM + vm->cm_deopt_begin, nm + NM_CODE + NM_DEOPT, 8);
		put(NM + vm->nm_metadata_off, NM_META, 4);
		put(NM + vm->nm_scopes_pcs_off, NM_PCS, 4);
		put(NM + vm->nm_deps_off, NM_PCS + 16 * N_PCS, 4);
		return;
	}
	/* JDK 25: pcs and scopes in the immutable data (here the nmethod
	 * itself, so the offsets are the same; the scopes moved after the
	 * PcDescs, where these end), the metadata after 64 bytes of
	 * relocations in the mutable data */
	memcpy(img + NM + NM_PCS + 16 * N_PCS, scopes, sizeof(scopes));
	put(NM + vm->blob_code_offset, NM_CODE, 4);
	put(NM + vm->nm_immutable, nm, 8);
	put(NM + vm->nm_scopes_pcs_off, NM_PCS, 4);
	put(NM + vm->nm_scopes_data_off, NM_PCS + 16 * N_PCS, 4);
	put(NM + vm->nm_deopt_off, NM_CODE + NM_DEOPT, 4);
	put(NM + vm->blob_mutable, nm + NM_META - 64, 8);
	put(NM + vm->blob_reloc_size, 64, 4);
	put(NM + vm->blob_mutable_size, 64 + 16, 4);
}

/* Name the compiled frame at code offset pc into out (max names). */
static int name_at(const struct hs_vm *vm, uint64_t pc,
		   struct interp_symbol *out, unsigned max)
{
	struct interp_frame f = {
		.kind = INTERP_HOTSPOT, .n_payload = 2,
		.data = IMG_BASE + NM + NM_CODE + pc,
		.payload = { IMG_BASE + M_OUTER,
			     (IMG_BASE + NM) | HOTSPOT_COMPILED },
	};

	return hs_frame_names(img_read, NULL, 1, vm, &f, out, max);
}

static void check_layout(bool jdk25)
{
	struct interp_symbol out[INTERP_CHAIN_MAX];
	struct hs_counts c0, c1;
	struct hs_vm vm;
	int n;

	lay_image(&vm, jdk25);
	hs_get_counts(&c0);
	/* a call's return address minus one at PcDesc 3 (pc 48): B
	 * inlined into A, each at its own line */
	n = name_at(&vm, 47, out, INTERP_CHAIN_MAX);
	if (ASSERT_EQ(n, 2, "B inlined into A: two names")) {
		ASSERT_STREQ(out[0].name, "B.inner", "innermost first");
		ASSERT_STREQ(out[0].file, "B.java", "its file");
		ASSERT_EQ(out[0].line, 21, "B's line at its bci 4");
		ASSERT_STREQ(out[1].name, "A.outer", "the frame's own last");
		ASSERT_EQ(out[1].line, 10, "A's line at its bci 0");
	}
	/* max 1: the innermost kept */
	n = name_at(&vm, 47, out, 1);
	if (ASSERT_EQ(n, 1, "cut to max"))
		ASSERT_STREQ(out[0].name, "B.inner", "the innermost kept");
	/* the last PcDesc with B (493, pc 7888) and the first with A alone
	 * (500, pc 8000), found by bisection among 1000 */
	ASSERT_EQ(name_at(&vm, 7887 - 1, out, INTERP_CHAIN_MAX), 2, "pc 7887: B's PcDesc");
	ASSERT_EQ(name_at(&vm, 7888 - 1, out, INTERP_CHAIN_MAX), 2, "pc 7888: B's PcDesc");
	n = name_at(&vm, 7889 - 1, out, INTERP_CHAIN_MAX);
	if (ASSERT_EQ(n, 1, "pc 7889: A's PcDesc at 8000"))
		ASSERT_STREQ(out[0].name, "A.outer", "A alone");
	/* past the last PcDesc: the last one's scope */
	ASSERT_EQ(name_at(&vm, 16 * N_PCS + 5, out, INTERP_CHAIN_MAX), 1,
		  "past the end: the last scope, A's");
	/* the deopt handler: A alone, no line */
	n = name_at(&vm, NM_DEOPT, out, INTERP_CHAIN_MAX);
	if (ASSERT_EQ(n, 1, "at the deopt handler: the frame's own method")) {
		ASSERT_STREQ(out[0].name, "A.outer", "A");
		ASSERT_EQ(out[0].line, 0, "no line");
	}
	/* metadata naming another method as the outermost: misread */
	put(NM + NM_META, IMG_BASE + M_INNER, 8);
	n = name_at(&vm, 47, out, INTERP_CHAIN_MAX);
	if (ASSERT_EQ(n, 1, "outermost not the nmethod's: its own alone"))
		ASSERT_STREQ(out[0].name, "A.outer", "the unwinder's Method");
	hs_get_counts(&c1);
	/* one inlined frame each at pcs 47, 7887 and 7888; none when cut */
	ASSERT_EQ(c1.inlined - c0.inlined, 3, "inlined frames counted");
	ASSERT_EQ(c1.chain_cut - c0.chain_cut, 1, "the cut counted");
	ASSERT_EQ(c1.deopt - c0.deopt, 1, "the deopt handler counted");
	ASSERT_EQ(c1.chain_mismatch - c0.chain_mismatch, 1, "the mismatch counted");
}

TEST(hotspot_chain_jdk17_layout)
{
	check_layout(false);
}

TEST(hotspot_chain_jdk25_layout)
{
	check_layout(true);
}

/* A blob that is not an nmethod: named from its _name; a native
 * method's wrapper by its Java method. */
TEST(hotspot_chain_stub_names)
{
	struct hs_vm vm;
	struct interp_symbol out[2];
	struct interp_frame f = {
		.kind = INTERP_HOTSPOT, .n_payload = 2, .data = IMG_BASE + NM,
		.payload = { IMG_BASE + NM + 200,
			     (IMG_BASE + NM) | HOTSPOT_COMPILED | HOTSPOT_STUB },
	};

	lay_image(&vm, false);
	strcpy((char *)img + NM + 200, "StubRoutines (1)");
	if (ASSERT_EQ(hs_frame_names(img_read, NULL, 1, &vm, &f, out, 2), 1,
		      "a stub: one name"))
		ASSERT_STREQ(out[0].name, "[stub: StubRoutines (1)]", "its name");
	strcpy((char *)img + NM + 200, "native nmethod");
	if (ASSERT_EQ(hs_frame_names(img_read, NULL, 1, &vm, &f, out, 2), 1,
		      "a native wrapper: one name"))
		ASSERT_STREQ(out[0].name, "A.outer", "its Java method");
	/* a name at the image's end: read up to there */
	strcpy((char *)img + IMG_LEN - 4, "End");
	f.payload[0] = IMG_BASE + IMG_LEN - 4;
	if (ASSERT_EQ(hs_frame_names(img_read, NULL, 1, &vm, &f, out, 2), 1,
		      "a name at the end of the mapping"))
		ASSERT_STREQ(out[0].name, "[stub: End]", "read in full");
}
