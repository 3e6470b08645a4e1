// SPDX-License-Identifier: Apache-2.0
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static enum log_level level = LOG_WARN;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level lvl)
{
	level = lvl;
}

enum log_level log_get_level(void)
{
	return level;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	va_list ap;

	if (lvl > level)
		return;
	pthread_mutex_lock(&lock);
	fprintf(stderr, "ebpf-profiler: %s: ", names[lvl]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&lock);
}
