// SPDX-License-Identifier: Apache-2.0
/*
 * CFI extraction against an independent oracle: binutils' readelf.
 *
 * `readelf --debug-dump=frames-interp` prints, for every FDE, the table of
 * rules per location; `--debug-dump=frames` prints the raw instructions,
 * which we replay only to know which DWARF expression stands behind an
 * "exp" cell.  Every row readelf prints must map, through dt_file_lookup,
 * to the rule it describes, or to INVALID exactly where the rule has a
 * form we do not lower.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ctype.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budget.h"
#include "debugfind.h"
#include "deltas.h"
#include "ehframe.h"
#include "elfmap.h"
#include "synth_elf.h"

/*
 * The architecture under test: x86-64 (the host's files, the host's
 * readelf) or AArch64 (Debian's arm64 files from multiarch packages, read
 * on any host; binutils-aarch64-linux-gnu's readelf names its registers).
 * Set by each oracle test before it runs.
 */
struct oarch {
	uint16_t machine;
	const char *readelf;
	const char *fp; /* readelf's column of the frame pointer */
	bool a64;
};
static const struct oarch oarch_x86 = { EM_X86_64, "readelf", "rbp", false };
static const struct oarch oarch_a64 = { EM_AARCH64, "aarch64-linux-gnu-readelf",
					"x29", true };
static const struct oarch *oarch = &oarch_x86;

/* ---- raw dump: expressions by (section, FDE, location) ------------------ */

struct expr_snap {
	int sec;
	unsigned long fde;
	uint64_t loc;
	char *cfa;  /* CFA expression text, NULL when a register rule */
	char *rbp;  /* rbp expression text, NULL when another rule */
	bool rbp_undef;
	uint32_t undef; /* registers (bit = DWARF number) DW_CFA_undefined */
};

struct raw {
	struct expr_snap *v;
	size_t n, cap;
};

struct rstate {
	char *cfa, *rbp;
	bool rbp_undef;
	uint32_t undef;
};

static void snap(struct raw *r, int sec, unsigned long fde, uint64_t loc,
		 const struct rstate *s)
{
	if (!s->cfa && !s->rbp && !s->rbp_undef && !s->undef)
		return; /* only what an "exp"/"u" cell needs */
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = (struct expr_snap){ sec, fde, loc,
					    s->cfa ? strdup(s->cfa) : NULL,
					    s->rbp ? strdup(s->rbp) : NULL,
					    s->rbp_undef, s->undef };
}

/* The text between the first '(' after skip and its matching ')'. */
static char *paren(const char *line, const char *after)
{
	const char *p = strstr(line, after), *q;
	int depth = 0;

	if (!p)
		return NULL;
	p = strchr(p + strlen(after), '(');
	if (!p)
		return NULL;
	for (q = p; *q; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')' && --depth == 0)
			return strndup(p + 1, q - p - 1);
	}
	return NULL;
}

static void raw_parse(const char *path, struct raw *r)
{
	char cmdline[1024], line[4096];
	struct rstate st = { 0 }, stack[32];
	unsigned long fde = 0;
	uint64_t loc = 0;
	int sec = -1, depth = 0;
	bool in_fde = false;
	FILE *p;

	snprintf(cmdline, sizeof(cmdline),
		 "%s -W --debug-dump=frames '%s' 2>/dev/null", oarch->readelf,
		 path);
	p = popen(cmdline, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		unsigned long off, a, b;
		char kind[8];
		uint64_t to;
		char *s;

		if (strncmp(line, "Contents of the ", 16) == 0) {
			if (in_fde)
				snap(r, sec, fde, loc, &st);
			in_fde = false;
			sec++;
			continue;
		}
		if (sscanf(line, "%lx %lx %lx %7s", &off, &a, &b, kind) == 4 &&
		    (strcmp(kind, "FDE") == 0 || strcmp(kind, "CIE") == 0 ||
		     strcmp(kind, "ZERO") == 0)) {
			if (in_fde)
				snap(r, sec, fde, loc, &st);
			free(st.cfa);
			free(st.rbp);
			memset(&st, 0, sizeof(st));
			depth = 0;
			in_fde = strcmp(kind, "FDE") == 0;
			fde = off;
			s = strstr(line, "pc=");
			loc = s ? strtoull(s + 3, NULL, 16) : 0;
			continue;
		}
		if (!in_fde)
			continue;
		if ((s = strstr(line, " to ")) && strstr(line, "DW_CFA_advance")) {
			to = strtoull(s + 4, NULL, 16);
			snap(r, sec, fde, loc, &st);
			loc = to;
		} else if (strstr(line, "DW_CFA_set_loc: ")) {
			snap(r, sec, fde, loc, &st);
			loc = strtoull(strstr(line, "DW_CFA_set_loc: ") + 16, NULL, 16);
		} else if (strstr(line, "DW_CFA_def_cfa_expression")) {
			free(st.cfa);
			st.cfa = paren(line, "DW_CFA_def_cfa_expression");
		} else if (strstr(line, "DW_CFA_def_cfa:") ||
			   strstr(line, "DW_CFA_def_cfa_register") ||
			   strstr(line, "DW_CFA_def_cfa_sf")) {
			free(st.cfa);
			st.cfa = NULL;
		} else if (strstr(line, "r6 (rbp)") &&
			   !strstr(line, "DW_CFA_register: r") /* rbp as source */) {
			free(st.rbp);
			st.rbp = NULL;
			st.rbp_undef = strstr(line, "DW_CFA_undefined") != NULL;
			if (strstr(line, "DW_CFA_expression"))
				st.rbp = paren(line, "r6 (rbp)");
		} else if ((s = strstr(line, "DW_CFA_")) && !strstr(line, "def_cfa") &&
			   (s = strstr(s, ": r")) && isdigit((unsigned char)s[3])) {
			/* a rule for another register: "u" in the table is
			 * DW_CFA_undefined only after that instruction */
			unsigned reg = (unsigned)strtoul(s + 3, NULL, 10);

			if (reg < 32) {
				if (strstr(line, "DW_CFA_undefined"))
					st.undef |= 1u << reg;
				else
					st.undef &= ~(1u << reg);
			}
		} else if (strstr(line, "DW_CFA_remember_state") && depth < 32) {
			stack[depth] = st;
			stack[depth].cfa = st.cfa ? strdup(st.cfa) : NULL;
			stack[depth].rbp = st.rbp ? strdup(st.rbp) : NULL;
			depth++;
		} else if (strstr(line, "DW_CFA_restore_state") && depth > 0) {
			free(st.cfa);
			free(st.rbp);
			st = stack[--depth];
		}
	}
	if (in_fde)
		snap(r, sec, fde, loc, &st);
	free(st.cfa);
	free(st.rbp);
	pclose(p);
}

