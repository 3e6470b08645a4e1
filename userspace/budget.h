/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-file budgets: what one file may make the daemon read, hold or
 * spend before it is given up on.  A file that is over one degrades (no
 * names, no debug file, a section left out: frame pointers) instead of
 * stalling or bloating the daemon; each refusal is counted by reason,
 * process-wide, for the summary line and /metrics
 * (files_over_budget{reason=...}).
 *
 * The bounds themselves live next to the code they bound (ehframe.c,
 * symbols.c, elfmap.c); this only keeps the counts.
 */
#ifndef EP_BUDGET_H
#define EP_BUDGET_H

#include <stdint.h>
#include <sys/stat.h>

/* keep the names in budget.c in this order */
enum budget_reason {
	BUDGET_CRC_SIZE,	/* debug-link candidate too large to CRC */
	BUDGET_CRC_TIME,	/* its CRC ran past the deadline */
	BUDGET_SPARSE,		/* debug file with far fewer blocks than bytes */
	BUDGET_DEBUG_PATH,	/* debug candidate through a symlink, or outside */
	BUDGET_DECOMPRESSED,	/* compressed section over the file's budget */
	BUDGET_SYMBOLS,		/* more symbols than a file may keep */
	BUDGET_SYMBOL_BYTES,	/* more distinct name bytes than a file may keep */
	BUDGET_INLINE,		/* inline table over budget: functions only */
	BUDGET_COUNT,
};

/* Count one file over budget (thread-safe). */
void budget_over(enum budget_reason r);
uint64_t budget_count(enum budget_reason r);
/* All reasons summed. */
uint64_t budget_total(void);
/* "crc_size", "sparse", ... */
const char *budget_name(enum budget_reason r);

/* The bytes a file really holds on disk: st_size, or less when it is
 * sparse (holes read as zeros but cost the reader page cache and time
 * all the same, so budgets are set from this, not from st_size). */
uint64_t budget_real_size(const struct stat *st);
/* Whether the file is mostly holes: less than a quarter of its size
 * allocated (a real ELF or debug file has every block). */
int budget_is_sparse(const struct stat *st);

#endif
