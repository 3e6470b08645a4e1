/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `deltas` subcommand, a debugging aid (no root needed for a file):
 *
 *   ebpf-profiler deltas FILE            the stack-delta table of FILE
 *   ebpf-profiler deltas FILE ADDR...    the rule at each ELF address
 *   ebpf-profiler deltas -pid PID PC...  for pcs of a running process: the
 *                                        file, ELF address, symbol, rule
 */
#ifndef EP_CMD_DELTAS_H
#define EP_CMD_DELTAS_H

/* argv[0] is "deltas".  Returns the exit code. */
int deltas_cmd_main(int argc, char **argv);

#endif
