// SPDX-License-Identifier: Apache-2.0
/*
 * .gopclntab reader.  Layouts (runtime/symtab.go, cmd/link/internal/ld/
 * pcln.go of each version):
 *
 *   pcHeader: magic u32, pad u8 u8, minLC u8, ptrSize u8, nfunc, nfiles,
 *             [textStart (1.18+)], funcnameOffset, cuOffset,
 *             filetabOffset, pctabOffset, pclnOffset   (ptrSize words)
 *   functab at pclnOffset: nfunc entries {entry, funcoff} then the end
 *             pc; 1.16: uintptr pairs of absolute pcs, 1.18+: u32 pairs
 *             of offsets from textStart.  _func = functab + funcoff.
 *   _func:    1.16: entry uintptr, nameoff i32, args i32, deferreturn
 *             u32, pcsp u32...; 1.18+: entryoff u32, nameoff, args,
 *             deferreturn, pcsp u32...
 *   pcvalue:  pairs (zig-zag varint value delta, uvarint pc delta *
 *             minLC) from value -1 at the entry, ending at a zero value
 *             delta (after the first pair).
 */
#include "gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_116 0xfffffffaU
#define MAGIC_118 0xfffffff0U
#define MAGIC_120 0xfffffff1U

/* Bounds for sanity checks and the signature search. */
#define MAX_FUNCS (1U << 24)
#define MAX_SEARCH (128U << 20)
#define MAX_FRAME (1 << 30)

struct gopc_table {
	const uint8_t *d; /* header .. end of the region that holds it */
	size_t len;
	uint64_t vaddr;
	unsigned version;
	uint8_t quantum;
	uint64_t nfunc;
	uint64_t text_start;
	uint64_t funcname_off, pctab_off, pcln_off;
	size_t funcname_len, pctab_len, pcln_len;
};

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

unsigned gopc_version(const struct gopc_table *t)
{
	return t->version;
}

size_t gopc_nfunc(const struct gopc_table *t)
{
	return t->nfunc;
}

uint64_t gopc_vaddr(const struct gopc_table *t)
{
	return t->vaddr;
}

void gopc_free(struct gopc_table *t)
{
	free(t);
}

/* The value a R_X86_64_RELATIVE relocation stores at vaddr: a PIE whose
 * header field reads 0 in the file. */
static bool relative_reloc(const struct elfm *e, uint64_t vaddr, uint64_t *val)
{
	const Elf64_Shdr *sh;
	unsigned n, i;

	sh = elfm_shdrs(e, &n);
	for (i = 1; i < n; i++) {
		const uint8_t *p;
		size_t len, k;

		if (sh[i].sh_type != SHT_RELA ||
		    elfm_section_bytes(e, &sh[i], &p, &len) != 0)
			continue;
		for (k = 0; k + sizeof(Elf64_Rela) <= len;
		     k += sizeof(Elf64_Rela)) {
			Elf64_Rela r;

			memcpy(&r, p + k, sizeof(r));
			if (r.r_offset == vaddr &&
			    ELF64_R_TYPE(r.r_info) == R_X86_64_RELATIVE) {
				*val = (uint64_t)r.r_addend;
				return true;
			}
		}
	}
	return false;
}