/* The snapshot in force at loc, or NULL. */
static const struct expr_snap *raw_find(const struct raw *r, int sec,
					unsigned long fde, uint64_t loc)
{
	const struct expr_snap *best = NULL;
	size_t lo = 0, hi = r->n, i;

	/* Snapshots are in dump order: (sec, fde) ascending. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->v[mid].sec < sec ||
		    (r->v[mid].sec == sec && r->v[mid].fde < fde))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < r->n && r->v[i].sec == sec && r->v[i].fde == fde; i++)
		if (r->v[i].loc <= loc)
			best = &r->v[i];
	return best;
}

static void raw_free(struct raw *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].cfa);
		free(r->v[i].rbp);
	}
	free(r->v);
}

/* ---- expected rules ------------------------------------------------------- */

/* The rule a readelf expression text stands for; false when we do not
 * lower that form. */
static bool expect_cfa_expr(const char *x, struct unwind_rule *r)
{
	int n = 0, reg, lit;
	long k, m;
	char rn[8];

	if (sscanf(x, "DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; DW_OP_lit15; "
		      "DW_OP_and; DW_OP_lit%d; DW_OP_ge; DW_OP_lit3; DW_OP_shl; "
		      "DW_OP_plus%n",
		   &lit, &n) == 1 &&
	    x[n] == 0) {
		r->cmd = RULE_CMD_PLT;
		r->cfa_reg = RULE_REG_SP;
		r->cfa_off = 8;
		r->cfa_post = lit;
		return true;
	}
	if (sscanf(x, "DW_OP_breg%d (%7[a-z0-9]): %ld%n", &reg, rn, &k, &n) != 3 ||
	    reg < 0 || reg >= RULE_REG_COUNT)
		return false;
	r->cfa_reg = reg;
	r->cfa_off = k;
	x += n;
	if (*x == 0)
		return true;
	if (strncmp(x, "; DW_OP_deref", 13) != 0)
		return false;
	x += 13;
	r->flags = RULE_F_DEREF_CFA;
	if (*x == 0)
		return true;
	if (sscanf(x, "; DW_OP_plus_uconst: %ld%n", &m, &n) != 1 || x[n])
		return false;
	r->cfa_post = m;
	return true;
}

/* readelf's name of a general register: its rule slot (enum rule_reg),
 * or -1.  AArch64 rules compute from sp and x29 only. */
static int reg_number(const char *name)
{
	static const char *const names[RULE_REG_COUNT] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
	};
	int i;

	if (oarch->a64)
		return !strcmp(name, "sp") ? RULE_REG_SP :
		       !strcmp(name, "x29") ? RULE_REG_FP : -1;
	for (i = 0; i < RULE_REG_COUNT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* The other callee-saved registers (struct unwind_rule.saved) from the
 * row's cells: "c-16" saved at CFA-16, "u"/"s" or no column kept (unless
 * the raw dump says DW_CFA_undefined), anything else (in a register, an
 * expression, a val_ rule) undefined. */
static void expect_saved(char **cols, char **v, int n,
			 const struct expr_snap *x, struct unwind_rule *want)
{
	static const uint8_t regs[RULE_SAVED_COUNT] = RULE_SAVED_REGS;
	int i, j;

	for (i = 0; i < RULE_SAVED_COUNT; i++) {
		const char *cell = NULL;
		long k;

		for (j = 1; j < n; j++)
			if (reg_number(cols[j]) == regs[i])
				cell = v[j];
		if (!cell || !strcmp(cell, "u") || !strcmp(cell, "s"))
			want->saved[i] = (cell && !strcmp(cell, "u") && x &&
					  (x->undef & (1u << regs[i]))) ?
						 RULE_SAVED_UNDEF :
						 RULE_SAVED_SAME;
		else if (cell[0] == 'c' && sscanf(cell + 1, "%ld", &k) == 1 &&
			 k % 8 == 0 && k / 8 > RULE_SAVED_UNDEF && k / 8 <= 127 &&
			 k != 0)
			want->saved[i] = (int8_t)(k / 8);
		else
			want->saved[i] = RULE_SAVED_UNDEF;
	}
}

struct oracle {
	uint64_t rows, agree, unsupported, disagree, unresolved;
	uint64_t signal, stop, plt, deref, fp_reg;
	uint64_t ra_lr, ra_saved; /* AArch64: where the return address is */
};

/* Split a row line into cells; "r9 (r9)" is one cell. */
static int cells(char *line, char **out, int max)
{
	int n = 0;
	char *tok, *save;

	for (tok = strtok_r(line, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (tok[0] == '(' && n > 0) {
			/* Glue to the previous cell. */
			continue;
		}
		if (n < max)
			out[n++] = tok;
	}
	return n;
}

static void report(struct oracle *o, const struct dt_file *f, uint64_t addr,
		   const struct unwind_rule *want, bool supported,
		   const char *line)
{
	struct unwind_rule inv = { .cmd = RULE_CMD_INVALID }, got;
	struct unwind_rule unsup = { .cmd = RULE_CMD_UNSUPPORTED };
	int idx = dt_file_lookup(f, addr);
	char g[160], w[160];

	got = idx >= 0 ? *dt_file_rule(f, idx) : inv;
	o->rows++;
	if (!supported)
		want = &unsup;
	if (memcmp(&got, want, sizeof(got)) == 0) {
		o->agree++;
		if (!supported)
			o->unsupported++;
		return;
	}
	if (o->disagree++ < 10)
		printf("    disagree at 0x%llx: ours %s, readelf %s: %s",
		       (unsigned long long)addr, dt_rule_str(&got, g, sizeof(g)),
		       supported ? dt_rule_str(want, w, sizeof(w)) : "unsupported",
		       line);
}

/* Where a row is checked: its FDE and what the CIE says. */
struct fde_ctx {
	const struct raw *raw;
	int sec;
	unsigned long fde;
	bool signal;
};

/* Check one readelf row (cells v, columns cols) at addr. */
static void check_row(struct oracle *o, const struct dt_file *f,
		      const struct fde_ctx *c, char **cols, char **v, int n,
		      uint64_t addr, const char *line)
{
	struct unwind_rule want = { 0 };
	const char *cfa = NULL, *ra = NULL, *rbp = NULL;
	const struct expr_snap *x = raw_find(c->raw, c->sec, c->fde, addr);
	bool sup = true;
	char reg[16];
	long k;
	int i, nn = 0;

	for (i = 1; i < n; i++) {
		if (strcmp(cols[i], "CFA") == 0)
			cfa = v[i];
		else if (strcmp(cols[i], "ra") == 0)
			ra = v[i];
		else if (strcmp(cols[i], oarch->fp) == 0)
			rbp = v[i];
	}
	if (!cfa || !ra)
		return;
	if (c->signal) {
		want.cmd = RULE_CMD_SIGNAL;
		o->signal++;
		report(o, f, addr, &want, true, line);
		return;
	}
	/* on AArch64 "u" is also "never saved": still in x30 */
	if (strcmp(ra, "u") == 0 &&
	    (!oarch->a64 || (x && (x->undef & (1u << 30))))) {
		want.cmd = RULE_CMD_STOP;
		o->stop++;
		report(o, f, addr, &want, true, line);
		return;
	}
	if (oarch->a64 && strcmp(cfa, "exp") == 0) {
		sup = false;
	} else if (strcmp(cfa, "exp") == 0) {
		if (!x || !x->cfa) {
			o->unresolved++;
			return;
		}
		sup = expect_cfa_expr(x->cfa, &want);
		if (sup && want.cmd == RULE_CMD_PLT) {
			o->plt++;
			report(o, f, addr, &want, true, line);
			return;
		}
	} else if (sscanf(cfa, "%15[a-z0-9]%ld", reg, &k) == 2 &&
		   reg_number(reg) >= 0) {
		want.cfa_reg = reg_number(reg);
		want.cfa_off = k;
	} else {
		sup = false;
	}
	if (oarch->a64) {
		if (!strcmp(ra, "u") || !strcmp(ra, "s")) {
			want.ra_rule = RULE_RA_LR;
			o->ra_lr++;
		} else if (ra[0] == 'c' && sscanf(ra + 1, "%ld", &k) == 1 &&
			   k % 8 == 0) {
			want.ra_rule = RULE_RA_CFA_OFF;
			want.ra_off = k;
			o->ra_saved++;
		} else {
			sup = false;
		}
	} else if (strcmp(ra, "c-8") != 0) {
		sup = false;
	}
	if (!rbp || !strcmp(rbp, "u") || !strcmp(rbp, "s")) {
		/* "u" is also "never saved", which for rbp means kept. */
		if (x && x->rbp_undef)
			want.fp_rule = RULE_FP_UNDEF;
	} else if (rbp[0] == 'c' && sscanf(rbp + 1, "%ld", &k) == 1) {
		want.fp_rule = RULE_FP_CFA_OFF;
		want.fp_off = k;
	} else if (!oarch->a64 && !strcmp(rbp, "exp") && x && x->rbp &&
		   sscanf(x->rbp, "DW_OP_breg6 (rbp): %ld%n", &k, &nn) == 1 &&
		   !x->rbp[nn]) {
		want.fp_rule = RULE_FP_REG_OFF;
		want.fp_off = k;
		o->fp_reg++;
	} else {
		sup = false;
	}
	/* AArch64 rules track no other callee-saved register */
	if (sup && !oarch->a64)
		expect_saved(cols, v, n, x, &want);
	if (sup && (want.flags & RULE_F_DEREF_CFA))
		o->deref++;
	report(o, f, addr, &want, sup, line);
}

struct cie_info {
	int sec;
	unsigned long off;
	bool signal;
	char hdr[1024], row[1024];
};

/* Check f against readelf's tables for path. */
static void oracle_check(const char *path, const struct dt_file *f,
			 struct oracle *o)
{
	char cmdline[1024], line[4096], copy[4096], hdr[4096] = "";
	char *cols[64], *v[64];
	struct cie_info *cies = NULL, *cie = NULL;
	struct raw raw = { 0 };
	struct fde_ctx ctx = { .raw = &raw, .sec = -1 };
	size_t n_cies = 0, k;
	uint64_t pc_lo = 0, pc_hi = 0;
	bool in_fde = false, fde_rows = false;
	int ncols = 0, n;
	FILE *p;

	memset(o, 0, sizeof(*o));
	raw_parse(path, &raw);
	snprintf(cmdline, sizeof(cmdline),
		 "%s -W --debug-dump=frames-interp '%s' 2>/dev/null",
		 oarch->readelf, path);
	p = popen(cmdline, "r");
	if (!p)
		return;
	for (;;) {
		bool eof = !fgets(line, sizeof(line), p);
		unsigned long off, a, b;
		char kind[8], *s;

		/* An FDE readelf prints no rows for (no instructions): the
		 * CIE's initial row holds from its start. */
		if (in_fde && !fde_rows && cie && cie->hdr[0] && cie->row[0] &&
		    (eof || line[0] == '\n')) {
			snprintf(copy, sizeof(copy), "%s", cie->hdr);
			ncols = cells(copy, cols, 64);
			snprintf(hdr, sizeof(hdr), "%s", cie->row);
			n = cells(hdr, v, 64);
			if (n == ncols)
				check_row(o, f, &ctx, cols, v, n, pc_lo, cie->row);
			in_fde = false;
		}
		if (eof)
			break;
		if (strncmp(line, "Contents of the ", 16) == 0) {
			ctx.sec++;
			in_fde = false;
			continue;
		}
		if (sscanf(line, "%lx %lx %lx %7s", &off, &a, &b, kind) == 4 &&
		    (strcmp(kind, "FDE") == 0 || strcmp(kind, "CIE") == 0)) {
			ncols = 0;
			fde_rows = false;
			if (strcmp(kind, "CIE") == 0) {
				char *q;

				cies = realloc(cies, (n_cies + 1) * sizeof(*cies));
				cie = &cies[n_cies++];
				memset(cie, 0, sizeof(*cie));
				cie->sec = ctx.sec;
				cie->off = off;
				s = strchr(line, '"');
				q = s ? strchr(s + 1, '"') : NULL;
				cie->signal = q && memchr(s + 1, 'S', q - s - 1);
				in_fde = false;
				continue;
			}
			s = strstr(line, "cie=");
			off = s ? strtoul(s + 4, NULL, 16) : ~0UL;
			cie = NULL;
			for (k = n_cies; k-- > 0;) {
				if (cies[k].sec == ctx.sec && cies[k].off == off) {
					cie = &cies[k];
					break;
				}
			}
			ctx.fde = strtoul(line, NULL, 16);
			ctx.signal = cie && cie->signal;
			s = strstr(line, "pc=");
			in_fde = s && sscanf(s, "pc=%lx..%lx", &a, &b) == 2 &&
				 b > a;
			pc_lo = a;
			pc_hi = b;
			continue;
		}
		if (strstr(line, "   LOC ") == line) {
			snprintf(copy, sizeof(copy), "%s", line);
			ncols = cells(copy, cols, 64);
			if (!in_fde && cie)
				snprintf(cie->hdr, sizeof(cie->hdr), "%.1023s", line);
			continue;
		}
		if (!ncols || !((line[0] >= '0' && line[0] <= '9') ||
				(line[0] >= 'a' && line[0] <= 'f')))
			continue;
		if (!in_fde) {
			if (cie && !cie->row[0])
				snprintf(cie->row, sizeof(cie->row), "%.1023s", line);
			continue;
		}
		fde_rows = true;
		snprintf(hdr, sizeof(hdr), "%s", line);
		n = cells(hdr, v, 64);
		if (n == ncols) {
			uint64_t addr = strtoull(v[0], NULL, 16);

			if (addr >= pc_lo && addr < pc_hi)
				check_row(o, f, &ctx, cols, v, n, addr, line);
		}
	}
	pclose(p);
	free(cies);
	raw_free(&raw);
}

static struct dt_file *extract(const char *path, struct dt_extract_stats *st)
{
	struct dt_extract_opts o = { .stats = st, .machine = oarch->machine };
	struct dt_file *f = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return NULL;
	err = dt_extract_file_opts(fd, path, &o, &f);
	close(fd);
	if (err)
		printf("    extract %s: %s\n", path, strerror(-err));
	return f;
}

static bool have_readelf(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s --version >/dev/null 2>&1",
		 oarch->readelf);
	return system(cmd) == 0;
}

static void oracle_file(const char *path, struct oracle *out)
{
	struct dt_extract_stats st;
	struct dt_file *f;
	struct oracle o;
	struct stat sb;

	if (!test_start_subtest(path))
		return;
	if (stat(path, &sb) != 0) {
		test_note("%s: not on this machine", path);
		return;
	}
	f = extract(path, &st);
	if (!ASSERT_NOT_NULL(f, path))
		return;
	oracle_check(path, f, &o);
	test_note("%s: %llu readelf rows, %u table rows, %u rules, .text covered "
		  "%.2f%% (%llu of %llu bytes), unsupported %llu rows (%llu "
		  "bytes: cfa-reg %llu cfa-expr %llu ra %llu fp %llu), "
		  "signal %llu stop %llu plt %llu deref %llu, disagree %llu",
		  path, (unsigned long long)o.rows, f->n_rows, f->n_rules,
		  100.0 * f->covered / (double)(f->text_hi - f->text_lo),
		  (unsigned long long)f->covered,
		  (unsigned long long)(f->text_hi - f->text_lo),
		  (unsigned long long)o.unsupported,
		  (unsigned long long)st.unsup_bytes,
		  (unsigned long long)st.unsup[DT_UNSUP_CFA_REG],
		  (unsigned long long)st.unsup[DT_UNSUP_CFA_EXPR],
		  (unsigned long long)st.unsup[DT_UNSUP_RA],
		  (unsigned long long)st.unsup[DT_UNSUP_FP],
		  (unsigned long long)o.signal, (unsigned long long)o.stop,
		  (unsigned long long)o.plt, (unsigned long long)o.deref,
		  (unsigned long long)o.disagree);
	ASSERT_GT(o.rows, 1000, "readelf rows parsed");
	ASSERT_EQ(o.disagree, 0, "rows disagreeing with readelf");
	ASSERT_EQ(o.unresolved, 0, "expression rows resolved");
	ASSERT_EQ(st.bad_entries, 0, "malformed entries");
	ASSERT_TRUE(f->source & DT_SRC_EH_FRAME, "from .eh_frame");
	if (out)
		*out = o;
	dt_file_free(f);
}

TEST(ehframe_oracle_readelf)
{
	static const char *files[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/bin/bash",
		"/usr/bin/python3.11",
		"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
	};
	size_t i;

	oarch = &oarch_x86;
	if (!have_readelf()) {
		test_skip("readelf (binutils) not installed");
		return;
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		oracle_file(files[i], NULL);
}

/*
 * The AArch64 lowering, parsed on any host: Debian's arm64 libc, ld.so
 * and libstdc++ (libc6:arm64 and the cross toolchain's libstdc++6,
 * installed by make deps) against binutils' aarch64 readelf.  Every row
 * maps to its rule: CFA on sp or x29, the return address in x30 (never
 * saved yet) or saved at CFA + off, x29 kept or saved.
 */
TEST(ehframe_oracle_readelf_arm64)
{
	static const char *files[] = {
		"/usr/lib/aarch64-linux-gnu/libc.so.6",
		"/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
		"/usr/aarch64-linux-gnu/lib/libstdc++.so.6",
	};
	struct oracle o;
	size_t i;

	oarch = &oarch_a64;
	if (!have_readelf()) {
		test_skip("aarch64-linux-gnu-readelf not installed (make deps: "
			  "binutils-aarch64-linux-gnu)");
		oarch = &oarch_x86;
		return;
	}
	if (access(files[0], R_OK) != 0) {
		test_skip("no arm64 libc (make deps: libc6:arm64)");
		oarch = &oarch_x86;
		return;
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		memset(&o, 0, sizeof(o));
		oracle_file(files[i], &o);
		test_note("%s: ra in x30 %llu rows, saved %llu rows", files[i],
			  (unsigned long long)o.ra_lr,
			  (unsigned long long)o.ra_saved);
		if (i == 0) {
			/* libc has both: leaves and prologues keep the
			 * return address in x30, bodies saved it */
			ASSERT_GT(o.ra_lr, 1000, "libc rows with ra in x30");
			ASSERT_GT(o.ra_saved, 10000, "libc rows with ra saved");
			ASSERT_GT(o.stop, 0, "libc's entry points stop");
		}
	}
	oarch = &oarch_x86;
}

/* Structure any table must have, whatever the input. */
static void check_table(const struct dt_file *f)
{
	uint32_t i, j, next = 0;

	for (i = 0; i < f->n_pages; i++) {
		const struct dt_page *p = &f->pages[i];

		if (!ASSERT_EQ(p->first, next, "pages contiguous") ||
		    !ASSERT_EQ(ROW_ADDR(f->rows[p->first]), 0, "row at 0"))
			return;
		for (j = 0; j < p->count; j++)
			if (!ASSERT_LT(ROW_RULE(f->rows[p->first + j]), f->n_rules,
				       "rule index"))
				return;
		next += p->count;
	}
	ASSERT_EQ(next, f->n_rows, "rows in pages");
}

/* ---- files the test builds ---------------------------------------------- */

/* Run a shell command in the test's directory; true when it succeeds. */
static bool sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool sh(const char *fmt, ...)
{
	char cmd[4096];
	int n;
	va_list ap;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", test_tmpdir());
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

/* A program with a plain function, a frame with a large array, and a
 * function that realigns its stack through a DRAP register (CFA =
 * *(rbp-16), rbp saved at rbp+0) when built with
 * -mincoming-stack-boundary=3. */
static const char prog_c[] =
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) int frame(int n) { volatile int a[64];\n"
	"  for (int i = 0; i < 64; i++) a[i] = leaf(i + n); return a[n & 63]; }\n"
	"__attribute__((noinline)) int realign(int n) {\n"
	"  char *p = __builtin_alloca(n);\n"
	"  char buf[64] __attribute__((aligned(64)));\n"
	"  memset(buf, n, sizeof buf); memset(p, 1, n);\n"
	"  return buf[3] + p[n - 1] + frame(n); }\n"
	"int main(int argc, char **argv) {\n"
	"  printf(\"%d\\n\", realign(argc + 16)); return 0; }\n";

static bool build_prog(const char *out, const char *flags)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/prog.c", test_tmpdir());
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(prog_c, f);
	fclose(f);
	if (!sh("gcc -O2 -g %s -o %s prog.c", flags, out)) {
		test_skip("gcc could not build the test program");
		return false;
	}
	return true;
}

/* The built program's tables against readelf, .debug_frame included. */
static void oracle_small(const char *name, unsigned want_src)
{
	struct dt_extract_stats st;
	struct dt_file *f = extract(test_tmppath(name), &st);
	struct oracle o;

	if (!ASSERT_NOT_NULL(f, name))
		return;
	oracle_check(test_tmppath(name), f, &o);
	ASSERT_GT(o.rows, 10, "readelf rows");
	ASSERT_EQ(o.disagree, 0, "rows disagreeing with readelf");
	ASSERT_EQ(o.unresolved, 0, "expression rows resolved");
	ASSERT_EQ(f->source & want_src, want_src, "sources");
	test_note("%s: %llu rows agree (deref %llu, rbp via rbp %llu, plt %llu), "
		  "source 0x%x", name, (unsigned long long)o.agree,
		  (unsigned long long)o.deref, (unsigned long long)o.fp_reg,
		  (unsigned long long)o.plt, f->source);
	if (want_src & DT_SRC_DEBUG_FRAME) {
		ASSERT_GT(o.deref, 0, "DRAP: CFA = *(rbp-16)");
		ASSERT_GT(o.fp_reg, 0, "DRAP: rbp at rbp+0");
	}
	dt_file_free(f);
}

TEST(ehframe_debug_frame)
{
	/* Without asynchronous unwind tables GCC writes .debug_frame only;
	 * the crt files still bring a few .eh_frame FDEs. */
	const char *flags = "-fno-asynchronous-unwind-tables "
			    "-mincoming-stack-boundary=3";
	char f2[256];

	if (!have_readelf()) {
		test_skip("readelf (binutils) not installed");
		return;
	}
	if (!build_prog("plain", flags))
		return;
	if (test_start_subtest("plain"))
		oracle_small("plain", DT_SRC_DEBUG_FRAME);
	snprintf(f2, sizeof(f2), "%s -gz=zlib", flags);
	if (test_start_subtest("zlib") && build_prog("zlib", f2))
		oracle_small("zlib", DT_SRC_DEBUG_FRAME);
	if (test_start_subtest("zstd")) {
		if (sh("objcopy --compress-debug-sections=zstd plain zstd 2>/dev/null"))
			oracle_small("zstd", DT_SRC_DEBUG_FRAME);
		else
			test_note("objcopy cannot write zstd sections: skipped");
	}
	/* With unwind tables: .eh_frame, the DRAP function included. */
	if (test_start_subtest("eh_frame") &&
	    build_prog("eh", "-mincoming-stack-boundary=3"))
		oracle_small("eh", DT_SRC_EH_FRAME);
	/* IBT PLT: binutils' expression compares with 9. */
	if (test_start_subtest("ibt_plt") &&
	    build_prog("ibt", "-fcf-protection -Wl,-z,ibtplt")) {
		struct dt_file *f = extract(test_tmppath("ibt"), NULL);
		struct elfm *e = NULL;
		int fd = open(test_tmppath("ibt"), O_RDONLY | O_CLOEXEC);
		const Elf64_Shdr *plt;

		elfm_open_fd(fd, &e);
		close(fd);
		plt = e ? elfm_section(e, ".plt") : NULL;
		if (ASSERT_NOT_NULL(f, "extract") && ASSERT_NOT_NULL(plt, ".plt")) {
			int idx = dt_file_lookup(f, plt->sh_addr + 16);
			const struct unwind_rule *r = dt_file_rule(f, idx);

			ASSERT_TRUE(r && r->cmd == RULE_CMD_PLT && r->cfa_post == 9,
				    "PLT rule with threshold 9");
		}
		oracle_small("ibt", DT_SRC_EH_FRAME);
		elfm_free(e);
		dt_file_free(f);
	}
}

static bool same_table(const struct dt_file *a, const struct dt_file *b)
{
	return a->n_rules == b->n_rules && a->n_pages == b->n_pages &&
	       a->n_rows == b->n_rows &&
	       !memcmp(a->rules, b->rules, a->n_rules * sizeof(*a->rules)) &&
	       !memcmp(a->pages, b->pages, a->n_pages * sizeof(*a->pages)) &&
	       !memcmp(a->rows, b->rows, a->n_rows * sizeof(*a->rows));
}

/* A fetch hook over one local file, counting its calls. */
static char fetch_file[1024];
static int fetch_calls;
static size_t fetch_id_len;

static int fetch_test_file(const uint8_t *id, size_t id_len, void *arg)
{
	int fd = open(fetch_file, O_RDONLY | O_CLOEXEC);

	(void)id;
	(*(int *)arg)++;
	fetch_id_len = id_len;
	return fd < 0 ? -errno : fd;
}

TEST(ehframe_debuglink)
{
	struct dt_extract_stats st;
	struct dt_extract_opts o = { .stats = &st };
	struct dt_file *ref = NULL, *f;
	const uint8_t *id;
	struct elfm *e = NULL;
	char bid[128], dir[512], dbg[512];
	size_t id_len, i;
	int fd;

	sh("mkdir -p bin");
	if (!build_prog("bin/prog", "-fno-asynchronous-unwind-tables"))
		return;
	ref = extract(test_tmppath("bin/prog"), NULL);
	if (!ASSERT_NOT_NULL(ref, "unstripped") ||
	    !ASSERT_TRUE(sh("cd bin && objcopy --only-keep-debug prog prog.debug && "
			    "objcopy --strip-debug --add-gnu-debuglink=prog.debug "
			    "prog prog.stripped && mkdir -p ../dbg"),
			 "objcopy"))
		goto out;
	fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
	elfm_open_fd(fd, &e);
	close(fd);
	if (!ASSERT_NOT_NULL(e, "stripped") ||
	    !ASSERT_OK(elfm_build_id(e, &id, &id_len), "build id"))
		goto out;
	ASSERT_TRUE(elfm_section(e, ".debug_frame") == NULL, "stripped");
	snprintf(dbg, sizeof(dbg), "%s", test_tmppath("dbg"));
	o.debug_dir = dbg;
	snprintf(dir, sizeof(dir), "%s", test_tmppath("bin"));

	if (test_start_subtest("next_to_file")) {
		f = NULL;
		fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
		ASSERT_OK(dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"),
					       &o, &f), "extract");
		close(fd);
		ASSERT_TRUE(f && (f->source & DT_SRC_DEBUGLINK), "from debuglink");
		ASSERT_TRUE(f && same_table(f, ref), "same rows as unstripped");
		ASSERT_STREQ(st.debug_file, test_tmppath("bin/prog.debug"), "found");
		dt_file_free(f);
	}
	if (test_start_subtest("dot_debug")) {
		sh("mkdir -p bin/.debug && mv bin/prog.debug bin/.debug/");
		f = NULL;
		fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
		dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"), &o, &f);
		close(fd);
		ASSERT_TRUE(f && (f->source & DT_SRC_DEBUGLINK), "from .debug/");
		ASSERT_STREQ(st.debug_file, test_tmppath("bin/.debug/prog.debug"),
			     "found");
		dt_file_free(f);
	}
	if (test_start_subtest("debug_dir")) {
		char want[1024];

		sh("mkdir -p 'dbg%s' && mv bin/.debug/prog.debug 'dbg%s/'", dir, dir);
		snprintf(want, sizeof(want), "%s%s/prog.debug", test_tmppath("dbg"), dir);
		f = NULL;
		fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
		dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"), &o, &f);
		close(fd);
		ASSERT_TRUE(f && (f->source & DT_SRC_DEBUGLINK), "from debug dir");
		ASSERT_STREQ(st.debug_file, want, "found");
		dt_file_free(f);
	}
	if (test_start_subtest("build_id")) {
		int n = snprintf(bid, sizeof(bid), "dbg/.build-id/%02x/", id[0]);
		char want[1024], dbg_bid[1024];

		for (i = 1; i < id_len; i++)
			n += snprintf(bid + n, sizeof(bid) - n, "%02x", id[i]);
		sh("mkdir -p $(dirname %s) && mv 'dbg%s/prog.debug' %s.debug", bid,
		   dir, bid);
		f = NULL;
		fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
		dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"), &o, &f);
		close(fd);
		ASSERT_TRUE(f && (f->source & DT_SRC_DEBUGLINK), "by build id");
		ASSERT_TRUE(f && same_table(f, ref), "same rows as unstripped");
		dt_file_free(f);
		ASSERT_OK(dbgf_build_id_path(id, id_len, dbg, want, sizeof(want)),
			  "build id path");
		snprintf(dbg_bid, sizeof(dbg_bid), "%s.debug", test_tmppath(bid));
		ASSERT_STREQ(want, dbg_bid, "build id path");
		ASSERT_EQ(dbgf_build_id_path(id, 1, dbg, want, sizeof(want)),
			  -EINVAL, "one byte is no build id");
		ASSERT_EQ(dbgf_build_id_path(id, id_len, dbg, want, 8),
			  -ENAMETOOLONG, "short buffer");
	}
	if (test_start_subtest("crc_mismatch")) {
		/* A debug file that is not the one the link names. */
		sh("cp %s.debug bin/prog.debug && rm %s.debug && "
		   "printf x >> bin/prog.debug", bid, bid);
		f = NULL;
		fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
		ASSERT_OK(dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"),
					       &o, &f), "extract");
		close(fd);
		ASSERT_TRUE(f && !(f->source & DT_SRC_DEBUGLINK), "CRC checked");
		ASSERT_STREQ(st.debug_file, "", "none used");
		dt_file_free(f);
	}
	if (test_start_subtest("fetch_hook")) {
		/* nothing local: the hook (debuginfod, later) is asked last,
		 * and what it gives is checked by build id */
		sh("objcopy --only-keep-debug bin/prog bin/fetched.debug");
		for (i = 0; i < 2; i++) {
			snprintf(fetch_file, sizeof(fetch_file), "%s",
				 test_tmppath(i ? "bin/fetched.debug"
					    : "bin/prog.stripped.copy"));
			if (i == 0)
				sh("cp bin/prog bin/prog.stripped.copy && "
				   "objcopy --remove-section=.note.gnu.build-id "
				   "bin/prog.stripped.copy");
			fetch_calls = 0;
			fetch_id_len = 0;
			dbgf_set_fetch(fetch_test_file, &fetch_calls);
			f = NULL;
			fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);
			dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"), &o,
					     &f);
			close(fd);
			dbgf_set_fetch(NULL, NULL);
			ASSERT_EQ(fetch_calls, 1, "asked once");
			ASSERT_EQ(fetch_id_len, id_len, "with the build id");
			if (i == 0) {
				ASSERT_TRUE(f && !(f->source & DT_SRC_DEBUGLINK),
					    "another build id refused");
			} else {
				ASSERT_TRUE(f && (f->source & DT_SRC_DEBUGLINK),
					    "fetched file used");
				ASSERT_TRUE(f && same_table(f, ref),
					    "same rows as unstripped");
				ASSERT_STREQ(st.debug_file, "(fetched)", "found");
			}
			dt_file_free(f);
		}
	}
