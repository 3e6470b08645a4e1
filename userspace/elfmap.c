// SPDX-License-Identifier: Apache-2.0
#include "elfmap.h"

#include <errno.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <lzma.h>

#include "arr.h"
#include "budget.h"

/* Bounds on header tables: real files have a few dozen of each; these
 * only stop a hostile count from making us allocate gigabytes. */
#define MAX_PHDRS 4096
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* glibc 2.36's elf.h predates it */
#endif
#define MAX_SHDRS 65536

struct elfm {
	const uint8_t *data;
	size_t size;
	void *map; /* non-NULL when we mmap'd data */
	int guard; /* its slot in guards[], -1 when none */
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	unsigned phnum;
	Elf64_Shdr *sh;
	unsigned shnum;
	const char *shstr; /* section names, NULL when absent */
	size_t shstr_len;
	uint64_t real_size; /* bytes the file holds on disk (budget.h) */
	uint64_t dev, ino;  /* 0 over memory */
	Elf *libelf;	    /* elfm_libelf(), NULL until asked */
	void *lmap;	    /* the copy-on-write mapping libelf reads */
	int lguard;	    /* its slot in guards[], -1 when none */
};

/* ---- files that shrink under the mapping --------------------------------
 *
 * A file's owner may truncate it while we parse its mapping, and a read
 * past the new end raises SIGBUS, which would end the daemon.  Mappings
 * are registered here; the handler puts a page of zeros over a faulting
 * page of a registered mapping and marks it damaged, and the parser goes
 * on over zeros (any bytes are safe input) while the caller throws its
 * result away (elfm_damaged).  A SIGBUS anywhere else goes to the
 * disposition there was before.
 */
#define GUARD_SLOTS 64 /* mappings open at once: extraction and cache warm */

static struct {
	uintptr_t start, end; /* end 0: free */
	int damaged;
} guards[GUARD_SLOTS];
static pthread_mutex_t guards_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t guards_once = PTHREAD_ONCE_INIT;
static struct sigaction prev_sigbus;
static uintptr_t page_size;
static uint64_t faults; /* pages replaced by zeros, for the metrics */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, page = a & ~(page_size - 1);
	int i;

	(void)sig;
	(void)uc;
	for (i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t s = __atomic_load_n(&guards[i].start, __ATOMIC_ACQUIRE);
		uintptr_t e = __atomic_load_n(&guards[i].end, __ATOMIC_ACQUIRE);

		if (a < s || a >= e)
			continue;
		/* the raw system call: async-signal-safe, no interposer */
		if (syscall(SYS_mmap, page, page_size, PROT_READ,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    (long)page) {
			__atomic_store_n(&guards[i].damaged, 1,
					 __ATOMIC_RELEASE);
			__atomic_add_fetch(&faults, 1, __ATOMIC_RELAXED);
			return; /* the read runs again, over zeros */
		}
		break;
	}
	/* not ours: the fault comes again, to what was there before */
	sigaction(SIGBUS, &prev_sigbus, NULL);
}

static void guards_init(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus,
				.sa_flags = SA_SIGINFO | SA_RESTART };

	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &prev_sigbus);
}

/* A slot for [p, p + len), or -1 when all are taken (then unguarded). */
static int guard_add(const void *p, size_t len)
{
	int i;

	pthread_once(&guards_once, guards_init);
	pthread_mutex_lock(&guards_lock);
	for (i = 0; i < GUARD_SLOTS; i++) {
		if (guards[i].end)
			continue;
		guards[i].damaged = 0;
		__atomic_store_n(&guards[i].start, (uintptr_t)p, __ATOMIC_RELEASE);
		__atomic_store_n(&guards[i].end, (uintptr_t)p + len,
				 __ATOMIC_RELEASE);
		break;
	}
	pthread_mutex_unlock(&guards_lock);
	return i < GUARD_SLOTS ? i : -1;
}

static void guard_del(int i)
{
	if (i < 0)
		return;
	pthread_mutex_lock(&guards_lock);
	__atomic_store_n(&guards[i].end, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&guards[i].start, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&guards_lock);
}

uint64_t elfm_fault_count(void)
{
	return __atomic_load_n(&faults, __ATOMIC_RELAXED);
}

static bool guard_damaged(int i)
{
	return i >= 0 && __atomic_load_n(&guards[i].damaged, __ATOMIC_ACQUIRE);
}

