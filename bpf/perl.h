/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Perl 5 (5.30 to 5.40, threaded or not; run live: Debian's threaded
 * 5.32, 5.36 and 5.40, a threaded 5.30 and a non-threaded 5.36 built
 * from their sources): what its BPF unwinder (perl.bpf.h) and its
 * userland module (userspace/interp_perl.c) share.
 *
 * The interpreter (threaded builds: my_perl, the thread's, from its TSD
 * slot PL_thr_key, or PL_curinterp, the main thread's; non-threaded
 * builds: plain globals PL_curcop, PL_curstackinfo) keeps its
 * current statement (curcop: a COP, file and line) and a chain of stack
 * infos (curstackinfo, then si_prev outwards): each holds an array of
 * contexts, 0 .. si_cxix, of which the sub, format and eval ones are
 * frames.  A sub called from Perl runs in the same runops loop; a new
 * stack info (and a nested runops) starts where C calls back into Perl
 * (sort's block, call_sv).  So at each native runops frame the unwinder
 * pushes the frames of one stack info, innermost first, each as (CV,
 * COP): the COP is where that frame is (the inner frame's blk_oldcop, or
 * curcop for the innermost), and ends the main stack info with the
 * program's own frame (no CV).
 */
#ifndef EP_PERL_H
#define EP_PERL_H

#include "profiler.h"

#define PERL_METRICS(X)                                                        \
	X(FRAMES_PERL, "perl frames unwound")                                  \
	X(ERR_PERL_READ, "perl: reading the interpreter's contexts failed")    \
	X(ERR_PERL_TOO_DEEP, "perl: more contexts in one stack info than the limit")

INTERP_METRIC_IDS(PERL, PERL_METRICS);

/* PERL_CONTEXT types (cx_type & CXTYPEMASK) that are frames. */
#define PERL_CXTYPEMASK 0xf
#define PERL_CXT_SUB 9
#define PERL_CXT_FORMAT 10
#define PERL_CXT_EVAL 11
#define PERL_SI_MAIN 1 /* PERLSI_MAIN */

/* A frame: data = line, payload = the CV (0 for the program's own frame)
 * and the COP (its file). */

/* Per process (map "perl_procs", key pid): process addresses, offsets. */
/* The offsets the unwinder walks by, in bytes: the head of the version's
 * offsets in userspace (struct perl_offsets), copied as they are. */
struct perl_walk {
	__u16 i_curcop, i_curstackinfo;		/* struct interpreter */
	__u16 si_cxstack, si_prev, si_cxix, si_type; /* PERL_SI */
	__u16 cx_size, cx_oldcop, cx_cv;	/* PERL_CONTEXT */
	__u16 cop_line;				/* COP */
};

struct perl_proc {
	__u64 interp;		/* &PL_curinterp: the main interpreter */
	__u64 thr_key;		/* &PL_thr_key: the pthread key of my_perl */
	/* non-threaded builds (interp 0): &PL_curcop, &PL_curstackinfo,
	 * the interpreter's variables as globals, for every thread */
	__u64 g_curcop, g_curstackinfo;
	__u64 loop_lo, loop_hi; /* Perl_runops_standard */
	/* glibc's TSD: the thread's my_perl is at the thread pointer +
	 * tsd_off (negative on arm64) + tsd_mul * key + tsd_val for a key
	 * below 32; tsd_mul 0: unknown, only the main thread is walked (with
	 * PL_curinterp) */
	__s16 tsd_off;
	__u16 tsd_mul, tsd_val, pad16;
	struct perl_walk walk;
	__u32 pad;
};
_Static_assert(sizeof(struct perl_proc) == 80, "perl_proc layout");

#endif