out:
	elfm_free(e);
	dt_file_free(ref);
}

/* Copy a file into the test directory, optionally changed. */
static const char *copy_file(const char *from, const char *name,
			     uint8_t **data, size_t *len)
{
	const char *to = test_tmppath(name);
	FILE *in = fopen(from, "rb");
	struct stat sb;

	*data = NULL;
	if (!in || fstat(fileno(in), &sb) != 0) {
		if (in)
			fclose(in);
		return NULL;
	}
	*len = sb.st_size;
	*data = malloc(*len);
	if (fread(*data, 1, *len, in) != *len) {
		free(*data);
		*data = NULL;
	}
	fclose(in);
	return *data ? to : NULL;
}

static bool write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

TEST(ehframe_without_section_headers)
{
	static const char *files[] = { "/lib/x86_64-linux-gnu/libc.so.6",
				       "/usr/bin/python3.11" };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct dt_extract_stats st;
		struct dt_file *ref, *f;
		Elf64_Ehdr *eh;
		uint8_t *d;
		size_t len;
		const char *to;

		if (!test_start_subtest(files[i]))
			continue;
		to = copy_file(files[i], "noshdr", &d, &len);
		if (!to) {
			test_note("%s: not on this machine", files[i]);
			continue;
		}
		eh = (Elf64_Ehdr *)d;
		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = 0;
		ASSERT_TRUE(write_file(to, d, len), "write");
		ref = extract(files[i], NULL);
		f = extract(to, &st);
		ASSERT_TRUE(st.eh_frame_hdr, "found through PT_GNU_EH_FRAME");
		ASSERT_TRUE(ref && f && same_table(ref, f),
			    "same table as with sections");
		if (f)
			test_note("%s without sections: %u rows", files[i],
				  f->n_rows);
		dt_file_free(ref);
		dt_file_free(f);
		free(d);
	}
}

