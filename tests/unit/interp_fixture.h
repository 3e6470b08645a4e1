/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runtime detection on a file, as the interpreter manager runs it, for
 * the unit tests that check a module's record against an oracle.
 */
#ifndef EP_INTERP_FIXTURE_H
#define EP_INTERP_FIXTURE_H

#include <stddef.h>

/* Detect runtime kind (INTERP_*) in the file at path, opened and closed
 * here.  Returns 0 with its record in *data (malloc'd; the caller frees
 * it, also after an error) and *len, detect's error, or -errno when the
 * file does not open. */
int fix_detect(unsigned kind, const char *path, void **data, size_t *len);

#endif
