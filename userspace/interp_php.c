// SPDX-License-Identifier: Apache-2.0
/*
 * PHP's module (the walk: bpf/php.h).  Detection, per file: the engine's
 * symbols (executor_globals, execute_ex: the php binary, or libphp), its
 * version from the "X-Powered-By: PHP/x.y.z" string, the offset of
 * EG.current_execute_data read from the code of zend_is_executing()
 * (which tests it), and the zend_op_array offsets of that minor version,
 * written from PHP's sources (Zend/zend_compile.h of each branch).
 * Names, per frame: the zend_function's name, its class, its file, read
 * from the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "deltas.h"
#include "elfmap.h"
#include "interp.h"
#include "log.h"
#include "interp_php.h"
#include "php.h"

/*
 * zend_op_array.filename and .line_start per minor version.  The common
 * head is type, arg_flags, fn_flags, function_name (8), scope (16),
 * prototype, num_args, required_num_args, arg_info; 8.0 adds attributes;
 * 8.2 moves T and run_time_cache into it; 8.4 adds prop_info and more.
 * What the rest of the walk reads (interp_php.h: zend_execute_data,
 * zend_op.lineno, zend_class_entry.name, zend_string) is the same from
 * 7.4 to 8.4.  7.4, 8.2 and 8.4 (with EG's current_execute_data and size
 * in Debian's builds, a fallback when zend_is_executing's code is not
 * recognised) are checked against each version's headers by the unit
 * tests (tests/tools/php_offsets.txt: Debian's php7.4-dev, php8.2-dev,
 * php8.4-dev); 8.0, 8.1 and 8.3 are read from PHP's sources.
 */
static const struct php_layout layouts[] = {
	{ 7, 4, 136, 144, 488, 1664 }, /* Debian 11's php7.4 */
	{ 8, 0, 144, 152, 0, 0 },
	{ 8, 1, 144, 152, 0, 0 },
	{ 8, 2, 152, 160, 488, 1800 }, /* Debian 12's php8.2 */
	{ 8, 3, 144, 152, 0, 0 },
	{ 8, 4, 168, 176, 488, 1984 }, /* Debian 13's php8.4 */
};

_Static_assert(offsetof(struct php_layout, major) == 0 &&
		       offsetof(struct php_layout, minor) == 1,
	       "a row starts with struct interp_version_key");

const struct php_layout *php_layout_of(unsigned major, unsigned minor)
{
	return INTERP_VERSION_ROW(layouts, major, minor);
}

/* "X-Powered-By: PHP/8.2.36" in the file's read-only data. */
static int php_version(const struct elfm *e, unsigned *major, unsigned *minor)
{
	static const char key[] = "X-Powered-By: PHP/";
	const uint8_t *data, *p;
	size_t len;

	data = elfm_data(e, &len);
	p = memmem(data, len, key, sizeof(key) - 1);
	if (!p || (size_t)(p - data) + sizeof(key) + 4 > len)
		return -ENOENT;
	p += sizeof(key) - 1;
	if (p[0] < '5' || p[0] > '9' || p[1] != '.' || p[2] < '0' || p[2] > '9')
		return -EPROTO;
	*major = p[0] - '0';
	*minor = p[2] - '0';
	if (p[3] >= '0' && p[3] <= '9')
		*minor = *minor * 10 + (p[3] - '0');
	return 0;
}

/* The first instructions of the function at fn, after an endbr64 (builds
 * with -fcf-protection, as Debian 13's): n bytes of them in *c, the
 * address of the first in *at.  -ENOENT when not in the file. */
static int code_at(const struct elfm *e, uint64_t fn, size_t n,
		   const uint8_t **c, uint64_t *at)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t avail;

	if (elfm_vaddr_bytes(e, fn, n + sizeof(endbr64), c, &avail))
		return -ENOENT;
	*at = fn;
	if (!memcmp(*c, endbr64, sizeof(endbr64))) {
		*c += sizeof(endbr64);
		*at += sizeof(endbr64);
	}
	return 0;
}

/* The offset zend_is_executing() tests (EG(current_execute_data) != 0),
 * from its first instructions: lea eg(%rip),%rax; cmpq $0,off(%rax), or
 * cmpq $0,eg+off(%rip), or mov eg+off(%rip),%rax.  0 when not found. */
