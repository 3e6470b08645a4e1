// SPDX-License-Identifier: Apache-2.0
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "arr.h"
#include "profiler.h"

enum opt_type {
	OPT_BOOL,
	OPT_INT,
	OPT_DOUBLE,
	OPT_DURATION,
	OPT_SIZE,
	OPT_STRING,
	OPT_PIDS,	/* repeatable, also comma-separated */
	OPT_STRLIST,	/* repeatable */
};

struct opt {
	const char *name;
	const char *alias;
	enum opt_type type;
	size_t off;
	long min, max; /* OPT_INT range */
	const char *help;
};

#define O(name, alias, type, field, min, max, help)                            \
	{ name, alias, type, offsetof(struct config, field), min, max, help }

/* The one table of flags.  Names follow the reference agent where it has
 * the same flag, so this binary can replace it. */
static const struct opt opts[] = {
	O("samples-per-second", NULL, OPT_INT, samples_per_second, 1, 10000,
	  "sampling frequency per CPU (Hz)"),
	O("duration", NULL, OPT_DURATION, duration_ns, 0, 0,
	  "stop after this long (500ms, 10s, 2m30s); default: until SIGINT/SIGTERM"),
	O("pid", NULL, OPT_PIDS, pids, 0, 0,
	  "profile only this process and its threads (repeatable)"),
	O("cgroup", NULL, OPT_STRLIST, cgroups, 0, 0,
	  "profile only this cgroup v2 and the cgroups below it: /sys/fs/cgroup/system.slice/x.service, or /system.slice/x.service as /proc/PID/cgroup shows it (repeatable)"),
	O("output", "o", OPT_STRING, output, 0, 0,
	  "write the profile to FILE; format from the extension: .folded, .pb.gz/.pprof, .svg, .otlp"),
	O("reporter-interval", NULL, OPT_DURATION, reporter_interval_ns, 0, 0,
	  "export every interval (OTLP, and rotated files in continuous mode)"),
	O("collection-agent", NULL, OPT_STRING, collection_agent, 0, 0,
	  "OTLP/gRPC receiver host:port (or set OTEL_EXPORTER_OTLP_ENDPOINT)"),
	O("disable-tls", NULL, OPT_BOOL, disable_tls, 0, 0,
	  "talk to the collection agent without TLS"),
	O("probabilistic-threshold", NULL, OPT_INT, probabilistic_threshold, 1, 100,
	  "percent chance that sampling is on in each probabilistic interval"),
	O("probabilistic-interval", NULL, OPT_DURATION, probabilistic_interval_ns, 0, 0,
	  "how often the probabilistic on/off decision is taken"),
	O("off-cpu-threshold", NULL, OPT_DOUBLE, off_cpu_threshold, 0, 1,
	  "off-CPU profiling: probability (0..1) that a context switch of a profiled thread is recorded, with the stack it left on and the ns until it ran again; 0: off"),
	O("off-cpu-max-threads", NULL, OPT_INT, off_cpu_max_threads, 16, 1 << 20,
	  "off-CPU: threads whose switch-out stack is kept until they run again (about 32 KiB each while kept); switches past it are counted and lost"),
	O("tracers", "t", OPT_STRING, tracers, 0, 0,
	  "unwinders to enable: all (the runtimes on by default), or a comma list of native and runtime names"),
	O("map-scale-factor", NULL, OPT_INT, map_scale_factor, 0, 8,
	  "each step doubles the BPF mapping, page and row maps"),
	O("max-delta-rows", NULL, OPT_SIZE, max_delta_rows, 0, 0,
	  "bound on the stack-delta rows in the BPF maps (4 bytes each, allocated in 1 MiB chunks as files need them; 256K..1G rows; default: 8M, doubled by -map-scale-factor)"),
	O("ringbuf-size", NULL, OPT_SIZE, ringbuf_bytes, 0, 0,
	  "trace ring buffer size (default: from the sampling rate)"),
	O("max-frames", NULL, OPT_INT, max_frames, 16, 1024,
	  "user frames kept per sample"),
	O("rule-cache-entries", NULL, OPT_INT, rule_cache_entries, 0, 1 << 20,
	  "per-CPU cache of recent stack-delta lookups, entries per CPU (64 bytes each; rounded up to a power of two; 0: off, and with it the trail of the last sample's rules, the runtimes' thread-state hint and the copies of the stack-delta pages' entries)"),
	O("map-cache-entries", NULL, OPT_INT, map_cache_entries, 0, 1 << 20,
	  "per-CPU cache of recent mapping lookups, entries per CPU (64 bytes each; rounded up to a power of two; 0: off)"),
	O("frame-pointers-only", NULL, OPT_BOOL, fp_only, 0, 0,
	  "walk native stacks by frame pointer only, without stack deltas (to compare; wrong stacks for code without frame pointers)"),
	O("send-error-frames", NULL, OPT_BOOL, send_error_frames, 0, 0,
	  "keep the frame that names an unwinding error in the output"),
	O("inline-frames", NULL, OPT_BOOL, inline_frames, 0, 0,
	  "name native frames from DWARF when the file has it: one frame per function inlined at the address, with file:line"),
	O("folded-lines", NULL, OPT_BOOL, folded_lines, 0, 0,
	  "folded and SVG: native frames named from DWARF as \"func (file.c:line)\" (default: function only, compact flame graphs; pprof and OTLP always carry lines)"),
	O("keep-programs", NULL, OPT_BOOL, keep_programs, 0, 0,
	  "at exit, load and verify a fresh set of the BPF programs and maps and pin it under -keep-programs-dir for the next start with the same flags, which then skips the verifier (a warm start in ~10 ms instead of ~30); remove it with rm -r on that directory"),
	O("keep-programs-dir", NULL, OPT_STRING, keep_programs_dir, 0, 0,
	  "where -keep-programs pins the set, on a BPF file system"),
	O("cache-dir", NULL, OPT_STRING, cache_dir, 0, 0,
	  "directory of the persistent stack-delta cache"),
	O("cache-size", NULL, OPT_SIZE, cache_size, 0, 0,
	  "size limit of the cache, kept in the directory (default: the recorded one, else 1G); least recently used records go first"),
	O("no-cache", NULL, OPT_BOOL, no_cache, 0, 0,
	  "do not use the persistent cache"),
	O("metrics-address", NULL, OPT_STRING, metrics_address, 0, 0,
	  "serve Prometheus metrics at HOST:PORT/metrics (a bare port binds to loopback)"),
	O("config", NULL, OPT_STRING, config_file, 0, 0,
	  "read flags from FILE (\"flag value\" per line)"),
	O("bpf-log-level", NULL, OPT_INT, bpf_log_level, 0, 7,
	  "verifier log shown when a program fails to load: 1, 2 (every instruction), 4 (statistics: time, states); with EBPF_PROFILER_DEBUG=1 -v, every load's"),
	O("verbose", "v", OPT_BOOL, verbose, 0, 0, "log more"),
	O("version", NULL, OPT_BOOL, version, 0, 0, "print the version and exit"),
	O("help", "h", OPT_BOOL, help, 0, 0, "print this help and exit"),
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->samples_per_second = 20;
	c->probabilistic_threshold = 100;
	c->probabilistic_interval_ns = 60ULL * 1000000000ULL;
	c->reporter_interval_ns = 5ULL * 1000000000ULL;
	c->tracers = "all";
	c->max_frames = 1024;
	c->off_cpu_max_threads = OFFCPU_THREADS_DEFAULT;
	c->rule_cache_entries = RULE_CACHE_DEFAULT;
	c->map_cache_entries = MAP_CACHE_DEFAULT;
	c->cache_dir = "/var/cache/ebpf-profiler";
	c->keep_programs_dir = "/sys/fs/bpf/ebpf-profiler";
	c->cache_size = 0; /* the limit the directory records, else 1 GiB */
}

