// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#include "interp.h"

#define METRIC_NAME_(name, desc) [METRIC_##name] = #name,
#define METRIC_HELP_(name, desc) [METRIC_##name] = desc,
static const char *const names[METRIC_CORE_COUNT] = { METRICS_LIST(METRIC_NAME_) };
static const char *const help[METRIC_CORE_COUNT] = { METRICS_LIST(METRIC_HELP_) };

/* The core counters here, the interpreters' from their modules. */
const char *metric_name(unsigned id)
{
	const char *n = id < METRIC_CORE_COUNT ? names[id] :
						 interp_metric_name(id);

	return n ? n : "?";
}

bool metric_defined(unsigned id)
{
	return id < METRIC_CORE_COUNT || interp_metric_name(id) != NULL;
}

const char *metric_help(unsigned id)
{
	const char *n = id < METRIC_CORE_COUNT ? help[id] :
						 interp_metric_help(id);

	return n ? n : "?";
}