/* Check a candidate header at d (len bytes to the end of its region). */
static bool try_header(const struct elfm *e, const uint8_t *d, size_t len,
		       uint64_t vaddr, struct gopc_table *t)
{
	uint64_t w[8], fn_words;
	unsigned nw, i;
	uint32_t magic;

	if (len < 8 + 8 * 8)
		return false;
	magic = le32(d);
	memset(t, 0, sizeof(*t));
	if (magic == MAGIC_116)
		t->version = 116;
	else if (magic == MAGIC_118)
		t->version = 118;
	else if (magic == MAGIC_120)
		t->version = 120;
	else
		return false;
	if (d[4] != 0 || d[5] != 0 || d[7] != 8 ||
	    (d[6] != 1 && d[6] != 2 && d[6] != 4))
		return false;
	t->quantum = d[6];
	nw = t->version == 116 ? 7 : 8;
	for (i = 0; i < nw; i++)
		w[i] = le64(d + 8 + 8 * i);
	t->nfunc = w[0];
	if (t->version == 116) {
		t->funcname_off = w[2];
		t->pctab_off = w[5];
		t->pcln_off = w[6];
	} else {
		t->text_start = w[2];
		t->funcname_off = w[3];
		t->pctab_off = w[6];
		t->pcln_off = w[7];
	}
	if (t->nfunc == 0 || t->nfunc > MAX_FUNCS)
		return false;
	if (t->funcname_off < 8 + 8 * nw || t->funcname_off > t->pctab_off ||
	    t->pctab_off > t->pcln_off || t->pcln_off >= len)
		return false;
	/* The pcvalue tables and function names come before the function
	 * table; the function table and the _func records to the end. */
	t->funcname_len = t->pctab_off - t->funcname_off;
	t->pctab_len = t->pcln_off - t->pctab_off;
	t->pcln_len = len - t->pcln_off;
	fn_words = 2 * t->nfunc + 1;
	if (fn_words * (t->version == 116 ? 8 : 4) > t->pcln_len)
		return false;
	if (t->version != 116 && t->text_start == 0 &&
	    !relative_reloc(e, vaddr + 8 + 2 * 8, &t->text_start)) {
		const Elf64_Shdr *text = elfm_section(e, ".text");

		if (!text)
			return false;
		t->text_start = text->sh_addr;
	}
	t->d = d;
	t->len = len;
	t->vaddr = vaddr;
	return true;
}

/* The function table's entry i: pc and _func offset. */
static void ftab(const struct gopc_table *t, size_t i, uint64_t *pc,
		 uint64_t *funcoff)
{
	const uint8_t *p = t->d + t->pcln_off;

	if (t->version == 116) {
		*pc = le64(p + 16 * i);
		*funcoff = i < t->nfunc ? le64(p + 16 * i + 8) : 0;
	} else {
		*pc = t->text_start + le32(p + 8 * i);
		*funcoff = i < t->nfunc ? le32(p + 8 * i + 4) : 0;
	}
}

static bool plausible(const struct elfm *e, const struct gopc_table *t)
{
	uint64_t pc0, pcn, off;
	struct gopc_func f;

	ftab(t, 0, &pc0, &off);
	ftab(t, t->nfunc, &pcn, &off);
	return pcn > pc0 && elfm_in_text(e, pc0, pcn) &&
	       gopc_func(t, 0, &f) == 0;
}

static bool search(const struct elfm *e, const uint8_t *d, size_t len,
		   uint64_t vaddr, struct gopc_table *t)
{
	size_t off;

	if (len > MAX_SEARCH)
		len = MAX_SEARCH;
	for (off = 0; off + 72 <= len; off += 8) {
		uint32_t m = le32(d + off);

		if ((m & 0xfffffff0U) != 0xfffffff0U)
			continue;
		if (try_header(e, d + off, len - off, vaddr + off, t) &&
		    plausible(e, t))
			return true;
	}
	return false;
}

/* Does e say it was built by Go?  Its build id note (owner "Go", type
 * 4) or .go.buildinfo; the signature search is only worth it then. */
static bool built_by_go(const struct elfm *e)
{
	const uint8_t *d;
	size_t n;

	return elfm_section(e, ".go.buildinfo") ||
	       elfm_note(e, "Go", 4, &d, &n) == 0;
}

static int find(const struct elfm *e, struct gopc_table *t)
{
	static const char *named[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	static const char *hosts[] = { ".data.rel.ro", ".rodata", ".noptrdata" };
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;
	const uint8_t *d;
	unsigned n, i;
	size_t len;

	for (i = 0; i < 2; i++) {
		sh = elfm_section(e, named[i]);
		if (sh && elfm_section_bytes(e, sh, &d, &len) == 0 &&
		    try_header(e, d, len, sh->sh_addr, t) && plausible(e, t))
			return 0;
	}
	if (!built_by_go(e))
		return -ENOENT;
	for (i = 0; i < 3; i++) {
		sh = elfm_section(e, hosts[i]);
		if (sh && elfm_section_bytes(e, sh, &d, &len) == 0 &&
		    search(e, d, len, sh->sh_addr, t))
			return 0;
	}
	elfm_shdrs(e, &n);
	if (n > 0)
		return -ENOENT;
	/* No section headers: search the read-only data segments. */
	ph = elfm_phdrs(e, &n);
	for (i = 0; i < n; i++) {
		size_t avail;

		if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_X) ||
		    elfm_vaddr_bytes(e, ph[i].p_vaddr, 0, &d, &avail) != 0)
			continue;
		if (search(e, d, avail, ph[i].p_vaddr, t))
			return 0;
	}
	return -ENOENT;
}