int config_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = { { "ns", 1 },	{ "us", 1e3 },	{ "µs", 1e3 },
		      { "ms", 1e6 },	{ "s", 1e9 },	{ "m", 60e9 },
		      { "h", 3600e9 } };
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		double v = strtod(p, &end);
		size_t i, best = 0, best_len = 0;

		if (end == p || v < 0)
			return -EINVAL;
		p = end;
		if (!*p && p == s + strlen(s) && total == 0) {
			total = v * 1e9; /* a bare number: seconds */
			break;
		}
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].unit);
			if (strncmp(p, units[i].unit, n) == 0 && n > best_len) {
				best = i;
				best_len = n;
			}
		}
		if (!best_len)
			return -EINVAL;
		total += v * units[best].mul;
		p += best_len;
	}
	if (total > 1e19)
		return -EINVAL;
	*ns = (uint64_t)total;
	return 0;
}

int config_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	double v;
	uint64_t mul = 1;

	if (!s || !*s)
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K': mul = 1ULL << 10; end++; break;
	case 'M': mul = 1ULL << 20; end++; break;
	case 'G': mul = 1ULL << 30; end++; break;
	case 'T': mul = 1ULL << 40; end++; break;
	}
	if (*end == 'i')
		end++;
	if (toupper((unsigned char)*end) == 'B')
		end++;
	if (*end || v * mul > 1e18)
		return -EINVAL;
	*bytes = (uint64_t)(v * mul);
	return 0;
}