bool elfm_damaged(const struct elfm *e)
{
	return guard_damaged(e->guard) || (e->lmap && guard_damaged(e->lguard));
}

/* Does [off, off + len) lie inside a buffer of size bytes? */
static bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int load_phdrs(struct elfm *e)
{
	const Elf64_Ehdr *eh = &e->eh;

	if (!eh->e_phoff || !eh->e_phnum)
		return 0;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > MAX_PHDRS ||
	    !in_bounds(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr),
		       e->size))
		return 0; /* unusable: behave as if there were none */
	e->ph = malloc(eh->e_phnum * sizeof(Elf64_Phdr));
	if (!e->ph)
		return -ENOMEM;
	memcpy(e->ph, e->data + eh->e_phoff, eh->e_phnum * sizeof(Elf64_Phdr));
	e->phnum = eh->e_phnum;
	return 0;
}

static int load_shdrs(struct elfm *e)
{
	const Elf64_Ehdr *eh = &e->eh;
	uint64_t n = eh->e_shnum, strndx = eh->e_shstrndx;
	Elf64_Shdr first;

	if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_bounds(eh->e_shoff, sizeof(Elf64_Shdr), e->size))
		return 0;
	/* Extended numbering: section 0 holds the real count and index. */
	memcpy(&first, e->data + eh->e_shoff, sizeof(first));
	if (n == 0)
		n = first.sh_size;
	if (strndx == SHN_XINDEX)
		strndx = first.sh_link;
	if (n == 0 || n > MAX_SHDRS ||
	    !in_bounds(eh->e_shoff, n * sizeof(Elf64_Shdr), e->size))
		return 0;
	e->sh = malloc(n * sizeof(Elf64_Shdr));
	if (!e->sh)
		return -ENOMEM;
	memcpy(e->sh, e->data + eh->e_shoff, n * sizeof(Elf64_Shdr));
	e->shnum = (unsigned)n;
	if (strndx < n && e->sh[strndx].sh_type == SHT_STRTAB &&
	    in_bounds(e->sh[strndx].sh_offset, e->sh[strndx].sh_size,
		      e->size)) {
		e->shstr = (const char *)e->data + e->sh[strndx].sh_offset;
		e->shstr_len = e->sh[strndx].sh_size;
	}
	return 0;
}