TEST(ehframe_synthetic_plt)
{
	struct dt_file *f = NULL;
	struct elfm *e = NULL;
	const Elf64_Shdr *plt, *got;
	int fd;

	if (!build_prog("noplt", "-Wl,--no-ld-generated-unwind-info"))
		return;
	f = extract(test_tmppath("noplt"), NULL);
	fd = open(test_tmppath("noplt"), O_RDONLY | O_CLOEXEC);
	elfm_open_fd(fd, &e);
	close(fd);
	if (!ASSERT_NOT_NULL(f, "extract") || !ASSERT_NOT_NULL(e, "open"))
		goto out;
	plt = elfm_section(e, ".plt");
	got = elfm_section(e, ".plt.got");
	if (!ASSERT_NOT_NULL(plt, ".plt"))
		goto out;
	ASSERT_TRUE(f->source & DT_SRC_SYNTH, "synthetic rows used");
	{
		const struct unwind_rule *r0 =
			dt_file_rule(f, dt_file_lookup(f, plt->sh_addr));
		const struct unwind_rule *r6 =
			dt_file_rule(f, dt_file_lookup(f, plt->sh_addr + 6));

		ASSERT_TRUE(r0 && r0->cmd == RULE_CMD_NONE && r0->cfa_off == 16,
			    "PLT0: rsp+16");
		ASSERT_TRUE(r6 && r6->cmd == RULE_CMD_NONE && r6->cfa_off == 24,
			    "PLT0 after push: rsp+24");
		ASSERT_EQ(dt_file_lookup(f, plt->sh_addr + 16), RULE_IDX_PLT,
			  "entries: PLT");
		ASSERT_EQ(dt_file_lookup(f, plt->sh_addr + plt->sh_size - 1),
			  RULE_IDX_PLT, "last entry: PLT");
	}
	if (got) {
		const struct unwind_rule *r =
			dt_file_rule(f, dt_file_lookup(f, got->sh_addr));

		ASSERT_TRUE(r && r->cmd == RULE_CMD_NONE && r->cfa_off == 8,
			    ".plt.got: rsp+8");
	}
out:
	elfm_free(e);
	dt_file_free(f);
}

