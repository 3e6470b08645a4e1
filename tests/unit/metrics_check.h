/* SPDX-License-Identifier: Apache-2.0 */
/* What every metric of userspace/metrics_list.h must show: shared by the
 * unit test of the writers and the test that scrapes a running daemon. */
#ifndef EP_TEST_METRICS_CHECK_H
#define EP_TEST_METRICS_CHECK_H

#include <stddef.h>

/*
 * Every metric in the list has, in the Prometheus text prom, its HELP
 * line, its TYPE line with the list's type and at least one sample; and
 * in the summary line its key (key=... or key_...=...).  Returns how many
 * metrics were checked, or -1 with the first one missing in why.
 */
int metrics_check_all(const char *prom, const char *summary, char *why,
		      size_t len);

#endif
