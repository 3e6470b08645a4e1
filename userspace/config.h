/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: one declarative table of flags (config.c), read from the
 * command line (-flag or --flag, "-flag value" or "-flag=value"), from the
 * environment (EBPF_PROFILER_<FLAG>, dashes as underscores) and from a file
 * (-config FILE: "flag value" or "flag = value" lines, # comments).
 * Precedence: command line, then environment, then file, then defaults.
 */
#ifndef EP_CONFIG_H
#define EP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_MAX_LIST 64

struct config {
	/* sampling */
	int samples_per_second;
	uint64_t duration_ns; /* 0 = until SIGINT/SIGTERM */
	uint32_t pids[CONFIG_MAX_LIST];
	int n_pids;
	const char *cgroups[CONFIG_MAX_LIST];
	int n_cgroups;
	int probabilistic_threshold;	 /* 1..100 */
	uint64_t probabilistic_interval_ns;
	double off_cpu_threshold; /* 0..1, 0 = off */
	int off_cpu_max_threads;
	const char *tracers; /* "all", or a list: native and module names */
	int map_scale_factor;
	uint64_t max_delta_rows; /* 0 = the default, scaled */
	uint64_t ringbuf_bytes; /* 0 = sized from the rate */
	int max_frames;
	int rule_cache_entries;
	int map_cache_entries;
	bool fp_only; /* benchmark aid: frame pointers only, no stack deltas */
	/* a verified set of the programs pinned at exit for the next start */
	bool keep_programs;
	const char *keep_programs_dir;
	/* output */
	const char *output;
	uint64_t reporter_interval_ns;
	const char *collection_agent;
	bool disable_tls;
	bool send_error_frames;
	bool inline_frames;	/* native inline chains from DWARF */
	bool folded_lines;	/* folded/SVG: "func (file.c:line)" native frames */
	/* cache */
	const char *cache_dir;
	uint64_t cache_size;
	bool no_cache;
	/* operations */
	const char *metrics_address;
	const char *config_file;
	bool verbose;
	int bpf_log_level;
	bool version;
	bool help;
};

/* Fill defaults. */
void config_init(struct config *c);
/*
 * Parse argv (argv[0] is skipped), the environment and the -config file.
 * Returns 0, or -EINVAL after printing one clear line naming the flag.
 * Strings point into argv, the environment or memory owned by the config
 * module for the life of the process.
 */
int config_parse(struct config *c, int argc, char **argv);
/* Print the flags and their help to f. */
void config_usage(FILE *f);

/* "500ms", "10s", "2m30s", "1h", "250us", "100ns"; a bare number means
 * seconds.  Returns 0 or -EINVAL. */
int config_parse_duration(const char *s, uint64_t *ns);
/* "512", "64K", "1M", "2G" (powers of 1024, optional trailing B/iB). */
int config_parse_size(const char *s, uint64_t *bytes);

#endif