/* ---- malformed input ------------------------------------------------------ */

static int extract_mem(const void *d, size_t len, struct dt_file **f)
{
	struct dt_extract_opts o = { .no_debuglink = true };

	return dt_extract_mem(d, len, &o, f);
}

TEST(ehframe_malformed)
{
	const char *lib = "/lib/x86_64-linux-gnu/libc.so.6";
	struct dt_file *f = NULL;
	uint8_t *d = NULL, garbage[4096];
	size_t len = 0, i, cuts[] = { 0, 3, 16, 63, 64, 200, 4096, 65536,
				      1 << 20 };
	unsigned seed = 7;
	int err, fd;

	for (i = 0; i < sizeof(garbage); i++) {
		seed = seed * 1103515245 + 12345;
		garbage[i] = seed >> 16;
	}
	ASSERT_EQ(extract_mem(garbage, sizeof(garbage), &f), -ENOEXEC,
		  "garbage");
	memcpy(garbage, ELFMAG, SELFMAG);
	garbage[EI_CLASS] = ELFCLASS64;
	garbage[EI_DATA] = ELFDATA2LSB;
	garbage[EI_VERSION] = EV_CURRENT;
	err = extract_mem(garbage, sizeof(garbage), &f);
	ASSERT_TRUE(err == -ENOEXEC || err == 0, "garbage behind an ELF ident");
	dt_file_free(f);
	f = NULL;

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_EQ(dt_extract_file(fd, NULL, &f), -ENOEXEC, "not a regular file");
	close(fd);

	if (!copy_file(lib, "x", &d, &len))
		return;
	/* Truncated copies (each in its own allocation: ASan sees any read
	 * past the end). */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		uint8_t *t = malloc(cuts[i] + 1);

		memcpy(t, d, cuts[i]);
		f = NULL;
		err = extract_mem(t, cuts[i], &f);
		ASSERT_TRUE(err == -ENOEXEC || err == 0, "truncated");
		dt_file_free(f);
		free(t);
	}
	/* And as a file, truncated. */
	ASSERT_TRUE(write_file(test_tmppath("trunc"), d, len / 2), "write");
	fd = open(test_tmppath("trunc"), O_RDONLY | O_CLOEXEC);
	f = NULL;
	err = dt_extract_file(fd, test_tmppath("trunc"), &f);
	close(fd);
	ASSERT_TRUE(err == 0 || err == -ENOEXEC, "truncated file");
	dt_file_free(f);

	/* .eh_frame's offset past the end of the file, then the header's
	 * segment too: no rows, no crash. */
	{
		struct elfm *e = NULL;
		Elf64_Ehdr *eh = (Elf64_Ehdr *)d;
		const Elf64_Shdr *ehs;
		Elf64_Shdr *w;
		Elf64_Phdr *ph = (Elf64_Phdr *)(d + eh->e_phoff);

		elfm_open_mem(d, len, &e);
		ehs = e ? elfm_section(e, ".eh_frame") : NULL;
		if (ASSERT_NOT_NULL(ehs, ".eh_frame")) {
			w = (Elf64_Shdr *)(d + eh->e_shoff) +
			    (ehs - elfm_shdrs(e, &(unsigned){ 0 }));
			w->sh_offset = len + 4096;
			f = NULL;
			err = extract_mem(d, len, &f);
			/* Found again through PT_GNU_EH_FRAME. */
			ASSERT_OK(err, ".eh_frame past the end");
			ASSERT_TRUE(f && f->n_rows > 1000, "rows through the header");
			dt_file_free(f);
			for (i = 0; i < eh->e_phnum; i++)
				if (ph[i].p_type == PT_GNU_EH_FRAME)
					ph[i].p_vaddr = ph[i].p_paddr = 1ULL << 40;
			f = NULL;
			err = extract_mem(d, len, &f);
			ASSERT_OK(err, "header past the end too");
			ASSERT_TRUE(f && !(f->source & DT_SRC_EH_FRAME),
				    "no .eh_frame rows");
			dt_file_free(f);
		}
		elfm_free(e);
	}
	free(d);
}