static const struct opt *find_opt(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < N_OPTS; i++) {
		if ((strlen(opts[i].name) == len &&
		     strncmp(opts[i].name, name, len) == 0) ||
		    (opts[i].alias && strlen(opts[i].alias) == len &&
		     strncmp(opts[i].alias, name, len) == 0))
			return &opts[i];
	}
	return NULL;
}

static bool parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") ||
	    !strcasecmp(v, "on")) {
		*out = true;
		return true;
	}
	if (!strcasecmp(v, "false") || !strcmp(v, "0") ||
	    !strcasecmp(v, "no") || !strcasecmp(v, "off")) {
		*out = false;
		return true;
	}
	return false;
}

/* Which options the command line set, so env and file do not override. */
static bool set_by_cli[N_OPTS];

static int set_value(struct config *c, const struct opt *o, const char *v,
		     const char *src)
{
	void *field = (char *)c + o->off;
	uint64_t u;
	char *end;
	long l;
	int err;

	switch (o->type) {
	case OPT_BOOL:
		if (!parse_bool(v, (bool *)field))
			goto bad;
		return 0;
	case OPT_INT:
		errno = 0;
		l = strtol(v, &end, 10);
		if (errno || end == v || *end || l < o->min || l > o->max)
			goto range;
		*(int *)field = (int)l;
		return 0;
	case OPT_DOUBLE:
		*(double *)field = strtod(v, &end);
		if (end == v || *end)
			goto bad;
		/* min == max: no range */
		if (o->min != o->max && (*(double *)field < o->min ||
					 *(double *)field > o->max))
			goto range;
		return 0;
	case OPT_DURATION:
		err = config_parse_duration(v, &u);
		if (err) {
			fprintf(stderr,
				"ebpf-profiler: %s: -%s: \"%s\" is not a duration (like 500ms, 10s, 2m30s)\n",
				src, o->name, v);
			return err;
		}
		*(uint64_t *)field = u;
		return 0;
	case OPT_SIZE:
		if (config_parse_size(v, &u))
			goto bad;
		*(uint64_t *)field = u;
		return 0;
	case OPT_STRING:
		*(const char **)field = v;
		return 0;
	case OPT_PIDS: {
		const char *p = v;

		while (*p) {
			errno = 0;
			l = strtol(p, &end, 10);
			if (errno || end == p || l <= 0 || l > INT_MAX ||
			    (*end && *end != ','))
				goto bad;
			if (c->n_pids >= CONFIG_MAX_LIST) {
				fprintf(stderr, "ebpf-profiler: -pid: at most %d\n",
					CONFIG_MAX_LIST);
				return -EINVAL;
			}
			c->pids[c->n_pids++] = (uint32_t)l;
			p = *end ? end + 1 : end;
		}
		return 0;
	}
	case OPT_STRLIST:
		if (c->n_cgroups >= CONFIG_MAX_LIST)
			goto bad;
		c->cgroups[c->n_cgroups++] = v;
		return 0;
	}
bad:
	fprintf(stderr, "ebpf-profiler: %s: -%s: bad value \"%s\"\n", src,
		o->name, v);
	return -EINVAL;
range:
	fprintf(stderr,
		"ebpf-profiler: %s: -%s: \"%s\" is not a number in %ld..%ld\n",
		src, o->name, v, o->min, o->max);
	return -EINVAL;
}

static int parse_cli(struct config *c, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		const struct opt *o;
		size_t len;
		int err;

		if (a[0] != '-' || !a[1]) {
			fprintf(stderr,
				"ebpf-profiler: unexpected argument \"%s\" (see -help)\n",
				a);
			return -EINVAL;
		}
		name = a + 1 + (a[1] == '-');
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = find_opt(name, len);
		if (!o) {
			fprintf(stderr,
				"ebpf-profiler: unknown flag \"%s\" (see -help)\n",
				a);
			return -EINVAL;
		}
		if (eq)
			val = eq + 1;
		else if (o->type == OPT_BOOL)
			val = "true";
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			fprintf(stderr, "ebpf-profiler: flag -%s needs a value\n",
				o->name);
			return -EINVAL;
		}
		err = set_value(c, o, val, "command line");
		if (err)
			return err;
		set_by_cli[o - opts] = true;
	}
	return 0;
}