int gopc_open(const struct elfm *e, struct gopc_table **out)
{
	struct gopc_table *t;
	int err;

	*out = NULL;
	if (elfm_ehdr(e)->e_machine != EM_X86_64 &&
	    elfm_ehdr(e)->e_machine != EM_AARCH64)
		return -ENOENT;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = find(e, t);
	if (err) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

int gopc_func(const struct gopc_table *t, size_t i, struct gopc_func *f)
{
	size_t fsz = t->version == 116 ? 24 : 20;
	uint64_t funcoff, dummy, fentry;
	const uint8_t *fn;
	int32_t nameoff;

	memset(f, 0, sizeof(*f));
	f->name = "";
	if (i >= t->nfunc)
		return -EINVAL;
	ftab(t, i, &f->entry, &funcoff);
	ftab(t, i + 1, &f->end, &dummy);
	if (funcoff > t->pcln_len || fsz > t->pcln_len - funcoff ||
	    f->end < f->entry)
		return -EINVAL;
	fn = t->d + t->pcln_off + funcoff;
	if (t->version == 116) {
		fentry = le64(fn);
		nameoff = (int32_t)le32(fn + 8);
		f->pcsp = le32(fn + 20);
	} else {
		fentry = t->text_start + le32(fn);
		nameoff = (int32_t)le32(fn + 4);
		f->pcsp = le32(fn + 16);
	}
	/* The record must describe the same function as the table. */
	if (fentry != f->entry)
		return -EINVAL;
	if (nameoff >= 0 && (uint64_t)nameoff < t->funcname_len) {
		const char *s = (const char *)t->d + t->funcname_off + nameoff;

		if (memchr(s, 0, t->funcname_len - nameoff))
			f->name = s;
	}
	if (f->pcsp >= t->pctab_len)
		return -EINVAL;
	return 0;
}

/* ---- rows ------------------------------------------------------------ */

struct pcval {
	const uint8_t *p, *end;
	uint64_t pc, end_pc;
	int64_t val;
	bool first, bad;
	uint8_t quantum;
};

static bool uvarint(struct pcval *v, uint64_t *out)
{
	uint64_t x = 0;
	unsigned shift = 0;

	while (v->p < v->end) {
		uint8_t b = *v->p++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = x;
			return true;
		}
		shift += 7;
		if (shift >= 64)
			break;
	}
	v->bad = true;
	return false;
}

/* Next range [*lo, *hi) with value *val; false at the end. */
static bool pcval_next(struct pcval *v, uint64_t *lo, uint64_t *hi,
		       int64_t *val)
{
	uint64_t ud, pcd;

	if (v->bad || v->pc >= v->end_pc || !uvarint(v, &ud))
		return false;
	if (ud == 0 && !v->first)
		return false;
	if (!uvarint(v, &pcd))
		return false;
	v->first = false;
	/* Zig-zag: bit 0 is the sign (-x - 1 is ~x).  Summed with wrap-around:
	 * a hostile table's deltas may pass int64's range, and the value is
	 * checked by its users, not trusted. */
	v->val = (int64_t)((uint64_t)v->val +
			   ((ud & 1) ? ~(ud >> 1) : (ud >> 1)));
	if (pcd > (v->end_pc - v->pc) / v->quantum + 1)
		pcd = (v->end_pc - v->pc) / v->quantum + 1;
	*lo = v->pc;
	v->pc += pcd * v->quantum;
	*hi = v->pc < v->end_pc ? v->pc : v->end_pc;
	*val = v->val;
	return true;
}

enum special { SP_NONE, SP_STOP, SP_SWITCH, SP_FP_ANY, SP_SIGNAL };

