// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#define METRIC_NAME_(name, desc) [METRIC_##name] = #name,
#define METRIC_HELP_(name, desc) [METRIC_##name] = desc,
static const char *const names[METRIC_COUNT] = { METRICS_LIST(METRIC_NAME_) };
static const char *const help[METRIC_COUNT] = { METRICS_LIST(METRIC_HELP_) };

const char *metric_name(unsigned id)
{
	return id < METRIC_COUNT ? names[id] : "?";
}

const char *metric_help(unsigned id)
{
	return id < METRIC_COUNT ? help[id] : "?";
}
