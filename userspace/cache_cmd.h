/* SPDX-License-Identifier: Apache-2.0 */
/* ebpf-profiler cache warm|stats|verify|clear */
#ifndef EP_CACHE_CMD_H
#define EP_CACHE_CMD_H

/* argv[0] is "cache".  Returns the process exit code. */
int cache_cmd_main(int argc, char **argv);

#endif
