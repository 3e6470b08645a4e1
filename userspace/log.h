/* SPDX-License-Identifier: Apache-2.0 */
/* Logging to stderr.  Never call these on a per-sample path: count. */
#ifndef EP_LOG_H
#define EP_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);
void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)                                                         \
	do {                                                                   \
		if (log_get_level() >= LOG_DEBUG)                              \
			log_msg(LOG_DEBUG, __VA_ARGS__);                       \
	} while (0)

/* Log a warning the first time a call site runs, then stay quiet. */
#define log_warn_once(...)                                                     \
	do {                                                                   \
		static bool done_;                                             \
		if (!__atomic_exchange_n(&done_, true, __ATOMIC_RELAXED))      \
			log_msg(LOG_WARN, __VA_ARGS__);                        \
	} while (0)

#endif
