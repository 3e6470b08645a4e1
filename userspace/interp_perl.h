/* SPDX-License-Identifier: Apache-2.0 */
/* Perl's module (interp_perl.c): what its fuzz target reaches. */
#ifndef EP_INTERP_PERL_H
#define EP_INTERP_PERL_H

#include <stdint.h>
#include <sys/types.h>

#include "interp.h"

/* Offsets of one Perl version (threaded build), in bytes. */
struct perl_offsets {
	uint16_t i_curcop, i_curstackinfo;		/* struct interpreter */
	uint16_t si_cxstack, si_prev, si_cxix, si_type; /* PERL_SI */
	uint16_t cx_size, cx_oldcop, cx_cv;		/* PERL_CONTEXT */
	uint16_t cop_line, cop_file;			/* COP */
	uint16_t cv_stash, cv_gv, cv_flags;		/* XPVCV */
	uint16_t gv_gp, gp_egv;				/* GV head, GP */
	uint16_t gv_namehek, gv_stash;			/* XPVGV */
	uint16_t hv_max, hv_array;			/* XPVHV, HV head */
	uint16_t hv_aux; /* xpvhv_aux in the HV's body (5.36: xpvhv_with_aux);
			  * 0: after the bucket array (before 5.36) */
	uint16_t aux_name, aux_name_count;		/* xpvhv_aux */
};

/* Name one Perl frame (bpf/perl.h: data = line, payload = CV and COP)
 * from memory read through read: "package::sub", "main" for the
 * program's own frame, "(eval)"; the file from the COP.  Returns 0, or a
 * negative errno when the sub cannot be read. */
int perl_frame_name(interp_read_fn read, void *arg, pid_t pid,
		    const struct perl_offsets *o, const struct interp_frame *f,
		    struct interp_symbol *out);

#endif