static int open_common(struct elfm *e)
{
	const Elf64_Ehdr *eh = &e->eh;
	int err;

	if (e->size < sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	memcpy(&e->eh, e->data, sizeof(e->eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT)
		return -ENOEXEC;
	err = load_phdrs(e);
	if (!err)
		err = load_shdrs(e);
	return err;
}

int elfm_open_mem(const void *data, size_t len, struct elfm **out)
{
	struct elfm *e;
	int err;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->guard = -1;
	e->lguard = -1;
	e->data = data;
	e->size = len;
	e->real_size = len;
	err = open_common(e);
	if (err) {
		elfm_free(e);
		return err;
	}
	*out = e;
	return 0;
}

int elfm_open_fd(int fd, struct elfm **out)
{
	struct elfm *e = NULL;
	struct stat st;
	void *map;
	int err;

	*out = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if ((uint64_t)st.st_size < sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	if ((uint64_t)st.st_size > SIZE_MAX)
		return -EFBIG;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	e = calloc(1, sizeof(*e));
	if (!e) {
		munmap(map, st.st_size);
		return -ENOMEM;
	}
	e->map = map;
	e->data = map;
	e->size = st.st_size;
	e->real_size = budget_real_size(&st);
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->guard = guard_add(map, st.st_size);
	e->lguard = -1;
	err = open_common(e);
	if (err) {
		elfm_free(e);
		return err;
	}
	*out = e;
	return 0;
}

int elfm_release(struct elfm *e, int err)
{
	if (e && elfm_damaged(e))
		err = -EIO;
	elfm_free(e);
	return err;
}

void elfm_free(struct elfm *e)
{
	if (!e)
		return;
	if (e->libelf)
		elf_end(e->libelf);
	if (e->lmap) {
		guard_del(e->lguard);
		munmap(e->lmap, e->size);
	}
	guard_del(e->guard);
	if (e->map)
		munmap(e->map, e->size);
	free(e->ph);
	free(e->sh);
	free(e);
}

const uint8_t *elfm_data(const struct elfm *e, size_t *len)
{
	*len = e->size;
	return e->data;
}

bool elfm_same_file(const struct elfm *e, const struct stat *st)
{
	return e->ino && e->dev == (uint64_t)st->st_dev &&
	       e->ino == (uint64_t)st->st_ino;
}

uint64_t elfm_decompress_budget(const struct elfm *e)
{
	uint64_t b = ELFM_DECOMPRESS_SLACK;

	if (e->real_size < (ELFM_MAX_DECOMPRESSED - b) / ELFM_DECOMPRESS_RATIO)
		b += e->real_size * ELFM_DECOMPRESS_RATIO;
	else
		b = ELFM_MAX_DECOMPRESSED;
	return b < ELFM_MAX_DECOMPRESSED ? b : ELFM_MAX_DECOMPRESSED;
}

const Elf64_Ehdr *elfm_ehdr(const struct elfm *e)
{
	return &e->eh;
}

const Elf64_Phdr *elfm_phdrs(const struct elfm *e, unsigned *n)
{
	*n = e->phnum;
	return e->ph;
}

const Elf64_Shdr *elfm_shdrs(const struct elfm *e, unsigned *n)
{
	*n = e->shnum;
	return e->sh;
}

const char *elfm_section_name(const struct elfm *e, const Elf64_Shdr *sh)
{
	const char *s;

	if (!e->shstr || sh->sh_name >= e->shstr_len)
		return "";
	s = e->shstr + sh->sh_name;
	/* The name must end inside the string table. */
	if (!memchr(s, 0, e->shstr_len - sh->sh_name))
		return "";
	return s;
}

const Elf64_Shdr *elfm_section(const struct elfm *e, const char *name)
{
	unsigned i;

	for (i = 1; i < e->shnum; i++)
		if (strcmp(elfm_section_name(e, &e->sh[i]), name) == 0)
			return &e->sh[i];
	return NULL;
}

static int raw_bytes(const struct elfm *e, const Elf64_Shdr *sh,
		     const uint8_t **p, size_t *len)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0)
		return -ENOENT;
	if (!in_bounds(sh->sh_offset, sh->sh_size, e->size))
		return -EINVAL;
	*p = e->data + sh->sh_offset;
	*len = sh->sh_size;
	return 0;
}

int elfm_section_bytes(const struct elfm *e, const Elf64_Shdr *sh,
		       const uint8_t **p, size_t *len)
{
	if (sh->sh_flags & SHF_COMPRESSED)
		return -ENOTSUP;
	return raw_bytes(e, sh, p, len);
}

static int inflate_zlib(const uint8_t *in, size_t in_len, uint8_t *out,
			size_t out_len)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	/* zlib counts in uInt; sections over 4 GiB are refused earlier. */
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)in_len;
	zs.next_out = out;
	zs.avail_out = (uInt)out_len;
	ret = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (ret != Z_STREAM_END || zs.total_out != out_len)
		return -EINVAL;
	return 0;
}

static int inflate_zstd(const uint8_t *in, size_t in_len, uint8_t *out,
			size_t out_len)
{
	size_t n = ZSTD_decompress(out, out_len, in, in_len);

	if (ZSTD_isError(n) || n != out_len)
		return -EINVAL;
	return 0;
}

int elfm_section_load(const struct elfm *e, const Elf64_Shdr *sh,
		      const uint8_t **p, size_t *len, void **owned)
{
	const uint8_t *raw;
	Elf64_Chdr ch;
	size_t raw_len;
	uint8_t *buf;
	int err;

	*owned = NULL;
	err = raw_bytes(e, sh, &raw, &raw_len);
	if (err)
		return err;
	if (!(sh->sh_flags & SHF_COMPRESSED)) {
		*p = raw;
		*len = raw_len;
		return 0;
	}
	if (raw_len < sizeof(ch) || raw_len - sizeof(ch) > UINT32_MAX)
		return -EINVAL;
	memcpy(&ch, raw, sizeof(ch));
	/* zlib cannot expand more than 1032:1; a size beyond that is a lie
	 * we should not allocate for. */
	if (ch.ch_size == 0 || ch.ch_size / 1100 > raw_len)
		return -EINVAL;
	/* A true size may still be a bomb (512 MiB of zeros fit in 500
	 * KiB): the file's budget, from what it holds on disk, says how
	 * much it may make us allocate. */
	if (ch.ch_size > elfm_decompress_budget(e)) {
		budget_over(BUDGET_DECOMPRESSED);
		return -EFBIG;
	}
	buf = malloc(ch.ch_size);
	if (!buf)
		return -ENOMEM;
	if (ch.ch_type == ELFCOMPRESS_ZLIB)
		err = inflate_zlib(raw + sizeof(ch), raw_len - sizeof(ch), buf,
				   ch.ch_size);
	else if (ch.ch_type == ELFCOMPRESS_ZSTD)
		err = inflate_zstd(raw + sizeof(ch), raw_len - sizeof(ch), buf,
				   ch.ch_size);
	else
		err = -ENOTSUP;
	if (err) {
		free(buf);
		return err;
	}
	*p = buf;
	*len = ch.ch_size;
	*owned = buf;
	return 0;
}

