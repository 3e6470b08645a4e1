// SPDX-License-Identifier: Apache-2.0
/* Config parsing, trie prefixes, /proc maps lines, kallsyms. */
#include "test.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "ksyms.h"
#include "procmgr.h"

TEST(config_durations_go_form)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = { { "500ms", 500000000ULL }, { "10s", 10000000000ULL },
		   { "2m30s", 150000000000ULL }, { "1h", 3600000000000ULL },
		   { "250us", 250000ULL }, { "1.5s", 1500000000ULL },
		   { "3", 3000000000ULL }, { "1m0.5s", 60500000000ULL } };
	const char *bad[] = { "", "s", "10x", "-1s", "5 parsecs", "1m30" };
	uint64_t ns;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ASSERT_OK(config_parse_duration(ok[i].s, &ns), ok[i].s);
		ASSERT_EQ(ns, ok[i].ns, ok[i].s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(config_parse_duration(bad[i], &ns), -EINVAL, bad[i]);
}

TEST(config_sizes)
{
	uint64_t b;

	ASSERT_OK(config_parse_size("64K", &b), "64K");
	ASSERT_EQ(b, 65536, "64K");
	ASSERT_OK(config_parse_size("2GiB", &b), "2GiB");
	ASSERT_EQ(b, 2ULL << 30, "2GiB");
	ASSERT_EQ(config_parse_size("12Q", &b), -EINVAL, "12Q");
}

TEST(config_flags_env_file_precedence)
{
	char path[512], *argv[] = { "ebpf-profiler", "--samples-per-second=99",
				    "-pid", "1,2", "-pid", "3", "-v",
				    "-config", path, NULL };
	struct config c;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cfg", test_tmpdir());
	f = fopen(path, "w");
	fprintf(f, "# comment\nsamples-per-second 7\nreporter-interval = 10s\n"
		   "-map-scale-factor 2\ndisable-tls\n");
	fclose(f);
	setenv("EBPF_PROFILER_MAP_SCALE_FACTOR", "3", 1);
	config_init(&c);
	ASSERT_OK(config_parse(&c, 9, argv), "parse");
	ASSERT_EQ(c.samples_per_second, 99, "command line beats the file");
	ASSERT_EQ(c.n_pids, 3, "repeatable, comma lists");
	ASSERT_EQ(c.pids[2], 3, "third pid");
	ASSERT_TRUE(c.verbose, "-v");
	ASSERT_EQ(c.reporter_interval_ns, 10000000000ULL, "from the file");
	ASSERT_EQ(c.map_scale_factor, 3, "environment beats the file");
	ASSERT_TRUE(c.disable_tls, "bare bool in the file");
	unsetenv("EBPF_PROFILER_MAP_SCALE_FACTOR");
}

TEST(config_rejects_bad_values)
{
	char *a1[] = { "p", "-samples-per-second", "0", NULL };
	char *a2[] = { "p", "-pid", "abc", NULL };
	char *a3[] = { "p", "-duration", NULL };
	struct config c;

	config_init(&c);
	ASSERT_EQ(config_parse(&c, 3, a1), -EINVAL, "rate 0");
	config_init(&c);
	ASSERT_EQ(config_parse(&c, 3, a2), -EINVAL, "pid abc");
	config_init(&c);
	ASSERT_EQ(config_parse(&c, 2, a3), -EINVAL, "missing value");
}

TEST(trie_prefixes_cover_exactly)
{
	static const uint64_t ranges[][2] = {
		{ 0x400000, 0x401000 }, { 0x7f0000001000, 0x7f00001a3000 },
		{ 0x1000, 0x2000 }, { 0x55d2c3e0b000, 0x55d2c3f6d000 },
	};
	uint64_t addrs[128];
	uint32_t lens[128];
	size_t r;

	for (r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		uint64_t next = ranges[r][0];
		int n = pm_range_prefixes(ranges[r][0], ranges[r][1], addrs, lens, 128), i;

		ASSERT_GT(n, 0, "prefixes");
		for (i = 0; i < n; i++) {
			uint64_t size = 1ULL << (64 - lens[i]);
			ASSERT_EQ(addrs[i], next, "contiguous");
			ASSERT_EQ(addrs[i] & (size - 1), 0, "aligned");
			next += size;
		}
		ASSERT_EQ(next, ranges[r][1], "ends at the end");
		ASSERT_LE(n, 2 * 52, "minimal cover is small");
	}
}

