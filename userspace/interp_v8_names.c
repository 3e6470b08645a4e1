// SPDX-License-Identifier: Apache-2.0
/*
 * V8's names, per frame, from the process' memory: JSFunction ->
 * SharedFunctionInfo -> its name (a String, or the name a ScopeInfo
 * keeps) and Script -> name and source, the line counted in the source
 * up to the frame's position (interp_v8_code.c finds it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_v8_int.h"
#include "v8.h"

/* ---- names ---------------------------------------------------------------- */

static bool is_string(const struct v8_reader *r, uint16_t type)
{
	return type < r->l->first_nonstring &&
	       !(type & r->l->not_string_mask);
}

/* Strings nest (cons of cons, thin): a bound on the pieces followed. */
#define V8_STR_PIECES 16

/* Append the text of string obj to out (at *n, below cap); two-byte
 * characters past Latin-1 become '?'.  0 or an error. */
static int str_append(const struct v8_reader *r, uint64_t obj, char *out,
		      size_t *n, size_t cap, unsigned *pieces)
{
	const struct v8_layout *l = r->l;
	uint16_t type, u16[64];
	uint32_t len, i, chunk;
	uint64_t a, b;
	int err;

	if (++*pieces > V8_STR_PIECES)
		return -ELOOP;
	err = v8_type_of(r, obj, &type);
	if (err)
		return err;
	if (!is_string(r, type))
		return -EINVAL;
	if ((type & l->repr_mask) == l->thin_tag) {
		err = v8_field(r, obj, l->thin_actual, &a);
		return err ? err : str_append(r, a, out, n, cap, pieces);
	}
	if ((type & l->repr_mask) == l->cons_tag) {
		err = v8_field(r, obj, l->cons_first, &a);
		if (!err)
			err = v8_field(r, obj, l->cons_second, &b);
		if (!err)
			err = str_append(r, a, out, n, cap, pieces);
		if (!err && *n < cap)
			err = str_append(r, b, out, n, cap, pieces);
		return err;
	}
	if ((type & l->repr_mask) != l->seq_tag)
		return -ENOTSUP; /* external, sliced: not read yet */
	err = v8_rd(r, obj - 1 + l->str_length, &len, 4);
	if (err)
		return err;
	if (len > (1u << 28))
		return -EINVAL;
	if (len > cap - *n)
		len = (uint32_t)(cap - *n);
	if ((type & l->enc_mask) == l->one_byte_tag) {
		err = v8_rd(r, obj - 1 + l->seq1_chars, out + *n, len);
		if (err)
			return err;
		*n += len;
		return 0;
	}
	for (i = 0; i < len; i += chunk) {
		uint32_t j;

		chunk = len - i < 64 ? len - i : 64;
		err = v8_rd(r, obj - 1 + l->seq2_chars + 2ull * i, u16, 2ull * chunk);
		if (err)
			return err;
		for (j = 0; j < chunk; j++)
			out[*n + i + j] = u16[j] && u16[j] < 256 ? (char)u16[j] : '?';
	}
	*n += len;
	return 0;
}

/* String obj into out (NUL-terminated, cut to fit); 0 or an error. */
static int read_str(const struct v8_reader *r, uint64_t obj, char *out,
		    size_t cap)
{
	unsigned pieces = 0;
	size_t n = 0, i;
	int err;

	out[0] = 0;
	err = str_append(r, obj, out, &n, cap - 1, &pieces);
	out[n] = 0;
	if (err && !n)
		return err;
	/* a name holds no NUL: cut at the first one */
	for (i = 0; i < n; i++)
		if (!out[i])
			break;
	return i ? 0 : -ENOENT;
}

/* A compiled function's ScopeInfo keeps its name after the context
 * locals (names, then infos) and, for class scopes, the saved class
 * variable: the first string among the next slots is it (or, for an
 * anonymous function, the name V8 inferred for it). */
