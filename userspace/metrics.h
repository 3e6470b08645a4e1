/* SPDX-License-Identifier: Apache-2.0 */
/* Names and help of the BPF per-CPU counters (enum metric_id). */
#ifndef EP_METRICS_H
#define EP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "profiler.h"
#include "metrics_http.h"

/* "ERR_NO_PAGE" style name, or "?" */
const char *metric_name(unsigned id);
const char *metric_help(unsigned id);
/* Whether id names a counter (an interpreter's range has free slots). */
bool metric_defined(unsigned id);

#endif