/* A piece of the address space: a PT_LOAD segment, or an allocated
 * section in a file without segments (relocatable objects). */
struct region {
	uint64_t vaddr, memsz; /* [vaddr, vaddr + memsz) */
	uint64_t off, filesz;  /* file bytes backing its start */
	bool exec;
};

/* Calls fn for each region; stops early when fn returns non-zero and
 * returns that. */
static int for_each_region(const struct elfm *e,
			   int (*fn)(const struct region *r, void *arg),
			   void *arg)
{
	bool any_load = false;
	struct region r;
	unsigned i;
	int ret;

	for (i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *ph = &e->ph[i];

		if (ph->p_type != PT_LOAD)
			continue;
		any_load = true;
		r = (struct region){ ph->p_vaddr, ph->p_memsz, ph->p_offset,
				     ph->p_filesz, ph->p_flags & PF_X };
		ret = fn(&r, arg);
		if (ret)
			return ret;
	}
	if (any_load)
		return 0;
	for (i = 1; i < e->shnum; i++) {
		const Elf64_Shdr *sh = &e->sh[i];

		if (!(sh->sh_flags & SHF_ALLOC))
			continue;
		r = (struct region){ sh->sh_addr, sh->sh_size, sh->sh_offset,
				     sh->sh_size, sh->sh_flags & SHF_EXECINSTR };
		if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_COMPRESSED))
			r.filesz = 0;
		ret = fn(&r, arg);
		if (ret)
			return ret;
	}
	return 0;
}

struct lookup {
	const struct elfm *e;
	uint64_t vaddr;
	size_t len;
	const uint8_t *p;
	size_t avail;
};

/* 1 when the region backs the lookup, -1 when it holds the address but
 * not enough bytes, 0 to go on. */
static int backs(const struct region *r, void *arg)
{
	struct lookup *l = arg;
	uint64_t at;

	if (l->vaddr < r->vaddr || l->vaddr - r->vaddr >= r->filesz)
		return 0;
	at = l->vaddr - r->vaddr;
	if (!in_bounds(r->off, r->filesz, l->e->size) || l->len > r->filesz - at)
		return -1;
	l->p = l->e->data + r->off + at;
	l->avail = r->filesz - at;
	return 1;
}

int elfm_vaddr_bytes(const struct elfm *e, uint64_t vaddr, size_t len,
		     const uint8_t **p, size_t *avail)
{
	struct lookup l = { .e = e, .vaddr = vaddr, .len = len };

	if (for_each_region(e, backs, &l) != 1)
		return -ENOENT;
	*p = l.p;
	*avail = l.avail;
	return 0;
}

struct span {
	uint64_t lo, hi;
	bool found;
};

/* Executable regions with a sane extent. */
static bool is_text(const struct region *r)
{
	return r->exec && r->memsz && r->vaddr + r->memsz > r->vaddr;
}

static int widen(const struct region *r, void *arg)
{
	struct span *s = arg;

	if (!is_text(r))
		return 0;
	if (!s->found || r->vaddr < s->lo)
		s->lo = r->vaddr;
	if (!s->found || r->vaddr + r->memsz > s->hi)
		s->hi = r->vaddr + r->memsz;
	s->found = true;
	return 0;
}