/* Functions an unwinder must treat specially; names without the ".abi0"
 * suffix ABI wrappers of assembly functions carry. */
static enum special special_func(const char *name)
{
	static const struct {
		const char *name;
		enum special kind;
	} tab[] = {
		/* Bottom of every goroutine: its entry's caller. */
		{ "runtime.goexit", SP_STOP },
		/* Bottom of every M's g0 stack (m0 via rt0_go). */
		{ "runtime.mstart", SP_STOP },
		{ "runtime.rt0_go", SP_STOP },
		/* Switched to g0 for the scheduler, which never returns:
		 * the goroutine above is parked, not running this. */
		{ "runtime.mcall", SP_STOP },
		/* Switched to g0 to run a function for the goroutine: its
		 * stack goes on from its saved context (RULE_CMD_GO_SWITCH) */
		{ "runtime.morestack", SP_SWITCH },
		{ "runtime.systemstack", SP_SWITCH },
		{ "runtime.asmcgocall", SP_SWITCH },
		/* Park the goroutine's sp in r12 and call the vDSO on the
		 * g0 stack; their frame pointer still leads back. */
		{ "runtime.nanotime1", SP_FP_ANY },
		{ "runtime.walltime1", SP_FP_ANY },
		{ "runtime.walltime", SP_FP_ANY },
		/* sa_restorer of Go's signal handlers. */
		{ "runtime.sigreturn", SP_SIGNAL },
		{ "runtime.sigreturn__sigaction", SP_SIGNAL },
	};
	size_t i, n = strlen(name);

	if (n > 5 && strcmp(name + n - 5, ".abi0") == 0)
		n -= 5;
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].name) == n && strncmp(tab[i].name, name, n) == 0)
			return tab[i].kind;
	return SP_NONE;
}

/* Where the prologue has stored rbp: the address from which rbp sits at
 * CFA-16, given the first range [lo, ...) whose sp delta val > 0.  Returns
 * 0 when the code does not match a known prologue. */
static uint64_t fp_saved_at(const struct elfm *e, uint64_t lo, int64_t val)
{
	const uint8_t *p;
	size_t avail;

	/* Go >= 1.21: PUSHQ BP, then MOVQ SP, BP. */
	if (val == 8 && elfm_vaddr_bytes(e, lo - 1, 1, &p, &avail) == 0 &&
	    p[0] == 0x55)
		return lo;
	if (elfm_vaddr_bytes(e, lo, 8, &p, &avail) != 0)
		return 0;
	/* Go <= 1.20: SUBQ $N, SP; MOVQ BP, N-8(SP) (disp8 or disp32). */
	if (p[0] == 0x48 && p[1] == 0x89 && p[2] == 0x6c && p[3] == 0x24 &&
	    (int64_t)(int8_t)p[4] == val - 8)
		return lo + 5;
	if (p[0] == 0x48 && p[1] == 0x89 && p[2] == 0xac && p[3] == 0x24 &&
	    (int64_t)(int32_t)le32(p + 4) == val - 8)
		return lo + 8;
	return 0;
}

/* The rule of Go's stack switches (RULE_CMD_GO_SWITCH), from the code of
 * runtime.systemstack, which reads what the BPF side needs:
 *   mov %fs:DISP32,%reg       g from TLS at a fixed offset (internal link)
 *   mov DISP32(%rip),%reg     or its offset from a GOT slot (cgo), then
 *   mov %fs:(%reg),%reg       g
 *   cmp DISP(%m),%g           m->gsignal, then m->curg: the last compare
 *                             with a displacement before the first call
 *                             (gosave_systemstack_switch)
 * Anything else (another Go version's code, a damaged file) gives the
 * frame-pointer rule, allowed to cross to the goroutine's stack. */
