// SPDX-License-Identifier: Apache-2.0
#include "synth_elf.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

uint8_t *synth_elf(const struct synth_sec *secs, int n, size_t *len)
{
	size_t names = 1 + sizeof(".shstrtab"), off, shoff, total;
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr *sh;
	uint8_t *img;
	char *strtab;
	int i;

	for (i = 0; i < n; i++)
		names += strlen(secs[i].name) + 1;
	/* header, section bytes (8-aligned), names, section headers */
	off = sizeof(eh);
	for (i = 0; i < n; i++)
		if (secs[i].type != SHT_NOBITS)
			off = ((off + 7) & ~(size_t)7) + secs[i].size;
	shoff = ((off + names + 7) & ~(size_t)7);
	total = shoff + (size_t)(n + 2) * sizeof(Elf64_Shdr);
	img = calloc(1, total);
	if (!img)
		return NULL;
	sh = (Elf64_Shdr *)(img + shoff);
	strtab = (char *)img + off;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = shoff;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)(n + 2);
	eh.e_shstrndx = (uint16_t)(n + 1);
	memcpy(img, &eh, sizeof(eh));

	off = sizeof(eh);
	names = 1;
	for (i = 0; i < n; i++) {
		Elf64_Shdr *s = &sh[i + 1];

		s->sh_name = (uint32_t)names;
		names += strlen(secs[i].name) + 1;
		strcpy(strtab + s->sh_name, secs[i].name);
		s->sh_type = secs[i].type;
		s->sh_flags = secs[i].flags;
		s->sh_addr = secs[i].addr;
		s->sh_size = secs[i].size;
		s->sh_link = secs[i].link;
		s->sh_entsize = secs[i].entsize;
		s->sh_addralign = 1;
		if (secs[i].type == SHT_NOBITS) {
			s->sh_offset = off;
			continue;
		}
		off = (off + 7) & ~(size_t)7;
		s->sh_offset = off;
		if (secs[i].size)
			memcpy(img + off, secs[i].data, secs[i].size);
		off += secs[i].size;
	}
	sh[n + 1].sh_name = (uint32_t)names;
	strcpy(strtab + names, ".shstrtab");
	sh[n + 1].sh_type = SHT_STRTAB;
	sh[n + 1].sh_offset = (uint64_t)(strtab - (char *)img);
	sh[n + 1].sh_size = names + sizeof(".shstrtab");
	*len = total;
	return img;
}

int synth_elf_fd(const struct synth_sec *secs, int n)
{
	size_t len;
	uint8_t *img = synth_elf(secs, n, &len);
	int fd = -1;

	if (img)
		fd = memfd_create("synth-elf", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, img, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	free(img);
	return fd;
}

uint8_t *synth_zlib_zeros(size_t zeros, size_t *len)
{
	const size_t chunk = 1 << 20;
	size_t cap = zeros / 500 + 4096, done;
	uint8_t *in = calloc(1, chunk), *sec = malloc(cap);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = zeros,
			  .ch_addralign = 8 };
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	if (!in || !sec || deflateInit(&zs, 9) != Z_OK) {
		free(in);
		free(sec);
		return NULL;
	}
	memcpy(sec, &ch, sizeof(ch));
	zs.next_out = sec + sizeof(ch);
	zs.avail_out = (uInt)(cap - sizeof(ch));
	for (done = 0; done < zeros; done += chunk) {
		size_t n = zeros - done < chunk ? zeros - done : chunk;

		zs.next_in = in;
		zs.avail_in = (uInt)n;
		deflate(&zs, done + n >= zeros ? Z_FINISH : Z_NO_FLUSH);
	}
	*len = sizeof(ch) + zs.total_out;
	deflateEnd(&zs);
	free(in);
	return sec;
}