static uint16_t current_from_code(const struct elfm *e, uint64_t fn,
				  uint64_t eg, uint64_t eg_size)
{
	const uint8_t *c;
	int32_t rel, disp;
	uint64_t target;

	if (code_at(e, fn, 16, &c, &fn))
		return 0;
	if (c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x05 && c[7] == 0x48 &&
	    c[8] == 0x83 && c[9] == 0xb8 && c[14] == 0x00) {
		memcpy(&rel, c + 3, 4);
		memcpy(&disp, c + 10, 4);
		if (fn + 7 + (int64_t)rel != eg || disp <= 0 ||
		    (uint64_t)disp + 8 > eg_size)
			return 0;
		return (uint16_t)disp;
	}
	if (c[0] == 0x48 && ((c[1] == 0x83 && c[2] == 0x3d && c[7] == 0x00) ||
			     (c[1] == 0x8b && c[2] == 0x05))) {
		memcpy(&rel, c + 3, 4);
		target = fn + (c[1] == 0x83 ? 8 : 7) + (int64_t)rel;
		if (target < eg || target + 8 > eg + eg_size)
			return 0;
		return (uint16_t)(target - eg);
	}
	return 0;
}

/* zend_vm_kind(): mov $kind,%eax; ret on x86-64, mov w0,#kind; ret
 * (movz, then ret through x30) on aarch64. */
static bool hybrid_vm(const struct elfm *e, uint64_t fn)
{
	const uint8_t *c;
	uint32_t kind, insn[2];

	if (code_at(e, fn, 8, &c, &fn))
		return false;
	if (c[0] == 0xb8 && c[5] == 0xc3) {
		memcpy(&kind, c + 1, 4);
		return kind == PHP_VM_KIND_HYBRID;
	}
	memcpy(insn, c, sizeof(insn));
	return insn[0] == (0x52800000u | PHP_VM_KIND_HYBRID << 5) &&
	       insn[1] == 0xd65f03c0u;
}

/* An address of execute_ex's body, where JIT code's frames resume: the
 * CFA rule (sp or rbp + offset) that covers most of the loop, from the
 * file's own CFI, kept in *body.  0 when there is none. */
#define RESUME_SAMPLES 64
static uint64_t resume_pc_of(int fd, const char *path, uint64_t lo,
			     uint64_t hi, struct unwind_rule *body)
{
	int rules[RESUME_SAMPLES], best = -1, best_n = 0, i, j, n;
	uint64_t addr[RESUME_SAMPLES], pc = 0;
	struct dt_file *f = NULL;

	if (hi - lo < 2 * RESUME_SAMPLES || dt_extract_file(fd, path, &f))
		return 0;
	for (i = 0; i < RESUME_SAMPLES; i++) {
		addr[i] = lo + (hi - lo) * (i + 1) / (RESUME_SAMPLES + 1);
		rules[i] = dt_file_lookup(f, addr[i]);
	}
	for (i = 0; i < RESUME_SAMPLES; i++) {
		const struct unwind_rule *r = rules[i] >= 0 ?
						      dt_file_rule(f, rules[i]) :
						      NULL;

		/* sp-based (Debian 12's 8.2) or rbp-based (Debian 13's 8.4:
		 * execute_ex keeps a frame pointer, which JIT code running on
		 * its frame leaves alone) */
		if (!r || r->cmd != RULE_CMD_NONE ||
		    (r->cfa_reg != RULE_REG_SP && r->cfa_reg != RULE_REG_FP))
			continue;
		for (n = 0, j = 0; j < RESUME_SAMPLES; j++)
			n += rules[j] == rules[i];
		if (n > best_n) {
			best_n = n;
			best = rules[i];
			pc = addr[i];
			*body = *r;
		}
	}
	dt_file_free(f);
	/* the body's rule covers most of the loop, or this is not it */
	return best >= 0 && best_n * 2 > RESUME_SAMPLES ? pc : 0;
}