static struct unwind_rule go_switch_rule(const struct elfm *e,
					 const struct gopc_table *t)
{
	struct unwind_rule r = { .cmd = RULE_CMD_GO_SWITCH,
				 .flags = RULE_F_GO_FP };
	uint64_t got = 0, curg = 0;
	bool have_tls = false;
	int64_t tls = 0;
	const uint8_t *p;
	struct gopc_func f;
	size_t avail, i, n;

	/* arm64 keeps g in x28, not in TLS: the frame pointer leads on */
	if (elfm_ehdr(e)->e_machine != EM_X86_64)
		return r;
	for (i = 0; i < t->nfunc; i++)
		if (gopc_func(t, i, &f) == 0 &&
		    special_func(f.name) == SP_SWITCH &&
		    !strncmp(f.name, "runtime.systemstack", 19) &&
		    (f.name[19] == 0 || f.name[19] == '.'))
			break;
	if (i == t->nfunc || f.end <= f.entry ||
	    elfm_vaddr_bytes(e, f.entry, 1, &p, &avail) != 0)
		return r;
	n = f.end - f.entry;
	if (n > avail)
		n = avail;
	if (n > 256)
		n = 256;
	for (i = 0; i + 4 <= n && p[i] != 0xe8; i++) {
		if (i + 9 <= n && p[i] == 0x64 && p[i + 1] == 0x48 &&
		    p[i + 2] == 0x8b && (p[i + 3] & 0xc7) == 0x04 &&
		    p[i + 4] == 0x25 && !have_tls) {
			tls = (int32_t)le32(p + i + 5);
			have_tls = true;
		} else if (i + 7 <= n && p[i] == 0x48 && p[i + 1] == 0x8b &&
			   (p[i + 2] & 0xc7) == 0x05 && !have_tls) {
			got = f.entry + i + 7 + (int64_t)(int32_t)le32(p + i + 3);
			have_tls = true;
		} else if (p[i] == 0x48 && p[i + 1] == 0x3b &&
			   (p[i + 2] & 0xc0) == 0x80 && (p[i + 2] & 7) != 4 &&
			   i + 7 <= n) {
			curg = le32(p + i + 3);
		} else if (p[i] == 0x48 && p[i + 1] == 0x3b &&
			   (p[i + 2] & 0xc0) == 0x40 && (p[i + 2] & 7) != 4) {
			curg = p[i + 3];
		}
	}
	if (!have_tls || !curg || curg >= 4096 || (curg & 7) ||
	    (got && got > UINT32_MAX) || tls < INT32_MIN || tls > 0)
		return r;
	r.flags = got ? RULE_F_GO_TLS_GOT : 0;
	r.cfa_off = got ? (int32_t)(uint32_t)got : (int32_t)tls;
	r.fp_off = (int32_t)curg;
	return r;
}

static int add(struct dt_builder *b, uint64_t addr, const struct unwind_rule *r)
{
	return b ? dt_builder_add(b, addr, r) : 0;
}

/*
 * arm64 (LR-based): the call leaves the return address in x30; a function
 * with a frame stores it at the new sp ("MOVD.W R30, -N(RSP)", where pcsp
 * becomes N) and the caller's x29 just below, at sp - 8 ("MOVD R29,
 * -8(RSP)", the next instruction).  So with sp delta val: 0, CFA = sp and
 * ra in x30; else CFA = sp + val, ra at CFA - val, x29 at CFA - val - 8
 * once stored.  Returns 0 or the builder's error.
 */
static int a64_rows(const struct elfm *e, uint64_t lo, int64_t val,
		    struct dt_builder *b)
{
	static const uint8_t str_fp[] = { 0xfd, 0x83, 0x1f, 0xf8 };
	struct unwind_rule r = { .cfa_reg = RULE_REG_SP,
				 .ra_rule = RULE_RA_LR };
	const uint8_t *p;
	size_t avail;
	int err;

	if (val == 0)
		return add(b, lo, &r);
	if (val > -(INT16_MIN + 8) || (val & 7)) {
		r = (struct unwind_rule){ .cmd = RULE_CMD_UNSUPPORTED };
		return add(b, lo, &r);
	}
	r.cfa_off = (int32_t)val;
	r.ra_rule = RULE_RA_CFA_OFF;
	r.ra_off = (int16_t)-val;
	if (elfm_vaddr_bytes(e, lo, 4, &p, &avail) == 0 &&
	    !memcmp(p, str_fp, 4)) {
		/* at the store itself x29 is still the caller's */
		err = add(b, lo, &r);
		if (err)
			return err;
		lo += 4;
	}
	r.fp_rule = RULE_FP_CFA_OFF;
	r.fp_off = (int32_t)(-val - 8);
	return add(b, lo, &r);
}

