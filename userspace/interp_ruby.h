/* SPDX-License-Identifier: Apache-2.0 */
/* Ruby's module (interp_ruby.c): what its fuzz target and tests reach. */
#ifndef EP_INTERP_RUBY_H
#define EP_INTERP_RUBY_H

#include <stdint.h>
#include <sys/types.h>

#include "interp.h"

/* Offsets of one Ruby version, in bytes, for the names. */
struct ruby_offsets {
	uint16_t iseq_body;			   /* rb_iseq_t.body */
	uint16_t body_encoded;			   /* .iseq_encoded */
	uint16_t body_path, body_label;		   /* .location.pathobj, label */
	uint16_t body_first_line;		   /* .location.first_lineno */
	uint16_t body_info, body_positions;	   /* .insns_info.body, positions */
	uint16_t body_info_size, body_succ;	   /* .size, .succ_index_table */
	uint16_t info_entry_size;		   /* iseq_insn_info_entry */
	uint16_t me_def, me_called_id, me_owner;   /* rb_callable_method_entry_t */
	uint16_t def_func, def_original_id;	   /* rb_method_definition_t */
	/* a class's name (class_mode): RUBY_CLASS_IVAR (to 3.1): RClass.ptr
	 * (class_ext), its iv_tbl (ext_iv_tbl), an st_table holding the
	 * __classpath__ and __attached__ ivars; RUBY_CLASS_EXT (3.3+): the
	 * classext follows the RClass (class_ext: its size) and holds
	 * classpath and attached_object (ext_classpath, ext_attached) */
	uint16_t class_ext, ext_iv_tbl, ext_classpath, ext_attached;
	uint8_t class_mode;
	uint8_t rstring_v32; /* RString as 3.2 lays it out (length at 16) */
	uint8_t first_line_int; /* location.first_lineno an int (3.2+), not
				 * a Fixnum */
	uint8_t id_shift;    /* RUBY_ID_SCOPE_SHIFT */
	uint32_t last_op_id; /* tLAST_OP_ID: IDs above are serial << shift */
};

enum ruby_class_mode {
	RUBY_CLASS_NONE = 0, /* no class names (3.2: ivars by object shape) */
	RUBY_CLASS_IVAR = 1,
	RUBY_CLASS_EXT = 2,
};

/* What names a frame besides the offsets: the process' symbol table of
 * IDs (ruby_global_symbols: 0 when not found), the IDs of the instance
 * variables classes are named by (ruby_find_class_ids; 0: no class
 * names) and a namer of C function pointers (NULL: none). */
struct ruby_namer {
	uint64_t global_symbols;
	uint64_t classpath_id, attached_id;
	const char *(*cfunc)(void *arg, uint64_t func);
	void *cfunc_arg;
};

/* Name one Ruby frame (bpf/ruby.h: data = RUBY_FRAME_DATA, payload =
 * iseq and pc, or method entry) from memory read through read: for Ruby
 * code its label with its method's class ("Foo#m", "Foo.m" for a
 * singleton method, "block in Foo#m", "<main>"), its file and line; for a
 * C function "Class#method [c_function]" as far as each is known.  Returns 0, or a
 * negative errno when nothing could be read. */
int ruby_frame_name(interp_read_fn read, void *arg, pid_t pid,
		    const struct ruby_offsets *o, const struct ruby_namer *nm,
		    const struct interp_frame *f, struct interp_symbol *out);

/* The IDs of "__classpath__" and "__attached__" in a process, from its
 * ID table at gs.  0, or -ENOENT. */
int ruby_find_class_ids(interp_read_fn read, void *arg, pid_t pid,
			const struct ruby_offsets *o, uint64_t gs,
			uint64_t *classpath, uint64_t *attached);

/* The line of a pc in an iseq (its insns_info), 0 when unknown. */
uint32_t ruby_iseq_line(interp_read_fn read, void *arg, pid_t pid,
			const struct ruby_offsets *o, uint64_t iseq,
			uint64_t pc);

/* Ruby 3.1's offsets (the version Debian 12 ships), for tests. */
extern const struct ruby_offsets ruby_offsets_3_1;

#define RUBY_INFO_FORMAT 2 /* 2: arm64's TLS (TLSDESC) */

/* What detection keeps for a file (its store record; ELF addresses).  The
 * unit tests read a stored one with fix_record (interp_fixture.h). */
struct ruby_info {
	uint32_t format;
	uint8_t major, minor, patch, ec_mode;
	uint64_t ec_addr; /* per ec_mode: GOT slot, or the global */
	int64_t ec_off;
	uint64_t loop_lo, loop_hi; /* rb_vm_exec */
	uint64_t vm_ptr;	   /* ruby_current_vm_ptr, 0 if none */
	uint64_t global_symbols;   /* ruby_global_symbols, 0 if not found */
	uint32_t last_op_id;
	uint8_t id_shift, pad[3];
};
_Static_assert(sizeof(struct ruby_info) == 64, "ruby_info layout");

#endif
