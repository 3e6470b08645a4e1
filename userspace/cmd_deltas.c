// SPDX-License-Identifier: Apache-2.0
#include "cmd_deltas.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltas.h"
#include "elfaddr.h"
#include "procmgr.h"
#include "symbols.h"

/* The rule of the table t at ELF address a, as text. */
static const char *rule_at(const struct dt_file *t, uint64_t a, char *buf,
			   size_t len)
{
	int r = dt_file_lookup(t, a);

	return r < 0 ? "no row" : dt_rule_str(dt_file_rule(t, r), buf, len);
}

/* ebpf-profiler deltas -pid PID PC...: for pcs of a running process, the
 * file each is in, its ELF address there (the load bias the daemon would
 * write for the mapping, elfaddr.h), the symbol and the rule. */
static int deltas_pid(pid_t pid, int n, char **pcs)
{
	int i, fd, err, bad = 0;

	for (i = 0; i < n; i++) {
		uint64_t pc = strtoull(pcs[i], NULL, 0), bias, addr, off = 0;
		struct symb_table *syms = NULL;
		struct dt_file *t = NULL;
		const char *name = NULL;
		char path[4096], buf[128];

		err = pm_locate(pid, pc, &fd, path, sizeof(path), &bias);
		if (err) {
			printf("0x%" PRIx64 ": %s\n", pc,
			       err == -ENOENT ? "in no file mapping" : strerror(-err));
			bad++;
			continue;
		}
		addr = ea_elf_addr(bias, pc);
		if (symb_load_fd(fd, &syms) == 0)
			name = symb_lookup(syms, addr, &off);
		err = dt_extract_file(fd, path, &t);
		printf("0x%" PRIx64 ": %s 0x%" PRIx64 " (bias 0x%" PRIx64 ") %s+0x%" PRIx64
		       ": %s\n",
		       pc, path, addr, bias, name ? name : "?", off,
		       err ? strerror(-err) : rule_at(t, addr, buf, sizeof(buf)));
		dt_file_free(t);
		symb_free(syms);
		close(fd);
	}
	return bad ? 1 : 0;
}

/* ebpf-profiler deltas FILE [ADDR...]: the stack-delta table of a file,
 * or the rule at each address (a debugging aid; no root needed); with
 * -pid PID, the rule at pcs of a process (deltas_pid). */
int deltas_cmd_main(int argc, char **argv)
{
	struct dt_file *t = NULL;
	int fd, err, i;

	if (argc >= 4 && (!strcmp(argv[1], "-pid") || !strcmp(argv[1], "--pid")))
		return deltas_pid((pid_t)atoi(argv[2]), argc - 3, argv + 3);
	if (argc < 2) {
		fprintf(stderr, "usage: ebpf-profiler deltas FILE [ADDR...]\n"
				"       ebpf-profiler deltas -pid PID PC...\n");
		return 1;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ebpf-profiler: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = dt_extract_file(fd, argv[1], &t);
	close(fd);
	if (err) {
		fprintf(stderr, "ebpf-profiler: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	if (argc == 2) {
		dt_file_dump(stdout, t);
	} else {
		for (i = 2; i < argc; i++) {
			uint64_t a = strtoull(argv[i], NULL, 0);
			char buf[128];

			printf("0x%" PRIx64 ": %s\n", a, rule_at(t, a, buf, sizeof(buf)));
		}
	}
	dt_file_free(t);
	return 0;
}