TEST(maps_line_parsing)
{
	char l1[] = "7f1c2a400000-7f1c2a428000 r-xp 00028000 fd:00 1234567   /usr/lib/x86_64-linux-gnu/libc.so.6\n";
	char l2[] = "7ffd5a3f1000-7ffd5a3f3000 r-xp 00000000 00:00 0                          [vdso]\n";
	char l3[] = "55d2c3e0b000-55d2c3f6d000 r-xp 00000000 08:01 42 /tmp/a file (deleted)\n";
	char l4[] = "garbage\n";
	char l5[] = "1000-2000 r 0 0:0 0 /x\n";
	uint64_t s, e, off, ino;
	dev_t dev;
	char perms[5], *path;

	ASSERT_OK(pm_parse_maps_line(l1, &s, &e, perms, &off, &dev, &ino, &path), "l1");
	ASSERT_EQ(s, 0x7f1c2a400000ULL, "start");
	ASSERT_EQ(off, 0x28000, "offset");
	ASSERT_EQ(ino, 1234567, "inode");
	ASSERT_EQ(major(dev), 0xfd, "device major");
	ASSERT_EQ(minor(dev), 0, "device minor");
	ASSERT_STREQ(perms, "r-xp", "perms");
	ASSERT_STREQ(path, "/usr/lib/x86_64-linux-gnu/libc.so.6", "path");
	ASSERT_OK(pm_parse_maps_line(l2, &s, &e, perms, &off, &dev, &ino, &path), "l2");
	ASSERT_STREQ(path, "[vdso]", "vdso");
	ASSERT_OK(pm_parse_maps_line(l3, &s, &e, perms, &off, &dev, &ino, &path), "l3");
	ASSERT_STREQ(path, "/tmp/a file (deleted)", "spaces kept");
	ASSERT_EQ(pm_parse_maps_line(l4, &s, &e, perms, &off, &dev, &ino, &path),
		  -EINVAL, "garbage");
	ASSERT_EQ(pm_parse_maps_line(l5, &s, &e, perms, &off, &dev, &ino, &path),
		  -EINVAL, "short permissions");
}

/* The executable mappings by PROCMAP_QUERY (6.11 on) against the text of
 * /proc/PID/maps: the same mappings, each field and path alike; among
 * them a deleted file with spaces in its name, mapped at an offset. */
TEST(maps_query_matches_text)
{
	char path[] = "/tmp/ep maps test XXXXXX";
	struct pm_maps q, t;
	struct pm_vma vq, vt;
	uint64_t first = 0;
	void *mem = MAP_FAILED;
	int fd, rq, rt, n = 0, deleted = 0;
	bool queried;

	fd = mkstemp(path);
	if (fd >= 0 && ftruncate(fd, 3 * 4096) == 0)
		mem = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			   2 * 4096);
	if (fd >= 0) {
		unlink(path);
		close(fd);
	}
	ASSERT_OK(pm_maps_open(&q, getpid(), false), "the maps, queried");
	ASSERT_OK(pm_maps_open(&t, getpid(), true), "the maps, as text");
	for (;;) {
		rq = pm_maps_next(&q, &vq);
		rt = pm_maps_next(&t, &vt);
		ASSERT_EQ(rq, rt, "both have a next mapping, or neither");
		if (rq <= 0)
			break;
		ASSERT_EQ(vq.start, vt.start, "start");
		if (!n)
			first = vq.start;
		ASSERT_EQ(vq.end, vt.end, "end");
		ASSERT_EQ(vq.offset, vt.offset, "offset");
		ASSERT_EQ(vq.ino, vt.ino, "inode");
		ASSERT_EQ(vq.dev, vt.dev, "device");
		ASSERT_STREQ(vq.perms, vt.perms, "permissions");
		ASSERT_STREQ(vq.path, vt.path, "path");
		ASSERT_EQ(vq.perms[2], 'x', "executable only");
		if (strstr(vq.path, "/tmp/ep maps test ") &&
		    strstr(vq.path, " (deleted)")) {
			deleted++;
			ASSERT_EQ(vq.offset, 2 * 4096, "the deleted file's offset");
			ASSERT_EQ(vq.end - vq.start, 4096, "its length");
		}
		n++;
	}
	queried = q.text == NULL;
	/* from the start again: the first mapping once more, both ways */
	ASSERT_OK(pm_maps_rewind(&q), "rewind the query");
	ASSERT_OK(pm_maps_rewind(&t), "rewind the text");
	ASSERT_EQ(pm_maps_next(&q, &vq), 1, "the first mapping, queried");
	ASSERT_EQ(pm_maps_next(&t, &vt), 1, "the first mapping, as text");
	ASSERT_EQ(vq.start, vt.start, "the first mapping again");
	ASSERT_EQ(vq.start, first, "the same as before the rewind");
	pm_maps_close(&q);
	pm_maps_close(&t);
	ASSERT_GE(n, 3, "the runner, libc and the loader at least");
	if (mem != MAP_FAILED) {
		ASSERT_EQ(deleted, 1, "the deleted file, named as the text names it");
		munmap(mem, 4096);
	} else {
		test_note("no executable mapping of a /tmp file (noexec?)");
	}
	test_note("%d executable mappings, %s", n,
		  queried ? "queried by PROCMAP_QUERY" :
			    "both from the text (no PROCMAP_QUERY: kernel before 6.11)");
}