int elfm_text_span(const struct elfm *e, uint64_t *lo, uint64_t *hi)
{
	struct span s = { 0 };

	for_each_region(e, widen, &s);
	if (!s.found)
		return -ENOENT;
	*lo = s.lo;
	*hi = s.hi;
	return 0;
}

static int contains(const struct region *r, void *arg)
{
	const struct span *s = arg;

	return is_text(r) && s->lo >= r->vaddr && s->hi <= r->vaddr + r->memsz;
}

int elfm_in_text(const struct elfm *e, uint64_t lo, uint64_t hi)
{
	struct span s = { .lo = lo, .hi = hi };

	return for_each_region(e, contains, &s);
}

/* The owner matches with its NUL; padding after it is allowed (Go writes
 * "Go\0\0"). */
int elfm_find_note(const uint8_t *p, size_t len, const char *owner,
		     uint32_t type, const uint8_t **desc, size_t *desc_len)
{
	size_t off = 0, olen = strlen(owner) + 1;

	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name_sz, desc_sz;

		memcpy(&nh, p + off, sizeof(nh));
		off += sizeof(nh);
		name_sz = ((uint64_t)nh.n_namesz + 3) & ~3ULL;
		desc_sz = ((uint64_t)nh.n_descsz + 3) & ~3ULL;
		if (name_sz > len - off || desc_sz > len - off - name_sz)
			return -ENOENT;
		if (nh.n_type == type && nh.n_namesz >= olen &&
		    memcmp(p + off, owner, olen) == 0) {
			*desc = p + off + name_sz;
			*desc_len = nh.n_descsz;
			return 0;
		}
		off += name_sz + desc_sz;
	}
	return -ENOENT;
}

int elfm_note(const struct elfm *e, const char *owner, uint32_t type,
	      const uint8_t **desc, size_t *len)
{
	const uint8_t *d;
	size_t n;
	unsigned i;

	for (i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *ph = &e->ph[i];

		if (ph->p_type == PT_NOTE &&
		    in_bounds(ph->p_offset, ph->p_filesz, e->size) &&
		    elfm_find_note(e->data + ph->p_offset, ph->p_filesz, owner, type,
			      desc, len) == 0)
			return 0;
	}
	for (i = 1; i < e->shnum; i++)
		if (e->sh[i].sh_type == SHT_NOTE &&
		    elfm_section_bytes(e, &e->sh[i], &d, &n) == 0 &&
		    elfm_find_note(d, n, owner, type, desc, len) == 0)
			return 0;
	return -ENOENT;
}

int elfm_build_id(const struct elfm *e, const uint8_t **p, size_t *len)
{
	if (elfm_note(e, "GNU", NT_GNU_BUILD_ID, p, len) != 0 || *len == 0)
		return -ENOENT;
	return 0;
}

int elfm_debuglink(const struct elfm *e, const char **name, uint32_t *crc)
{
	const Elf64_Shdr *sh = elfm_section(e, ".gnu_debuglink");
	const uint8_t *d, *nul;
	size_t n, crc_off;

	if (!sh || elfm_section_bytes(e, sh, &d, &n) != 0)
		return -ENOENT;
	nul = memchr(d, 0, n);
	if (!nul || nul == d)
		return -ENOENT;
	crc_off = ((size_t)(nul - d) + 1 + 3) & ~(size_t)3;
	if (crc_off + 4 > n)
		return -ENOENT;
	memcpy(crc, d + crc_off, 4);
	*name = (const char *)d;
	return 0;
}