/* Random damage to a real .eh_frame and .eh_frame_hdr: whatever comes out,
 * nothing reads out of bounds (the ASan build checks) and the table
 * stays well-formed. */
TEST(ehframe_fuzz_damage)
{
	const char *lib = "/lib64/ld-linux-x86-64.so.2";
	struct elfm *e = NULL;
	const Elf64_Shdr *ehs, *hdr;
	uint8_t *d = NULL, *c;
	size_t len = 0, i;
	unsigned seed = 12345, bad = 0, rounds = 3000;

	if (!copy_file(lib, "x", &d, &len) || elfm_open_mem(d, len, &e))
		return;
	ehs = elfm_section(e, ".eh_frame");
	hdr = elfm_section(e, ".eh_frame_hdr");
	if (!ASSERT_NOT_NULL(ehs, ".eh_frame") || !ASSERT_NOT_NULL(hdr, "hdr"))
		goto out;
	c = malloc(len);
	for (i = 0; i < rounds; i++) {
		const Elf64_Shdr *s = i % 4 == 3 ? hdr : ehs;
		struct dt_file *f = NULL;
		unsigned k;
		int err;

		memcpy(c, d, len);
		for (k = 0; k < 1 + i % 16; k++) {
			seed = seed * 1103515245 + 12345;
			c[s->sh_offset + (seed >> 4) % s->sh_size] ^=
				(uint8_t)(1 << ((seed >> 1) & 7));
		}
		if (i % 8 == 7) {
			/* Hide the sections: the header path. */
			((Elf64_Ehdr *)c)->e_shoff = 0;
			((Elf64_Ehdr *)c)->e_shnum = 0;
		}
		err = extract_mem(c, len, &f);
		if (err || !f)
			bad++;
		else
			check_table(f);
		dt_file_free(f);
	}
	ASSERT_EQ(bad, 0, "damaged tables still give a table");
	free(c);
out:
	elfm_free(e);
	free(d);
}

/* One CIE (code align 1, data align -8, CFA rsp+8, RA at CFA-8) and one
 * FDE over [0x1000, 0x1100) whose program is prog, in an .eh_frame at
 * 0x2000; the rows of that image. */
static int cfi_rows(const uint8_t *prog, size_t plen, struct dt_file **f)
{
	static const uint8_t cie[] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, /* length 20, CIE id 0 */
		1, 'z', 'R', 0,		   /* version, augmentation */
		1, 0x78, 16, 1, 0x1b,	   /* code 1, data -8, RA 16; pcrel sdata4 */
		0x0c, 7, 8, 0x90, 1,	   /* def_cfa rsp+8, RA at cfa-8 */
		0, 0,
	};
	struct synth_sec secs[2] = {
		{ ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, NULL,
		  0x100 },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x2000, NULL, 0 },
	};
	uint8_t sec[256] = { 0 }, *img;
	size_t off = sizeof(cie), flen, len;
	uint32_t v;
	int err;

	if (plen > 128)
		return -EINVAL;
	memcpy(sec, cie, sizeof(cie));
	/* FDE: length, CIE pointer, pc_begin (pcrel), range, no augmentation
	 * data, the program, padding to 4 */
	flen = (4 + 4 + 4 + 1 + plen + 3) & ~(size_t)3;
	v = (uint32_t)flen;
	memcpy(sec + off, &v, 4);
	v = (uint32_t)(off + 4);
	memcpy(sec + off + 4, &v, 4);
	v = (uint32_t)(0x1000 - (0x2000 + off + 8));
	memcpy(sec + off + 8, &v, 4);
	v = 0x100;
	memcpy(sec + off + 12, &v, 4);
	memcpy(sec + off + 17, prog, plen);
	secs[1].data = sec;
	secs[1].size = off + 4 + flen + 4; /* and a zero terminator */
	img = synth_elf(secs, 2, &len);
	if (!img)
		return -ENOMEM;
	err = extract_mem(img, len, f);
	free(img);
	return err;
}

/* Factored offsets whose product does not fit 64 bits (found by
 * fuzz_ehframe: signed overflow): the FDE is malformed from there on. */
TEST(ehframe_factored_overflow)
{
	/* advance 1; def_cfa_sf rsp, 2^62 (times -8) */
	static const uint8_t big_sf[] = { 0x41, 0x12, 7, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x80, 0x80, 0xc0,
					  0 };
	/* advance 1; offset_extended_sf rbp, 2^62 */
	static const uint8_t big_reg[] = { 0x41, 0x11, 6, 0x80, 0x80, 0x80,
					   0x80, 0x80, 0x80, 0x80, 0x80,
					   0xc0, 0 };
	/* advance 1; def_cfa_offset 16; advance 1 */
	static const uint8_t sane[] = { 0x41, 0x0e, 16, 0x41 };
	const struct unwind_rule *r;
	struct dt_file *f = NULL;

	if (ASSERT_OK(cfi_rows(sane, sizeof(sane), &f), "sane program")) {
		r = dt_file_rule(f, dt_file_lookup(f, 0x1001));
		ASSERT_TRUE(r && r->cmd == RULE_CMD_NONE && r->cfa_off == 16,
			    "rsp+16 after the advance");
	}
	dt_file_free(f);
	f = NULL;
	if (ASSERT_OK(cfi_rows(big_sf, sizeof(big_sf), &f), "huge CFA")) {
		r = dt_file_rule(f, dt_file_lookup(f, 0x1000));
		ASSERT_TRUE(r && r->cmd == RULE_CMD_NONE && r->cfa_off == 8,
			    "the row before stands");
		r = dt_file_rule(f, dt_file_lookup(f, 0x1001));
		ASSERT_TRUE(r && r->cmd == RULE_CMD_UNSUPPORTED, "then UNSUPPORTED");
	}
	dt_file_free(f);
	f = NULL;
	ASSERT_OK(cfi_rows(big_reg, sizeof(big_reg), &f), "huge rbp offset");
	dt_file_free(f);
}

/* A binary without CFI whose debuglink names a FIFO, or a link to one,
 * next to it: any user can make these, and open() would block the
 * daemon for good (or, for a link to a device, run its driver). */
TEST(ehframe_debuglink_not_regular)
{
	static const char *const links[] = { "fifo.debug", "link.debug" };
	uint8_t dl[16] = { 0 };
	struct synth_sec secs[2] = {
		{ ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, NULL,
		  0x100 },
		{ ".gnu_debuglink", SHT_PROGBITS, 0, 0, dl, sizeof(dl) },
	};
	size_t i, len;
	uint8_t *img;

	ASSERT_OK(mkfifo(test_tmppath("fifo.debug"), 0600), "fifo");
	ASSERT_OK(symlink(test_tmppath("fifo.debug"), test_tmppath("link.debug")),
		  "symlink");
	for (i = 0; i < 2; i++) {
		char prog[64];
		int status;
		pid_t pid;

		memset(dl, 0, sizeof(dl));
		memcpy(dl, links[i], strlen(links[i])); /* then the CRC, 0 */
		img = synth_elf(secs, 2, &len);
		snprintf(prog, sizeof(prog), "prog%zu", i);
		if (!ASSERT_NOT_NULL(img, "image") ||
		    !ASSERT_TRUE(write_file(test_tmppath(prog), img, len), "write")) {
			free(img);
			return;
		}
		free(img);
		pid = fork();
		if (pid == 0) {
			struct dt_file *f = NULL;
			int fd = open(test_tmppath(prog), O_RDONLY | O_CLOEXEC);

			alarm(5);
			_exit(fd >= 0 && dt_extract_file(fd, test_tmppath(prog),
							 &f) == 0 ? 0 : 1);
		}
		ASSERT_GT(pid, 0, "fork");
		waitpid(pid, &status, 0);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			    links[i]);
	}
}

