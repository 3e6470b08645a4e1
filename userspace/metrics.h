/* SPDX-License-Identifier: Apache-2.0 */
/* Names and help of the BPF per-CPU counters (enum metric_id). */
#ifndef EP_METRICS_H
#define EP_METRICS_H

#include <linux/types.h>

#include "profiler.h"

/* "ERR_NO_PAGE" style name, or "?" */
const char *metric_name(unsigned id);
const char *metric_help(unsigned id);

#endif