#define V8_SI_SCAN 3
static int scope_info_name(const struct v8_reader *r, uint64_t si, char *out,
			   size_t cap)
{
	const struct v8_layout *l = r->l;
	uint64_t nlocals, slot;
	uint16_t type;
	unsigned i, first;

	/* ScopeInfo's slots follow its map */
	if (v8_field(r, si, 8 + 8 * l->si_ncontextlocals, &nlocals) ||
	    (nlocals & 0xffffffff))
		return -EINVAL;
	nlocals >>= 32;
	/* past 75 locals the names are a hash table, one slot */
	if (nlocals > 1u << 16)
		return -EINVAL;
	first = l->si_first_vars + (nlocals < 75 ? 2 * nlocals : nlocals + 1);
	for (i = 0; i < V8_SI_SCAN; i++) {
		if (v8_field(r, si, 8 + 8 * (first + i), &slot) || (slot & 3) != 1)
			continue;
		if (v8_type_of(r, slot, &type) || !is_string(r, type))
			continue;
		if (read_str(r, slot, out, cap) == 0)
			return 0;
	}
	return -ENOENT;
}

/* Sources read to find a line: at most this many characters. */
#define V8_SOURCE_MAX (4u << 20)

/* The first want characters of script's source into *buf (malloc'd, the
 * caller's to free): how many were read, fewer when a piece of it could
 * not be (*failed then tells). */
static size_t source_read(const struct v8_reader *r, uint64_t script,
			  size_t want, char **buf, bool *failed)
{
	uint64_t src;
	unsigned pieces = 0;
	size_t n = 0;

	*failed = true;
	*buf = NULL;
	if (v8_field(r, script, r->l->script_source, &src))
		return 0;
	*buf = malloc(want + 1);
	if (!*buf)
		return 0;
	if (r->st)
		r->st->source_reads++;
	*failed = str_append(r, src, *buf, &n, want, &pieces) != 0;
	return n;
}

/* The line at pos in the first n characters of a source (0: not in them). */
static uint32_t line_at(const char *buf, size_t n, int64_t pos)
{
	uint32_t line = 1;
	size_t i;

	if (!buf || pos < 0 || (size_t)pos > n)
		return 0;
	for (i = 0; i < (size_t)pos; i++)
		line += buf[i] == '\n';
	return line;
}

static bool pos_ok(int64_t pos)
{
	return pos >= 0 && pos < V8_SOURCE_MAX;
}

void v8_chain_lines(const struct v8_reader *r, const uint64_t *script,
		    const int64_t *pos, struct interp_symbol *out, unsigned n)
{
	bool done[INTERP_CHAIN_MAX] = { false };
	unsigned i, j;

	if (n > INTERP_CHAIN_MAX)
		n = INTERP_CHAIN_MAX;
	for (i = 0; i < n; i++) {
		int64_t far = pos[i];
		size_t got;
		bool failed;
		char *buf;

		if (done[i])
			continue;
		if (!script[i] || !pos_ok(pos[i])) {
			out[i].line = 0;
			continue;
		}
		for (j = i + 1; j < n; j++)
			if (script[j] == script[i] && pos_ok(pos[j]) &&
			    pos[j] > far)
				far = pos[j];
		got = source_read(r, script[i], (size_t)far, &buf, &failed);
		for (j = i; j < n; j++) {
			if (done[j] || script[j] != script[i] || !pos_ok(pos[j]))
				continue;
			done[j] = true;
			/* a read that failed is the furthest position's
			 * answer (0); a nearer one may have stopped short of
			 * the piece that failed: it reads on its own */
			if (failed && pos[j] < far) {
				bool own_failed;
				char *own;
				size_t n_own = source_read(r, script[j],
							   (size_t)pos[j], &own,
							   &own_failed);

				out[j].line = own_failed ? 0 :
					line_at(own, n_own, pos[j]);
				free(own);
				continue;
			}
			out[j].line = failed ? 0 : line_at(buf, got, pos[j]);
			if (j != i && r->st)
				r->st->source_shared++;
		}
		free(buf);
	}
}