/* A file truncated by its owner while mapped: reads past the new end see
 * zeros and the view says it is damaged, instead of SIGBUS ending the
 * daemon; a SIGBUS elsewhere still ends the process. */
TEST(elfmap_truncated_under_mapping)
{
	const Elf64_Shdr *sh;
	const uint8_t *p;
	struct elfm *e = NULL;
	uint8_t *d = NULL, x = 0;
	size_t len = 0, n, i;
	int fd, status;
	pid_t pid;

	if (!copy_file("/lib64/ld-linux-x86-64.so.2", "t", &d, &len) ||
	    !ASSERT_TRUE(write_file(test_tmppath("t"), d, len), "copy")) {
		free(d);
		return;
	}
	free(d);
	fd = open(test_tmppath("t"), O_RDWR | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open") || !ASSERT_OK(elfm_open_fd(fd, &e), "map"))
		goto out;
	sh = elfm_section(e, ".eh_frame");
	if (!ASSERT_NOT_NULL(sh, ".eh_frame") ||
	    !ASSERT_OK(elfm_section_bytes(e, sh, &p, &n), "bytes"))
		goto out;
	ASSERT_FALSE(elfm_damaged(e), "whole");
	ASSERT_OK(ftruncate(fd, 4096), "truncate under the mapping");
	for (i = 0; i < n; i++)
		x |= p[i];
	ASSERT_TRUE(elfm_damaged(e), "damaged");
	ASSERT_EQ(x, 0, "zeros past the end");
	/* not ours: the default disposition, as before */
	pid = fork();
	if (pid == 0) {
		volatile const uint8_t *q;
		void *m;

		ftruncate(fd, 8192);
		m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
		ftruncate(fd, 0);
		q = m;
		_exit(q[4096]);
	}
	waitpid(pid, &status, 0);
	/* killed, or (make test-asan) reported by the sanitizer's handler */
	ASSERT_TRUE((WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
			    (WIFEXITED(status) && WEXITSTATUS(status) != 0),
		    "another mapping's SIGBUS still ends the process");
out:
	elfm_free(e);
	if (fd >= 0)
		close(fd);
}

/* The vDSO (clock_gettime and friends are hot in profiles): from memory,
 * the way the daemon gets it, and checked by readelf on a copy. */
TEST(ehframe_vdso)
{
	unsigned long lo = 0, hi = 0;
	char line[512];
	struct dt_file *f = NULL;
	struct oracle o;
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	if (maps)
		fclose(maps);
	if (!hi) {
		test_skip("no vDSO mapped");
		return;
	}
	if (!ASSERT_OK(dt_extract_mem((void *)lo, hi - lo, NULL, &f), "extract"))
		return;
	ASSERT_TRUE(f->source & DT_SRC_EH_FRAME, "from .eh_frame");
	ASSERT_TRUE(write_file(test_tmppath("vdso.so"), (void *)lo, hi - lo), "copy");
	if (have_readelf()) {
		oracle_check(test_tmppath("vdso.so"), f, &o);
		ASSERT_GT(o.rows, 10, "readelf rows");
		ASSERT_EQ(o.disagree, 0, "rows disagreeing with readelf");
		test_note("vDSO: %llu readelf rows agree, %u table rows, %.2f%% "
			  "of the text covered",
			  (unsigned long long)o.agree, f->n_rows,
			  100.0 * f->covered / (double)(f->text_hi - f->text_lo));
	}
	dt_file_free(f);
}

/* A file without any CFI: an empty table, source 0 (the daemon walks
 * frame pointers there), not an error. */
TEST(ehframe_no_cfi)
{
	struct dt_file *f;

	if (!sh("printf 'void _start(void) { for (;;); }\\n' > nocfi.c && "
		"gcc -O2 -nostdlib -static -fno-asynchronous-unwind-tables "
		"-fno-unwind-tables -Wl,--no-ld-generated-unwind-info "
		"-o nocfi nocfi.c")) {
		test_skip("gcc could not build the test program");
		return;
	}
	f = extract(test_tmppath("nocfi"), NULL);
	if (!ASSERT_NOT_NULL(f, "extract"))
		return;
	ASSERT_EQ(f->source, 0, "no source");
	ASSERT_EQ(f->n_rows, 0, "no rows");
	ASSERT_EQ(f->n_rules, RULE_FIXED_COUNT, "fixed rules only");
	dt_file_free(f);
}

/* Whether extracting bin/prog.stripped used a debug file. */
static bool used_debuglink(struct dt_extract_opts *o)
{
	struct dt_file *f = NULL;
	bool used;
	int fd = open(test_tmppath("bin/prog.stripped"), O_RDONLY | O_CLOEXEC);

	dt_extract_file_opts(fd, test_tmppath("bin/prog.stripped"), o, &f);
	close(fd);
	used = f && (f->source & DT_SRC_DEBUGLINK);
	dt_file_free(f);
	return used;
}

/* What a user may put next to their binary, and root must not follow
 * (issue 16, cases 1 and 4): a debuglink name that is a symlink to a
 * file the user cannot read (here the right debug file, so that only
 * the path check refuses it), one under a symlinked .debug directory, a
 * sparse file of the right CRC-to-be, and one too large to CRC; with
 * openat2 and with the component walk of older kernels.  Each is
 * refused and counted, and the plain file next to it still works. */
TEST(ehframe_debuglink_hostile)
{
	struct dt_extract_stats st;
	struct dt_extract_opts o = { .stats = &st };
	uint64_t before;
	int pass;

	sh("mkdir -p bin");
	if (!build_prog("bin/prog", "-fno-asynchronous-unwind-tables"))
		return;
	if (!ASSERT_TRUE(sh("cd bin && objcopy --only-keep-debug prog prog.debug && "
			    "objcopy --strip-debug --add-gnu-debuglink=prog.debug "
			    "prog prog.stripped && mkdir -p ../dbg ../secret && "
			    "mv prog.debug ../secret/ && chmod 700 ../secret"),
			 "objcopy"))
		return;
	o.debug_dir = test_tmppath("dbg");
	for (pass = 0; pass < 2; pass++) {
		dbgf_no_openat2 = pass == 1;
		if (test_start_subtest(pass ? "symlink_walk" : "symlink")) {
			sh("cd bin && rm -rf prog.debug .debug && "
			   "ln -s ../secret/prog.debug prog.debug");
			before = budget_count(BUDGET_DEBUG_PATH);
			ASSERT_FALSE(used_debuglink(&o), "symlink not followed");
			ASSERT_EQ(budget_count(BUDGET_DEBUG_PATH), before + 1,
				  "counted");
		}
		if (test_start_subtest(pass ? "symlinked_dir_walk" : "symlinked_dir")) {
			sh("cd bin && rm -rf prog.debug .debug && ln -s ../secret .debug");
			before = budget_count(BUDGET_DEBUG_PATH);
			ASSERT_FALSE(used_debuglink(&o), ".debug symlink not followed");
			ASSERT_EQ(budget_count(BUDGET_DEBUG_PATH), before + 1,
				  "counted");
		}
		if (test_start_subtest(pass ? "plain_walk" : "plain")) {
			sh("cd bin && rm -rf prog.debug .debug && "
			   "cp ../secret/prog.debug .");
			ASSERT_TRUE(used_debuglink(&o), "a plain file is used");
			ASSERT_STREQ(st.debug_file, test_tmppath("bin/prog.debug"),
				     "found");
		}
	}
	dbgf_no_openat2 = false;
	if (test_start_subtest("sparse")) {
		/* the right bytes, then a 4 GiB hole: the CRC would read it */
		sh("cd bin && truncate -s 4G prog.debug");
		before = budget_count(BUDGET_SPARSE);
		ASSERT_FALSE(used_debuglink(&o), "sparse file not read");
		ASSERT_EQ(budget_count(BUDGET_SPARSE), before + 1, "counted");
	}
	if (test_start_subtest("too_large_to_crc")) {
		/* allocated (not sparse), past the CRC bound */
		sh("cd bin && rm -f prog.debug && "
		   "fallocate -l 600M prog.debug 2>/dev/null");
		if (!sh("test -s bin/prog.debug")) {
			test_skip("fallocate not supported here");
		} else {
			before = budget_count(BUDGET_CRC_SIZE);
			ASSERT_FALSE(used_debuglink(&o), "not CRC'd");
			ASSERT_EQ(budget_count(BUDGET_CRC_SIZE), before + 1,
				  "counted");
		}
		sh("rm -f bin/prog.debug");
	}
}

/* A compressed section of 512 MiB of zeros (500 KiB of zlib) is over
 * the file's budget: refused and counted, without allocating; a true
 * section within it still loads. */
TEST(elfmap_decompression_bomb)
{
	const size_t big = 512ULL << 20, small = 1 << 20;
	struct synth_sec secs[2] = {
		{ ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, NULL,
		  0x100 },
		{ ".debug_frame", SHT_PROGBITS, SHF_COMPRESSED, 0, NULL, 0 },
	};
	uint8_t *sec = NULL, *img = NULL;
	const uint8_t *p;
	struct elfm *e = NULL;
	uint64_t before;
	void *owned = NULL;
	size_t len;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		sec = synth_zlib_zeros(pass == 0 ? big : small, &secs[1].size);
		secs[1].data = sec;
		img = sec ? synth_elf(secs, 2, &len) : NULL;
		if (!ASSERT_NOT_NULL(img, "image") ||
		    !ASSERT_OK(elfm_open_mem(img, len, &e), "open"))
			goto out;
		before = budget_count(BUDGET_DECOMPRESSED);
		if (pass == 0) {
			test_note("%zu MiB in %zu KiB: budget %llu KiB", big >> 20,
				  len >> 10,
				  (unsigned long long)elfm_decompress_budget(e) >> 10);
			ASSERT_EQ(elfm_section_load(e, elfm_section(e, ".debug_frame"),
						    &p, &len, &owned),
				  -EFBIG, "bomb refused");
			ASSERT_TRUE(owned == NULL, "nothing allocated");
			ASSERT_EQ(budget_count(BUDGET_DECOMPRESSED), before + 1,
				  "counted");
		} else {
			ASSERT_OK(elfm_section_load(e, elfm_section(e, ".debug_frame"),
						    &p, &len, &owned),
				  "within budget");
			ASSERT_EQ(len, small, "decompressed");
			ASSERT_EQ(budget_count(BUDGET_DECOMPRESSED), before,
				  "not counted");
			free(owned);
		}
		elfm_free(e);
		e = NULL;
		free(img);
		img = NULL;
		free(sec);
		sec = NULL;
	}
out:
	elfm_free(e);
	free(img);
	free(sec);
}

/*
 * AArch64 files: only an extraction asked for EM_AARCH64 lowers them (the
 * daemon never gives its BPF programs another architecture's rules), and
 * the synthetic .plt rows keep the return address in x30: sp + 0, then
 * sp + 16 after PLT0's "stp x16, x30, [sp, #-16]!", sp + 0 again from the
 * first 16-byte entry on.
 */
TEST(ehframe_arm64_plt_and_machine)
{
	static const char path[] = "/usr/lib/aarch64-linux-gnu/libc.so.6";
	struct dt_extract_opts o = { .machine = EM_AARCH64, .no_debuglink = true };
	static const struct {
		uint64_t off;
		int32_t cfa_off;
	} want[] = { { 0, 0 }, { 4, 16 }, { 28, 16 }, { 32, 0 }, { 48, 0 } };
	const Elf64_Shdr *sh;
	struct dt_file *f = NULL;
	struct elfm *e = NULL;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		test_skip("no arm64 libc (make deps: libc6:arm64)");
		return;
	}
	/* on an arm64 host (qemu-aarch64 build-arm64/tests/runner) the
	 * file is the host's own */
	if (DT_HOST_MACHINE == EM_AARCH64) {
		ASSERT_OK(dt_extract_file(fd, path, &f), "the host's machine");
		dt_file_free(f);
		f = NULL;
	} else {
		ASSERT_EQ(dt_extract_file(fd, path, &f), -ENOEXEC,
			  "the host's extraction refuses an arm64 file");
	}
	ASSERT_OK(dt_extract_file_opts(fd, path, &o, &f), "arm64 extraction");
	ASSERT_OK(elfm_open_fd(fd, &e), "open");
	close(fd);
	if (!f || !e)
		goto out;
	sh = elfm_section(e, ".plt");
	if (!ASSERT_NOT_NULL(sh, ".plt"))
		goto out;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int idx = dt_file_lookup(f, sh->sh_addr + want[i].off);
		const struct unwind_rule *r;

		if (!ASSERT_GE(idx, 0, "a rule in .plt"))
			break;
		r = dt_file_rule(f, idx);
		ASSERT_EQ(r->cmd, RULE_CMD_NONE, "plain rule");
		ASSERT_EQ(r->cfa_reg, RULE_REG_SP, "CFA on sp");
		ASSERT_EQ(r->cfa_off, want[i].cfa_off, "CFA offset");
		ASSERT_EQ(r->ra_rule, RULE_RA_LR, "ra in x30");
	}