/*
 * aarch64: how far execute_ex's x29 is above the body's sp.  Its JIT code
 * has no red zone to reuse and lowers sp (PHP's sources say by 16 bytes,
 * HYBRID_SPAD; a fixed 16 left every JIT stack of Debian 12's 8.2
 * incomplete in the arm64 guest) but leaves x29 alone, which execute_ex's
 * prologue points at the frame record it saves (add x29, sp, #imm, with
 * x29 saved at CFA + fp_off: imm = cfa_off + fp_off in an sp-based body).
 * 0 when the prologue or the body's rule is not that.
 */
#define PROLOGUE_INSNS 16
static uint16_t fp_sp_of(const struct elfm *e, uint64_t fn,
			 const struct unwind_rule *body)
{
	const uint8_t *c;
	uint32_t insn, imm;
	int i;

	if (body->cfa_reg != RULE_REG_SP || body->fp_rule != RULE_FP_CFA_OFF ||
	    code_at(e, fn, 4 * PROLOGUE_INSNS, &c, &fn))
		return 0;
	for (i = 0; i < PROLOGUE_INSNS; i++) {
		memcpy(&insn, c + 4 * i, 4);
		/* add x29, sp, #imm12 (unshifted) */
		if ((insn & 0xffc003ffu) != 0x910003fdu)
			continue;
		imm = (insn >> 10) & 0xfff;
		if (imm && (int64_t)imm == (int64_t)body->cfa_off + body->fp_off)
			return (uint16_t)imm;
		return 0;
	}
	return 0;
}

static int php_detect(void *state, const struct interp_file *file,
		      void **data, size_t *len)
{
	static const char *const names[] = { "execute_ex", "executor_globals",
					     "zend_is_executing",
					     "executor_globals_offset",
					     "zend_vm_kind" };
	uint64_t value[5] = { 0 }, size[5] = { 0 };
	const struct elfm *e = file->elf;
	const struct php_layout *l;
	struct unwind_rule body = { 0 };
	struct php_info *info;
	unsigned major, minor;
	uint16_t cur;
	int err;

	(void)state;
	elfm_find_syms(e, names, 5, value, size);
	if (!size[0])
		return -ENOENT; /* no Zend engine */
	if (!size[1] || size[3])
		return -ENOTSUP; /* ZTS: EG through TSRM's TLS, not supported yet */
	err = php_version(e, &major, &minor);
	if (err)
		return err;
	l = php_layout_of(major, minor);
	if (!l)
		return -ENOTSUP;
	cur = size[2] ? current_from_code(e, value[2], value[1], size[1]) : 0;
	if (!cur && l->current_off && size[1] == l->eg_size)
		cur = l->current_off;
	if (!cur)
		return -ENOTSUP;
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	*info = (struct php_info){ .format = PHP_INFO_FORMAT, .major = major,
				   .minor = minor, .current_off = cur,
				   .eg = value[1], .loop_lo = value[0],
				   .loop_hi = value[0] + size[0],
				   .op_filename = l->filename,
				   .op_line_start = l->line_start };
	if (size[4] && hybrid_vm(e, value[4]))
		info->resume_pc = resume_pc_of(file->fd, file->path,
					       info->loop_lo, info->loop_hi,
					       &body);
	if (info->resume_pc && elfm_ehdr(e)->e_machine == EM_AARCH64) {
		info->fp_sp = fp_sp_of(e, info->loop_lo, &body);
		if (!info->fp_sp)
			info->resume_pc = 0;
	}
	*data = info;
	*len = sizeof(*info);
	return 0;
}

static int php_check(const void *record)
{
	const struct php_info *info = record;

	if (info->loop_hi <= info->loop_lo ||
	    !php_layout_of(info->major, info->minor) || !info->current_off)
		return -EINVAL;
	return 0;
}

