/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file cut short by its owner right after the daemon opened it, before
 * the daemon reads it.  The runner is linked with
 * -Wl,--wrap=elfm_open_fd, so every ELF file the daemon's code opens
 * passes through here.  Inert until a test arms it.
 */
#ifndef EP_TEST_FILE_CUT_H
#define EP_TEST_FILE_CUT_H

#include <stdbool.h>
#include <sys/types.h>

/* The next elfm_open_fd that succeeds on a writable fd truncates its file
 * to size bytes, then disarms; a size below 0 disarms (file_cut_done()
 * still says whether the last arming cut a file). */
void file_cut_after_open(off_t size);
/* Whether a file was cut since the last arming. */
bool file_cut_done(void);

#endif
