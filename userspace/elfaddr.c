// SPDX-License-Identifier: Apache-2.0
#include "elfaddr.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

unsigned ea_segs_from_phdrs(const Elf64_Phdr *ph, unsigned n,
			    struct ea_seg *out, unsigned max)
{
	unsigned pass, i, k = 0;

	/* pass 0 the executable segments, pass 1 the others */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && k < max; i++) {
			bool exec = ph[i].p_flags & PF_X;

			if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz ||
			    exec != (pass == 0))
				continue;
			out[k++] = (struct ea_seg){ .vaddr = ph[i].p_vaddr,
						    .offset = ph[i].p_offset,
						    .filesz = ph[i].p_filesz,
						    .flags = ph[i].p_flags };
		}
	return k;
}

uint32_t ea_prot(const char *perms)
{
	uint32_t prot = 0;

	if (perms[0] == 'r')
		prot |= PF_R;
	if (perms[0] && perms[1] == 'w')
		prot |= PF_W;
	if (perms[0] && perms[1] && perms[2] == 'x')
		prot |= PF_X;
	return prot;
}

/* Does s hold the file offset of m, from the page where s starts (with
 * lld and mold that page also ends another segment)?  Then *bias is the
 * bias m has if it maps s, and *room how many bytes s has from m's
 * offset to the end of its last page. */
static bool holds(const struct ea_seg *s, const struct ea_map *m,
		  uint64_t *bias, uint64_t *room)
{
	uint64_t lo = s->offset & ~(EA_PAGE_SIZE - 1);
	uint64_t span = s->filesz + (s->offset - lo), end;

	if (span < s->filesz)
		span = UINT64_MAX; /* a hostile header: no wrap */
	if (m->offset < lo || m->offset - lo >= span)
		return false;
	end = lo + span;
	if (end < lo || end > UINT64_MAX - (EA_PAGE_SIZE - 1))
		*room = UINT64_MAX - m->offset;
	else
		*room = ((end + EA_PAGE_SIZE - 1) & ~(EA_PAGE_SIZE - 1)) - m->offset;
	*bias = m->start - m->offset - (s->vaddr - s->offset);
	return true;
}

/* How many of maps[0..n) map a segment of their own execute permission
 * with this bias. */
static unsigned support(const struct ea_seg *segs, unsigned nsegs,
			const struct ea_map *maps, unsigned n, uint64_t bias)
{
	uint64_t b, room;
	unsigned i, k, count = 0;

	for (k = 0; k < n; k++)
		for (i = 0; i < nsegs; i++)
			if ((segs[i].flags & PF_X) == (maps[k].prot & PF_X) &&
			    holds(&segs[i], &maps[k], &b, &room) && b == bias) {
				count++;
				break;
			}
	return count;
}

/* A candidate's rank: the fields compared in order, larger is better. */
struct rank {
	unsigned exec, fits, agree, write;
	uint64_t tight;
};

static bool better(const struct rank *a, const struct rank *b)
{
	if (a->exec != b->exec)
		return a->exec > b->exec;
	if (a->fits != b->fits)
		return a->fits > b->fits;
	if (a->agree != b->agree)
		return a->agree > b->agree;
	if (a->write != b->write)
		return a->write > b->write;
	return a->tight > b->tight;
}

int ea_bias(const struct ea_seg *segs, unsigned nsegs,
	    const struct ea_map *maps, unsigned nmaps, uint64_t *bias)
{
	const struct ea_map *m = &maps[0];
	uint64_t len = m->end > m->start ? m->end - m->start : 0;
	struct rank best = { 0 }, r;
	bool found = false;
	unsigned i;
	uint64_t b, room;

	*bias = m->start - m->offset;
	for (i = 0; i < nsegs; i++) {
		const struct ea_seg *s = &segs[i];

		if (!holds(s, m, &b, &room))
			continue;
		r = (struct rank){
			.exec = (s->flags & PF_X) == (m->prot & PF_X),
			.fits = len <= room,
			.write = (s->flags & PF_W) == (m->prot & PF_W),
			.tight = len <= room ? UINT64_MAX - (room - len) : 0,
		};
		r.agree = nmaps > 1 ? support(segs, nsegs, maps + 1, nmaps - 1, b) : 0;
		if (!found || better(&r, &best)) {
			best = r;
			*bias = b;
			found = true;
		}
	}
	return found ? 0 : -ENOENT;
}
