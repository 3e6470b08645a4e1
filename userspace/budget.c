// SPDX-License-Identifier: Apache-2.0
#include "budget.h"

static uint64_t counts[BUDGET_COUNT];

static const char *const names[BUDGET_COUNT] = {
	[BUDGET_CRC_SIZE] = "crc_size",
	[BUDGET_CRC_TIME] = "crc_time",
	[BUDGET_SPARSE] = "sparse",
	[BUDGET_DEBUG_PATH] = "debug_path",
	[BUDGET_DECOMPRESSED] = "decompressed",
	[BUDGET_SYMBOLS] = "symbols",
	[BUDGET_SYMBOL_BYTES] = "symbol_bytes",
	[BUDGET_INLINE] = "inline",
};

void budget_over(enum budget_reason r)
{
	if ((unsigned)r < BUDGET_COUNT)
		__atomic_add_fetch(&counts[r], 1, __ATOMIC_RELAXED);
}

uint64_t budget_count(enum budget_reason r)
{
	return (unsigned)r < BUDGET_COUNT
		       ? __atomic_load_n(&counts[r], __ATOMIC_RELAXED)
		       : 0;
}

uint64_t budget_total(void)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < BUDGET_COUNT; i++)
		t += budget_count(i);
	return t;
}

const char *budget_name(enum budget_reason r)
{
	return (unsigned)r < BUDGET_COUNT ? names[r] : "?";
}

uint64_t budget_real_size(const struct stat *st)
{
	uint64_t alloc = (uint64_t)st->st_blocks * 512;

	return alloc < (uint64_t)st->st_size ? alloc : (uint64_t)st->st_size;
}

/* Small files may sit inline in their inode (st_blocks 0 on some file
 * systems); only a file of some size is called sparse. */
#define SPARSE_MIN_SIZE (1 << 20)

int budget_is_sparse(const struct stat *st)
{
	return st->st_size >= SPARSE_MIN_SIZE &&
	       (uint64_t)st->st_blocks * 512 < (uint64_t)st->st_size / 4;
}