int elfm_for_each_sym(const struct elfm *e, const Elf64_Shdr *sh,
		      int (*fn)(const struct elfm_sym *s, void *arg),
		      void *arg)
{
	const uint8_t *sym, *str;
	size_t sym_len, str_len, i;
	int ret;

	if ((sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM) ||
	    sh->sh_link >= e->shnum || sh->sh_entsize != sizeof(Elf64_Sym) ||
	    elfm_section_bytes(e, sh, &sym, &sym_len) ||
	    elfm_section_bytes(e, &e->sh[sh->sh_link], &str, &str_len))
		return -ENOENT;
	for (i = sizeof(Elf64_Sym); i + sizeof(Elf64_Sym) <= sym_len;
	     i += sizeof(Elf64_Sym)) {
		struct elfm_sym out;
		Elf64_Sym s;

		memcpy(&s, sym + i, sizeof(s));
		out.name = "";
		/* the name must end inside the string table */
		if (s.st_name && s.st_name < str_len &&
		    memchr(str + s.st_name, 0, str_len - s.st_name))
			out.name = (const char *)str + s.st_name;
		out.value = s.st_value;
		out.size = s.st_size;
		out.info = s.st_info;
		out.shndx = s.st_shndx;
		ret = fn(&out, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* elfm_find_syms()'s walk: the names still missing (found[i] false). */
struct find_syms {
	const char *const *names;
	unsigned n, got;
	uint64_t *value, *size;
	bool found[64];
};

static int find_sym(const struct elfm_sym *s, void *arg)
{
	struct find_syms *f = arg;
	unsigned k;

	if (s->shndx == SHN_UNDEF || !s->name[0])
		return 0;
	for (k = 0; k < f->n; k++) {
		if (f->found[k] || strcmp(s->name, f->names[k]))
			continue;
		f->value[k] = s->value;
		f->size[k] = s->size;
		f->found[k] = true;
		f->got++;
	}
	return 0;
}

unsigned elfm_find_syms(const struct elfm *e, const char *const *names,
			unsigned n, uint64_t *value, uint64_t *size)
{
	static const char *const tables[] = { ".dynsym", ".symtab" };
	struct find_syms f = { .names = names, .n = n < 64 ? n : 64,
			       .value = value, .size = size };
	unsigned t;

	for (t = 0; t < 2 && f.got < f.n; t++) {
		const Elf64_Shdr *sh = elfm_section(e, tables[t]);

		if (sh)
			elfm_for_each_sym(e, sh, find_sym, &f);
	}
	return f.got;
}

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static bool libelf_ok;

static void libelf_init(void)
{
	libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

Elf *elfm_libelf(struct elfm *e, int fd)
{
	struct stat st;
	void *map;

	pthread_once(&libelf_once, libelf_init);
	if (e->libelf || !libelf_ok || !e->map)
		return e->libelf;
	/* that very file, as large as when we mapped it */
	if (fstat(fd, &st) < 0 || !elfm_same_file(e, &st) ||
	    (uint64_t)st.st_size != e->size)
		return NULL;
	/*
	 * libelf over memory (elf_memory) takes the image for a private
	 * writable mapping and writes into it (a section header it
	 * decompresses): not into our read-only pages, but into a
	 * copy-on-write mapping of its own, guarded as ours is.
	 */
	map = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return NULL;
	e->lmap = map;
	e->lguard = guard_add(map, e->size);
	e->libelf = elf_memory(map, e->size);
	if (e->libelf && elf_kind(e->libelf) != ELF_K_ELF) {
		elf_end(e->libelf);
		e->libelf = NULL;
	}
	return e->libelf;
}

int elfm_section_xz(const struct elfm *e, const Elf64_Shdr *sh, void **out,
		    size_t *len)
{
	uint64_t budget = elfm_decompress_budget(e);
	lzma_stream zs = LZMA_STREAM_INIT;
	const uint8_t *raw;
	size_t raw_len, cap = 0;
	uint8_t *buf = NULL;
	lzma_ret r;
	int err;

	*out = NULL;
	*len = 0;
	err = elfm_section_bytes(e, sh, &raw, &raw_len);
	if (err)
		return err;
	if (lzma_stream_decoder(&zs, ELFM_XZ_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	zs.next_in = raw;
	zs.avail_in = raw_len;
	do {
		if (zs.avail_out == 0) {
			/* xz has no size up front: grow by doubling (from
			 * 64 KiB), within the budget */
			size_t used = cap;

			if (cap >= budget) {
				budget_over(BUDGET_DECOMPRESSED);
				err = -EFBIG;
				break;
			}
			if (ARR_RESERVE(buf, cap,
					used ? used + 1 :
					       (budget < 65536 ? budget : 65536),
					budget)) {
				err = -ENOMEM;
				break;
			}
			zs.next_out = buf + used;
			zs.avail_out = cap - used;
		}
		r = lzma_code(&zs, LZMA_FINISH);
	} while (r == LZMA_OK);
	if (!err && r != LZMA_STREAM_END)
		err = r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR ? -ENOMEM :
									 -EINVAL;
	if (!err) {
		*len = zs.total_out;
		*out = buf;
		buf = NULL;
	}
	lzma_end(&zs);
	free(buf);
	return err;
}