/* SharedFunctionInfo sfi's name and its script's into out (line 0);
 * *script: its Script, 0 when it has none. */
int v8_sfi_symbol(const struct v8_reader *r, uint64_t sfi,
		  struct interp_symbol *out, uint64_t *script)
{
	const struct v8_layout *l = r->l;
	uint64_t name, sname;
	uint16_t type;
	int err;

	out->name[0] = out->file[0] = 0;
	out->line = 0;
	*script = 0;
	err = v8_type_of(r, sfi, &type);
	if (err)
		return err;
	if (type != l->type_sfi)
		return -EINVAL;
	if (v8_field(r, sfi, l->sfi_name, &name) == 0 &&
	    v8_type_of(r, name, &type) == 0) {
		if (is_string(r, type))
			read_str(r, name, out->name, sizeof(out->name));
		else if (l->type_scope_info && type == l->type_scope_info)
			scope_info_name(r, name, out->name, sizeof(out->name));
	}
	if (!out->name[0])
		snprintf(out->name, sizeof(out->name), "<anonymous>");
	if (v8_field(r, sfi, l->sfi_script, script) || v8_type_of(r, *script, &type) ||
	    type != l->type_script) {
		*script = 0;
		return 0;
	}
	if (v8_field(r, *script, l->script_name, &sname) == 0)
		read_str(r, sname, out->file, sizeof(out->file));
	return 0;
}

int v8_frame_symbolize(interp_read_fn read, void *arg, pid_t pid,
		       const struct v8_layout *l, const struct interp_frame *f,
		       struct interp_symbol *out, unsigned max,
		       struct v8_sym_stats *st)
{
	const struct v8_reader r = { read, arg, pid, l, st };
	uint64_t fn = f->n_payload ? f->payload[0] : 0, sfi, script, bca;
	uint64_t pc = f->data & V8_PC_MASK, frame_bca;
	bool jit = f->data & V8_F_JIT, have_off, found = false;
	uint32_t off = (uint32_t)f->data;
	struct v8_code c;
	int64_t pos = -1, bc_off;
	uint16_t type;
	int err, n;

	if (!max)
		return -EINVAL;
	err = v8_field(&r, fn, l->fn_shared, &sfi);
	if (err)
		return err;
	/* optimized code (Maglev, TurboFan): the kinds after baseline */
	if (jit && l->kind_baseline && v8_code_at(&r, pc, &c) == 0)
		found = true;
	if (found && c.kind > l->kind_baseline) {
		n = v8_optimized_chain(&r, &c, sfi, pc, out, max);
		if (n > 0)
			return n;
	}
	err = v8_sfi_symbol(&r, sfi, out, &script);
	if (err || !script)
		return err ? err : 1;
	/* the frame's own bytecode when it is interpreted (its offset
	 * slot) or baseline (its pc mapped to it), else the function's
	 * (its start) */
	frame_bca = f->n_payload > 1 ? f->payload[1] : 0;
	have_off = !jit && (f->data & V8_F_BCOFF);
	if (found && c.kind == l->kind_baseline && l->bc_count &&
	    !v8_type_of(&r, frame_bca, &type) && type == l->type_bytecode_array) {
		bool ok;

		bc_off = v8_baseline_bytecode(&r, &c, frame_bca,
					      pc - c.start + 1, &ok);
		if (ok && bc_off >= 0) {
			have_off = true;
			off = (uint32_t)bc_off + l->bca_data - 1;
		}
	}
	pos = v8_frame_position(&r, frame_bca, have_off, off);
	if (pos < 0 && v8_field(&r, sfi, l->sfi_function_data, &bca) == 0)
		pos = v8_frame_position(&r, bca, false, 0);
	v8_chain_lines(&r, &script, &pos, out, 1);
	return 1;
}