/* The rows of one function from its pcsp table; with b NULL only checks
 * that the table decodes (-EINVAL when not). */
static int func_rows(const struct elfm *e, const struct gopc_table *t,
		     const struct gopc_func *f, struct dt_builder *b)
{
	struct pcval v = { .first = true, .val = -1, .quantum = t->quantum };
	uint64_t lo, hi, fp_from = 0;
	int64_t val, fp_frame = 0;
	bool probed = false;
	int err;

	v.p = t->d + t->pctab_off + f->pcsp;
	v.end = t->d + t->pctab_off + t->pctab_len;
	v.pc = f->entry;
	v.end_pc = f->end;
	while (pcval_next(&v, &lo, &hi, &val)) {
		struct unwind_rule r = { .cfa_reg = RULE_REG_SP };

		if (hi <= lo || !b)
			continue;
		if (val < 0 || val > MAX_FRAME) {
			r.cmd = RULE_CMD_INVALID;
			err = add(b, lo, &r);
			if (err)
				return err;
			continue;
		}
		if (elfm_ehdr(e)->e_machine == EM_AARCH64) {
			err = a64_rows(e, lo, val, b);
			if (err)
				return err;
			continue;
		}
		r.cfa_off = (int32_t)val + 8;
		if (val > 0 && !probed) {
			probed = true;
			fp_from = fp_saved_at(e, lo, val);
			fp_frame = val;
		}
		if (fp_from && val >= fp_frame && hi > fp_from) {
			if (lo < fp_from) {
				err = add(b, lo, &r);
				if (err)
					return err;
				lo = fp_from;
			}
			r.fp_rule = RULE_FP_CFA_OFF;
			r.fp_off = -16;
		}
		err = add(b, lo, &r);
		if (err)
			return err;
	}
	return v.bad ? -EINVAL : 0;
}

int gopc_add_rows(const struct elfm *e, const struct gopc_table *t,
		  struct dt_builder *b, struct dt_extract_stats *st)
{
	struct unwind_rule go_switch = go_switch_rule(e, t);
	bool a64 = elfm_ehdr(e)->e_machine == EM_AARCH64;
	int n = 0, err;
	size_t i;

	dt_builder_set_source(b, DT_SRC_GOPCLNTAB);
	if (st)
		st->go_version = t->version;
	for (i = 0; i < t->nfunc; i++) {
		struct unwind_rule r = { 0 };
		struct gopc_func f;
		uint64_t start;

		if (gopc_func(t, i, &f) != 0 || f.end == f.entry ||
		    !elfm_in_text(e, f.entry, f.end))
			continue;
		start = f.entry;
		switch (special_func(f.name)) {
		case SP_STOP:
			r.cmd = RULE_CMD_STOP;
			err = add(b, start, &r);
			break;
		case SP_SWITCH:
			err = add(b, start, &go_switch);
			break;
		case SP_FP_ANY:
			r.cmd = RULE_CMD_GO_SWITCH;
			r.flags = RULE_F_GO_FP;
			err = add(b, start, &r);
			break;
		case SP_SIGNAL:
			/* The handler returns to the entry; the lookup of a
			 * return address is at pc-1, in the padding before. */
			r.cmd = RULE_CMD_SIGNAL;
			start = f.entry - 1;
			err = add(b, start, &r);
			break;
		default:
			if (!f.pcsp && a64) {
				err = a64_rows(e, start, 0, b);
			} else if (!f.pcsp) {
				/* No table: nothing pushed anywhere. */
				r.cfa_off = 8;
				err = add(b, start, &r);
			} else if (func_rows(e, t, &f, NULL) != 0) {
				/* Corrupt table: nothing of it is trusted. */
				r.cmd = RULE_CMD_INVALID;
				err = add(b, start, &r);
			} else {
				err = func_rows(e, t, &f, b);
			}
		}
		if (!err)
			err = dt_builder_add_range(b, start, f.end);
		if (err)
			return err;
		n++;
	}
	if (st)
		st->go_funcs += n;
	return n;
}