out:
	elfm_free(e);
	dt_file_free(f);
}

/* A little arm64 vDSO: its leaf in x30, the frame-record function left
 * to the frame pointer, the sigreturn trampoline (and the nop before it)
 * a signal frame. */
TEST(ehframe_arm64_vdso_synthetic)
{
	static const uint32_t text[] = {
		0xd2800000, 0xd65f03c0,		    /* leaf: mov x0, #0; ret */
		0xa9bf7bfd, 0x910003fd,		    /* framed: stp x29, x30, [sp, #-16]!; mov x29, sp */
		0xa8c17bfd, 0xd65f03c0,		    /* ldp x29, x30, [sp], #16; ret */
		0xd503201f,			    /* nop */
		0xd2801168, 0xd4000001,		    /* mov x8, #139; svc #0 */
	};
	static const char str[] = "\0leaf\0framed\0__kernel_rt_sigreturn";
	Elf64_Sym syms[4] = { { 0 } };
	struct synth_sec secs[3] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000,
		  text, sizeof(text), 0, 0 },
		{ ".dynstr", SHT_STRTAB, SHF_ALLOC, 0x2000, str, sizeof(str),
		  0, 0 },
		{ ".dynsym", SHT_DYNSYM, SHF_ALLOC, 0x3000, syms, sizeof(syms),
		  2, sizeof(Elf64_Sym) },
	};
	struct dt_extract_opts o = { .machine = EM_AARCH64, .no_debuglink = true };
	static const struct {
		uint64_t addr;
		int cmd; /* -1: a leaf rule */
	} want[] = {
		{ 0x1000, -1 }, { 0x1004, -1 }, { 0x1008, RULE_CMD_INVALID },
		{ 0x1014, RULE_CMD_INVALID }, { 0x1018, RULE_CMD_SIGNAL },
		{ 0x101c, RULE_CMD_SIGNAL }, { 0x1020, RULE_CMD_SIGNAL },
	};
	struct dt_file *f = NULL;
	uint8_t *img;
	size_t len, i;

	syms[1] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 1, .st_value = 0x1000, .st_size = 8 };
	syms[2] = (Elf64_Sym){ .st_name = 6, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 1, .st_value = 0x1008, .st_size = 16 };
	syms[3] = (Elf64_Sym){ .st_name = 13, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE),
			       .st_shndx = 1, .st_value = 0x101c, .st_size = 8 };
	img = synth_elf(secs, 3, &len);
	if (!ASSERT_NOT_NULL(img, "image"))
		return;
	((Elf64_Ehdr *)img)->e_machine = EM_AARCH64;
	if (!ASSERT_OK(dt_extract_mem(img, len, &o, &f), "extract"))
		goto out;
	ASSERT_TRUE(f->source & DT_SRC_SYNTH, "synthetic rows");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int idx = dt_file_lookup(f, want[i].addr);
		const struct unwind_rule *r = idx >= 0 ? dt_file_rule(f, idx) : NULL;
		char b[160];

		test_note("0x%llx: %s", (unsigned long long)want[i].addr,
			  r ? dt_rule_str(r, b, sizeof(b)) : "none");
		if (want[i].cmd == RULE_CMD_INVALID) {
			ASSERT_TRUE(!r || r->cmd == RULE_CMD_INVALID,
				    "no rule: the frame pointer");
			continue;
		}
		if (!ASSERT_NOT_NULL(r, "a rule"))
			continue;
		if (want[i].cmd == RULE_CMD_SIGNAL) {
			ASSERT_EQ(r->cmd, RULE_CMD_SIGNAL, "signal frame");
			continue;
		}
		ASSERT_EQ(r->cmd, RULE_CMD_NONE, "leaf rule");
		ASSERT_EQ(r->cfa_reg, RULE_REG_SP, "CFA on sp");
		ASSERT_EQ(r->cfa_off, 0, "sp unchanged");
		ASSERT_EQ(r->ra_rule, RULE_RA_LR, "ra in x30");
	}
out:
	dt_file_free(f);
	free(img);
}
