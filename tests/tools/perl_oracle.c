// SPDX-License-Identifier: Apache-2.0
/*
 * The offsets Perl's unwinder uses (userspace/interp_perl.c, bpf/perl.h),
 * as one Perl version's own headers lay them out: compiled by
 * interp_offsets.sh against that version's sources (perl.h, intrpvar.h,
 * cop.h, cv.h, gv.h, hv.h, sv.h) with a generated config.h, threaded
 * (USE_ITHREADS, MULTIPLICITY) or not; EP_HV_WITH_AUX when hv.h has
 * struct xpvhv_with_aux (5.36 on), which no macro of its own tells.  The compiler writes one
 * "#ORACLE name value" line per value into the assembly.
 * Not part of the build: the compiler is the oracle, its output is kept
 * in tests/unit/data/perl_offsets.txt.
 */
#include "EXTERN.h"
#include "perl.h"

#include <stddef.h>

/* Compiled to assembly only (-S), never linked nor run: each value is a
 * constant the compiler writes into a marker line of the output. */
#define P(name, v) __asm__ volatile("\n#ORACLE " name " %c0" ::"i"(v))

void oracle(void);
void oracle(void)
{
#ifdef MULTIPLICITY
	P("threaded", 1);
	P("i_curcop", offsetof(struct interpreter, Icurcop));
	P("i_curstackinfo", offsetof(struct interpreter, Icurstackinfo));
#else
	P("threaded", 0);
#endif
	P("si_cxstack", offsetof(PERL_SI, si_cxstack));
	P("si_prev", offsetof(PERL_SI, si_prev));
	P("si_cxix", offsetof(PERL_SI, si_cxix));
	P("si_cxix_size", sizeof(((PERL_SI *)0)->si_cxix));
	P("si_type", offsetof(PERL_SI, si_type));
	P("si_type_size", sizeof(((PERL_SI *)0)->si_type));
	P("cx_size", sizeof(PERL_CONTEXT));
	P("cx_type", offsetof(PERL_CONTEXT, cx_type));
	P("cx_oldcop", offsetof(PERL_CONTEXT, blk_oldcop));
	P("cx_cv", offsetof(PERL_CONTEXT, blk_sub.cv));
	P("cop_line", offsetof(COP, cop_line));
	P("cop_line_size", sizeof(line_t));
#ifdef USE_ITHREADS
	P("cop_file", offsetof(COP, cop_file));
	P("cop_file_gv", 0);
#else
	P("cop_file", offsetof(COP, cop_filegv));
	P("cop_file_gv", 1);
#endif
	P("cv_stash", offsetof(XPVCV, xcv_stash));
	P("cv_gv", offsetof(XPVCV, xcv_gv_u));
	P("cv_flags", offsetof(XPVCV, xcv_flags));
	P("gv_gp", offsetof(GV, sv_u));
	P("gp_egv", offsetof(GP, gp_egv));
	P("gv_namehek", offsetof(XPVGV, xiv_u));
	P("gv_stash", offsetof(XPVGV, xnv_u));
	P("hv_max", offsetof(XPVHV, xhv_max));
	P("hv_array", offsetof(HV, sv_u));
#ifdef EP_HV_WITH_AUX /* 5.36: the aux struct is part of the body */
	P("hv_aux", offsetof(struct xpvhv_with_aux, xhv_aux));
#else
	P("hv_aux", 0);
#endif
	P("aux_name", offsetof(struct xpvhv_aux, xhv_name_u));
	P("aux_name_count", offsetof(struct xpvhv_aux, xhv_name_count));
	P("sv_any", offsetof(SV, sv_any));
	P("sv_flags", offsetof(SV, sv_flags));
	P("hek_len", offsetof(HEK, hek_len));
	P("hek_key", offsetof(HEK, hek_key));
	P("SVf_OOK", SVf_OOK);
	P("CVf_NAMED", CVf_NAMED);
	P("CXTYPEMASK", CXTYPEMASK);
	P("CXt_SUB", CXt_SUB);
	P("CXt_FORMAT", CXt_FORMAT);
	P("CXt_EVAL", CXt_EVAL);
	P("PERLSI_MAIN", PERLSI_MAIN);
}
