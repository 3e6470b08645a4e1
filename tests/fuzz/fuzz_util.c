// SPDX-License-Identifier: Apache-2.0
#include "fuzz.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "deltas.h"
#include "elfmap.h"

uint8_t fz_u8(struct fz_in *in)
{
	return in->off < in->len ? in->p[in->off++] : 0;
}

uint32_t fz_u32(struct fz_in *in)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v |= (uint32_t)fz_u8(in) << (8 * i);
	return v;
}

uint64_t fz_u64(struct fz_in *in)
{
	uint64_t lo = fz_u32(in);

	return lo | (uint64_t)fz_u32(in) << 32;
}

const uint8_t *fz_bytes(struct fz_in *in, size_t n, size_t *got)
{
	const uint8_t *p = in->p + in->off;

	if (n > in->len - in->off)
		n = in->len - in->off;
	in->off += n;
	*got = n;
	return p;
}

const uint8_t *fz_rest(struct fz_in *in, size_t *len)
{
	return fz_bytes(in, in->len - in->off, len);
}

int fz_memfd(const void *data, size_t len)
{
	const uint8_t *p = data;
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	/* The parsers map files: a sealed one cannot shrink under them. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	return fd;
}

int fz_elf_rows_open(struct fz_elf_rows *r, const struct synth_sec *secs,
		     int n, uint16_t machine, uint64_t text_lo,
		     uint64_t text_hi)
{
	size_t len;

	memset(r, 0, sizeof(*r));
	r->img = synth_elf(secs, n, &len);
	if (!r->img)
		return -1;
	if (machine)
		((Elf64_Ehdr *)r->img)->e_machine = machine;
	if (elfm_open_mem(r->img, len, &r->e) != 0 ||
	    dt_builder_new(&r->b) != 0)
		return -1;
	dt_builder_set_text(r->b, text_lo, text_hi);
	return 0;
}

void fz_elf_rows_free(struct fz_elf_rows *r)
{
	dt_file_free(r->f);
	dt_builder_free(r->b);
	elfm_free(r->e);
	free(r->img);
}
