// SPDX-License-Identifier: Apache-2.0
/*
 * The write lock: a mutex within the process, and across processes an
 * OFD lock on store.lock that a writer waits for with a timeout (LMDB's
 * own writer mutex has none).
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>

uint64_t st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- the cross-process write lock ---------------------------------------- */

/*
 * Byte 0 of store.lock is the write lock.  A process that waits for it
 * holds a shared lock on byte 1 meanwhile, and a process about to take
 * byte 0 that sees a waiter there naps first: without that, a process
 * that writes back to back (cache warm) takes the lock again microseconds
 * after it let it go, and a polling waiter (the daemon) starves.
 */
#define LOCK_BYTE_WRITE 0
#define LOCK_BYTE_WAITERS 1
#define LOCK_NAP_MS 2

int st_file_lock(int fd, short type, off_t byte)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = byte, .l_len = 1 };

	if (fcntl(fd, F_OFD_SETLK, &fl) < 0)
		return errno == EACCES ? -EAGAIN : -errno;
	return 0;
}

static bool others_waiting(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = LOCK_BYTE_WAITERS, .l_len = 1 };

	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* Take the write lock of this process and of the directory, waiting at
 * most timeout_ms (0: do not wait) for the directory's. */
int st_write_begin(struct store *s, unsigned timeout_ms)
{
	uint64_t deadline;
	bool waiting = false;
	int err;

	if (s->read_only)
		return -EROFS;
	if (timeout_ms) {
		pthread_mutex_lock(&s->write_lock);
	} else if (pthread_mutex_trylock(&s->write_lock)) {
		return -EBUSY;
	}
	deadline = st_now_ms() + timeout_ms;
	if (timeout_ms && others_waiting(s->lock_fd))
		sleep_ms(LOCK_NAP_MS); /* their turn first */
	while ((err = st_file_lock(s->lock_fd, F_WRLCK, LOCK_BYTE_WRITE)) ==
		       -EAGAIN ||
	       err == -EINTR) {
		if (st_now_ms() >= deadline) {
			err = -EBUSY;
			break;
		}
		if (!waiting)
			waiting = !st_file_lock(s->lock_fd, F_RDLCK,
						LOCK_BYTE_WAITERS);
		sleep_ms(1);
	}
	if (waiting)
		st_file_lock(s->lock_fd, F_UNLCK, LOCK_BYTE_WAITERS);
	if (err)
		pthread_mutex_unlock(&s->write_lock);
	return err;
}

void st_write_end(struct store *s)
{
	st_file_lock(s->lock_fd, F_UNLCK, LOCK_BYTE_WRITE);
	pthread_mutex_unlock(&s->write_lock);
}