/* Our own vDSO's image (what the daemon reads for every process' vDSO)
 * against the [vdso] line of /proc/self/maps: the same start and
 * length, an ELF header first. */
TEST(maps_vdso_image_matches_text)
{
	unsigned long lo = 0, hi = 0;
	const void *data = NULL;
	char line[512];
	size_t len = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	ASSERT_TRUE(f != NULL, "/proc/self/maps");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(f);
	if (!lo) {
		ASSERT_EQ(pm_vdso_image(&data, &len), -ENOENT, "no vDSO");
		return;
	}
	ASSERT_OK(pm_vdso_image(&data, &len), "the vDSO's image");
	ASSERT_EQ((uintptr_t)data, lo, "at the [vdso] line's start");
	ASSERT_EQ(len, hi - lo, "its length");
	ASSERT_EQ(memcmp(data, "\177ELF", 4), 0, "an ELF header");
}

TEST(ksyms_lookup_from_file)
{
	char path[512];
	struct ksyms *k;
	uint64_t off;
	const char *mod, *name;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms", test_tmpdir());
	f = fopen(path, "w");
	fprintf(f, "ffffffff81000000 T _stext\n"
		   "ffffffff81000100 t do_thing\n"
		   "ffffffff81000200 D some_data\n"
		   "ffffffffc0000000 t mod_func\t[mymod]\n");
	fclose(f);
	ASSERT_OK(ksyms_load(path, &k), "load");
	ASSERT_EQ(ksyms_count(k), 3, "text symbols only");
	name = ksyms_lookup(k, 0xffffffff81000150ULL, &off, &mod);
	ASSERT_STREQ(name, "do_thing", "inside do_thing");
	ASSERT_EQ(off, 0x50, "offset");
	name = ksyms_lookup(k, 0xffffffffc0000010ULL, &off, &mod);
	ASSERT_STREQ(name, "mod_func", "module symbol");
	ASSERT_STREQ(mod, "mymod", "module name");
	ASSERT_TRUE(ksyms_lookup(k, 0x1000, NULL, NULL) == NULL, "below all");
	ksyms_free(k);

	/* kptr_restrict: every address zero */
	f = fopen(path, "w");
	fprintf(f, "0000000000000000 T _stext\n");
	fclose(f);
	ASSERT_EQ(ksyms_load(path, &k), -EPERM, "zeroed addresses");
}

TEST(container_id_forms)
{
	static const char id[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const char *forms[] = {
		"0::/system.slice/docker-%s.scope\n",				 /* docker, systemd driver */
		"0::/docker/%s\n",						 /* docker, cgroupfs driver */
		"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-%s.scope\n",
		"0::/kubepods/burstable/pod0c9e/%s\n",			 /* containerd, cgroupfs */
		"0::/kubepods.slice/kubepods-pod1.slice/crio-%s.scope\n",	 /* cri-o */
		"0::/machine.slice/libpod-%s.scope/container\n",		 /* podman */
		"12:pids:/docker/%s\n11:cpu:/docker/%s\n",			 /* cgroup v1 */
	};
	char text[1024], out[65], *heap;
	size_t i;

#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(text, sizeof(text), forms[i], id, id);
		out[0] = 0;
		ASSERT_TRUE(pm_container_id(text, out), forms[i]);
		ASSERT_STREQ(out, id, forms[i]);
	}
	ASSERT_FALSE(pm_container_id("0::/user.slice/user-0.slice/session-3.scope\n", out),
		     "not a container");
	ASSERT_FALSE(pm_container_id("0::/\n", out), "root");
	/* 64 to 69 characters ending in .scope: the id would start before
	 * the element (found by fuzz_procfs) */
	snprintf(text, sizeof(text), "%.58s.scope", id);
	heap = strdup(text); /* nothing before it: AddressSanitizer sees */
	ASSERT_FALSE(pm_container_id(heap, out), "short .scope element");
	free(heap);
}