static int parse_env(struct config *c)
{
	size_t i, j;

	for (i = 0; i < N_OPTS; i++) {
		char name[64] = "EBPF_PROFILER_";
		size_t n = strlen(name);
		const char *v;
		int err;

		if (set_by_cli[i])
			continue;
		for (j = 0; opts[i].name[j] && n < sizeof(name) - 1; j++)
			name[n++] = opts[i].name[j] == '-' ?
					    '_' :
					    toupper((unsigned char)opts[i].name[j]);
		name[n] = 0;
		v = getenv(name);
		if (!v)
			continue;
		err = set_value(c, &opts[i], v, name);
		if (err)
			return err;
		set_by_cli[i] = true; /* env beats the file */
	}
	return 0;
}

/* Values read from a -config file, which the config points at for the
 * life of the process (kept reachable here). */
static char **file_values;
static size_t n_file_values, cap_file_values;

/* A copy of v that lives as long as the process, or NULL. */
static const char *keep_value(const char *v)
{
	char *copy;

	if (ARR_PUSH(file_values, n_file_values, cap_file_values,
		     ARR_NO_LIMIT))
		return NULL;
	copy = strdup(v);
	if (copy)
		file_values[n_file_values++] = copy;
	return copy;
}

static int parse_file(struct config *c, const char *path)
{
	char line[4096];
	int lineno = 0, err = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "ebpf-profiler: -config %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *name, *val, *end, src[64];
		const struct opt *o;
		const char *kept;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		end = p + strlen(p);
		while (end > p && isspace((unsigned char)end[-1]))
			*--end = 0;
		name = p;
		while (*name == '-')
			name++;
		val = name + strcspn(name, " \t=");
		if (*val) {
			*val++ = 0;
			val += strspn(val, " \t=");
		}
		snprintf(src, sizeof(src), "%s:%d", path, lineno);
		o = find_opt(name, strlen(name));
		if (!o) {
			fprintf(stderr, "ebpf-profiler: %s: unknown flag \"%s\"\n",
				src, name);
			err = -EINVAL;
			break;
		}
		if (set_by_cli[o - opts])
			continue;
		if (!*val && o->type == OPT_BOOL)
			val = "true";
		/* the value must outlive the buffer */
		kept = keep_value(val);
		err = kept ? set_value(c, o, kept, src) : -ENOMEM;
		if (err)
			break;
	}
	fclose(f);
	return err;
}

int config_parse(struct config *c, int argc, char **argv)
{
	int err;

	memset(set_by_cli, 0, sizeof(set_by_cli));
	err = parse_cli(c, argc, argv);
	if (!err)
		err = parse_env(c);
	if (!err && c->config_file)
		err = parse_file(c, c->config_file);
	if (!err && c->probabilistic_interval_ns == 0) {
		fprintf(stderr, "ebpf-profiler: -probabilistic-interval must be longer than 0\n");
		err = -EINVAL;
	}
	if (!err && c->max_delta_rows > DELTA_ROWS_MAX) {
		fprintf(stderr, "ebpf-profiler: -max-delta-rows: at most %u (1G)\n",
			DELTA_ROWS_MAX);
		err = -EINVAL;
	}
	return err;
}

void config_usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: ebpf-profiler [flags]            profile the whole machine (or -pid)\n"
		"       ebpf-profiler cache warm|stats|verify|clear [-cache-dir DIR] [PATH...]\n"
		"       ebpf-profiler deltas FILE [ADDR...]   the unwind rules of a file (debugging)\n\n"
		"Flags take one dash or two; values as \"-flag value\" or \"-flag=value\".\n"
		"Every flag can also be set as EBPF_PROFILER_<FLAG> or in a -config file.\n\n");
	for (i = 0; i < N_OPTS; i++) {
		char name[48];

		snprintf(name, sizeof(name), "-%s%s%s", opts[i].name,
			 opts[i].alias ? ", -" : "",
			 opts[i].alias ? opts[i].alias : "");
		fprintf(f, "  %-28s %s\n", name, opts[i].help);
	}
	fprintf(f,
		"\nOTLP export also honours OTEL_EXPORTER_OTLP_ENDPOINT, _PROTOCOL, _HEADERS,\n"
		"_TIMEOUT, _COMPRESSION and _INSECURE.\n");
}
