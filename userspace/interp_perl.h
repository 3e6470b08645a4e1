/* SPDX-License-Identifier: Apache-2.0 */
/* Perl's module (interp_perl.c): what its fuzz target reaches. */
#ifndef EP_INTERP_PERL_H
#define EP_INTERP_PERL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp.h"
#include "perl.h"

/* Offsets of one Perl version and build, in bytes. */
struct perl_offsets {
	struct perl_walk walk; /* what the unwinder reads (bpf/perl.h) */
	uint16_t cop_file;				/* COP */
	uint16_t cop_file_gv; /* 1: cop_file is a GV named "_<file" (a
			       * non-threaded build), 0: a char * */
	uint16_t cv_stash, cv_gv, cv_flags;		/* XPVCV */
	uint16_t gv_gp, gp_egv;				/* GV head, GP */
	uint16_t gv_namehek, gv_stash;			/* XPVGV */
	uint16_t hv_max, hv_array;			/* XPVHV, HV head */
	uint16_t hv_aux; /* xpvhv_aux in the HV's body (5.36: xpvhv_with_aux);
			  * 0: after the bucket array (before 5.36) */
	uint16_t aux_name, aux_name_count;		/* xpvhv_aux */
};

/* What the offsets rest on, the same in every version covered (checked
 * against the headers by the unit tests, with bpf/perl.h's CXt_ ones). */
#define PERL_SVF_OOK 0x02000000 /* SVf_OOK: a stash has its aux struct */
#define PERL_CVF_NAMED 0x8000	/* CVf_NAMED: the CV has a HEK, no GV */
#define PERL_SV_FLAGS 12	/* SV head: sv_any 0, sv_refcnt, sv_flags */
#define PERL_HEK_LEN 4		/* HEK: hek_hash, hek_len, hek_key */
#define PERL_HEK_KEY 8

/* The offsets of Perl 5.<version>, threaded (ithreads, multiplicity) or
 * not; NULL when not covered. */
const struct perl_offsets *perl_offsets_of(unsigned revision,
					   unsigned version, bool threaded);

/* Name one Perl frame (bpf/perl.h: data = line, payload = CV and COP)
 * from memory read through read: "package::sub", "main" for the
 * program's own frame, "(eval)"; the file from the COP.  Returns 0, or a
 * negative errno when the sub cannot be read. */
int perl_frame_name(interp_read_fn read, void *arg, pid_t pid,
		    const struct perl_offsets *o, const struct interp_frame *f,
		    struct interp_symbol *out);

/* What detection keeps for a file (its store record; ELF addresses).  The
 * unit tests read a stored one with fix_record (interp_fixture.h). */
#define PERL_INFO_FORMAT 3
struct perl_info {
	uint32_t format;
	uint8_t revision, version, subversion, threaded;
	uint64_t interp;	   /* PL_curinterp (threaded) */
	uint64_t thr_key;	   /* PL_thr_key, 0 if none */
	uint64_t curcop, curstackinfo; /* PL_curcop... (non-threaded) */
	uint64_t loop_lo, loop_hi; /* Perl_runops_standard */
};
_Static_assert(sizeof(struct perl_info) == 56, "perl_info layout");

#endif