static int php_attach_map(struct interp_mgr *im, const struct interp_attach *a)
{
	const struct php_info *info = a->files[0].data;
	uint64_t bias = a->files[0].bias;
	uint32_t key = (uint32_t)a->pid;
	struct php_proc pp = {
		.current = info->eg + bias + info->current_off,
		.loop_lo = info->loop_lo + bias,
		.loop_hi = info->loop_hi + bias,
		.resume_pc = info->resume_pc ? info->resume_pc + bias : 0,
		.fp_sp = info->fp_sp,
		.ed_opline = PHP_ED_OPLINE,
		.ed_func = PHP_ED_FUNC,
		.ed_type_info = PHP_ED_TYPE_INFO,
		.ed_prev = PHP_ED_PREV,
		.op_lineno = PHP_OP_LINENO,
		.fn_type = PHP_FN_TYPE,
	};

	return interp_map_update(im, INTERP_PHP, &key, &pp);
}

/* ---- names ---------------------------------------------------------------- */

struct php_reader {
	interp_read_fn read;
	void *arg;
	pid_t pid;
};

static int read_mem(const struct php_reader *r, uint64_t addr, void *buf,
		    size_t len)
{
	return r->read(r->arg, r->pid, addr, buf, len);
}

/* A zend_string's text into out (cut at n - 1 bytes).  Returns 0 or an
 * error; a length above 1 MiB is not a name. */
static int read_zstr(const struct php_reader *r, uint64_t addr, char *out,
		     size_t n)
{
	uint64_t len;
	int err;

	out[0] = 0;
	if (!addr)
		return -ENOENT;
	err = read_mem(r, addr + PHP_STR_LEN, &len, sizeof(len));
	if (err)
		return err;
	if (len > (1u << 20))
		return -EINVAL;
	if (len >= n)
		len = n - 1;
	err = read_mem(r, addr + PHP_STR_VAL, out, len);
	if (err)
		return err;
	out[len] = 0;
	return strlen(out) == len ? 0 : -EINVAL;
}

static int php_attach(void *state, struct interp_mgr *im,
		      const struct interp_attach *a)
{
	const struct php_info *info = a->files[0].data;
	/* the op_array offset of its version, for the names */
	int err = interp_procs_put(state, a->pid, info->op_filename);

	return err ? err : php_attach_map(im, a);
}

int php_frame_name(interp_read_fn read, void *arg, pid_t pid,
		   uint16_t filename_off, const struct interp_frame *f,
		   struct interp_symbol *out)
{
	const struct php_reader r = { read, arg, pid };
	uint64_t func = f->n_payload ? f->payload[0] : 0, name = 0, scope = 0;
	uint64_t cname = 0, file = 0;
	unsigned type = (unsigned)(f->data >> 32);
	char fn[160], cls[96];
	int err;

	out->name[0] = out->file[0] = 0;
	if (!func)
		return -EINVAL;
	err = read_mem(&r, func + PHP_FN_NAME, &name, 8);
	if (!err)
		err = read_mem(&r, func + PHP_FN_SCOPE, &scope, 8);
	if (err)
		return err;
	if (read_zstr(&r, name, fn, sizeof(fn)))
		snprintf(fn, sizeof(fn), "%s",
			 type == PHP_EVAL_CODE ? "{eval}" : "{main}");
	cls[0] = 0;
	if (scope && read_mem(&r, scope + PHP_CE_NAME, &cname, 8) == 0)
		read_zstr(&r, cname, cls, sizeof(cls));
	if (cls[0])
		snprintf(out->name, sizeof(out->name), "%s::%s", cls, fn);
	else
		snprintf(out->name, sizeof(out->name), "%s", fn);
	if (type != PHP_INTERNAL_FUNCTION &&
	    read_mem(&r, func + filename_off, &file, 8) == 0)
		read_zstr(&r, file, out->file, sizeof(out->file));
	out->line = (uint32_t)f->data;
	return 0;
}

static int php_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			 struct interp_symbol *out, unsigned max)
{
	uint64_t filename_off;
	int err;

	(void)max; /* one function a frame: nothing inlined */
	if (!interp_procs_get(state, pid, &filename_off))
		return -ESRCH;
	err = php_frame_name(interp_read_process, NULL, pid,
			      (uint16_t)filename_off, f, out);
	return err ? err : 1;
}

const struct interp_module interp_module_php = {
	INTERP_MODULE_METRICS(PHP_METRICS),
	INTERP_MODULE_DATA(php, struct php_info, PHP_INFO_FORMAT),
	INTERP_MODULE_FUNCS(php, interp_procs),
};
