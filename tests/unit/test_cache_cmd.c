// SPDX-License-Identifier: Apache-2.0
/*
 * `cache warm|stats|verify|clear` with a stand-in extractor (the real one
 * is tested with the parsers): the walk, the deduplication by inode and
 * by file id, negative results, failures, the summary, and exit codes.
 * Each command runs in a child process with stdout and stderr captured,
 * as a user would run it.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_cmd.h"
#include "fileid.h"
#include "store.h"

/* LeakSanitizer, when the build has it. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* The first 64 bytes of the file; nothing for names with "nocfi"; an
 * error for names with "bad". */
static int fake_extract(int fd, const char *path, void **buf, size_t *len)
{
	const char *base = strrchr(path, '/');

	*buf = NULL;
	*len = 0;
	base = base ? base + 1 : path;
	if (strstr(base, "bad"))
		return -ENOEXEC;
	if (strstr(base, "nocfi"))
		return 0;
	*buf = malloc(64);
	if (!*buf)
		return -ENOMEM;
	if (pread(fd, *buf, 64, 0) != 64) {
		free(*buf);
		*buf = NULL;
		return -EIO;
	}
	*len = 64;
	return 0;
}

static const struct cache_extractor fake = { fake_extract };

static char out[8192], err_out[8192];

static void slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* Run `cache ARGS` (split on spaces) in a child; out and err_out get what
 * it printed.  Returns its exit code. */
static int run(const char *args)
{
	char line[2048], *argv[32], *tok, *save = NULL, opath[600], epath[600];
	int argc = 0, status;
	pid_t pid;

	snprintf(line, sizeof(line), "cache %s", args);
	for (tok = strtok_r(line, " ", &save); tok && argc < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	snprintf(opath, sizeof(opath), "%s/out", test_tmpdir());
	snprintf(epath, sizeof(epath), "%s/err", test_tmpdir());
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		int rc;

		dup2(o, STDOUT_FILENO);
		dup2(e, STDERR_FILENO);
		rc = cache_cmd_run(argc, argv, &fake);
		/* _exit skips LeakSanitizer's own check at exit. */
		if (__lsan_do_recoverable_leak_check &&
		    __lsan_do_recoverable_leak_check())
			rc = 99;
		_exit(rc);
	}
	waitpid(pid, &status, 0);
	slurp(opath, out, sizeof(out));
	slurp(epath, err_out, sizeof(err_out));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The number after "name=" in out, or -1. */
static long long field(const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(out, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), o = open(to, O_WRONLY | O_CREAT, 0755);
	ssize_t n;

	while (in >= 0 && o >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(write(o, buf, (size_t)n), n, "copy");
	close(in);
	close(o);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ASSERT_EQ(write(fd, data, len), (ssize_t)len, path);
	close(fd);
}

/* A tree with 7 distinct regular files, 5 of them ELF (one a copy of
 * another, one without CFI, one that fails), a hard link, a fifo, and
 * symbolic links that must not be followed (one a loop). */
static void make_tree(void)
{
	static const char elf_junk[] = "\177ELF junk that is not a real ELF";

	mkdir(test_tmppath("tree"), 0755);
	mkdir(test_tmppath("tree/bin"), 0755);
	mkdir(test_tmppath("tree/lib"), 0755);
	mkdir(test_tmppath("tree/sub"), 0755);
	copy_file("/bin/ls", test_tmppath("tree/bin/ls"));
	copy_file("/bin/true", test_tmppath("tree/bin/true"));
	copy_file("/bin/ls", test_tmppath("tree/lib/ls.copy"));
	ASSERT_OK(link(test_tmppath("tree/bin/ls"), test_tmppath("tree/bin/ls.hard")),
		  "hard link");
	write_file(test_tmppath("tree/lib/nocfi.so"), elf_junk, sizeof(elf_junk));
	write_file(test_tmppath("tree/lib/bad.so"), elf_junk, sizeof(elf_junk) - 3);
	write_file(test_tmppath("tree/readme.txt"), "hello\n", 6);
	write_file(test_tmppath("tree/empty"), "", 0);
	ASSERT_OK(mkfifo(test_tmppath("tree/fifo"), 0600), "fifo");
	ASSERT_OK(symlink("/usr/lib", test_tmppath("tree/usrlib")), "symlink");
	ASSERT_OK(symlink("..", test_tmppath("tree/sub/loop")), "loop");
}

TEST(cache_warm_tree)
{
	char args[1024];
	struct store *s;
	struct file_id id;
	void *val;
	size_t len;
	uint8_t head[64];
	int fd;

	make_tree();
	snprintf(args, sizeof(args), "warm -cache-dir %s -j 3 %s",
		 test_tmppath("cache"), test_tmppath("tree"));
	ASSERT_EQ(run(args), 0, "warm");
	ASSERT_TRUE(strstr(out, "cache warm: files=") == out, "summary line");
	ASSERT_EQ(field("files"), 7, "files (hard link once)");
	ASSERT_EQ(field("elf"), 5, "elf");
	ASSERT_EQ(field("extracted"), 3, "extracted");
	ASSERT_EQ(field("nocfi"), 1, "nocfi");
	ASSERT_EQ(field("skipped"), 1, "skipped (the copy)");
	ASSERT_EQ(field("failed"), 1, "failed");
	ASSERT_EQ(field("bytes_stored"), 128, "bytes stored");
	ASSERT_GT(field("bytes_in"), 0, "bytes in");
	ASSERT_TRUE(strstr(out, " seconds=") && strstr(out, " files/s=") &&
			    strstr(out, " MB/s="),
		    "rates");
	ASSERT_TRUE(strstr(err_out, "\r") == NULL, "no progress bar off a tty");

	/* Again: everything cached; failures are tried again. */
	snprintf(args, sizeof(args), "warm --cache-dir %s -j1 %s",
		 test_tmppath("cache"), test_tmppath("tree"));
	ASSERT_EQ(run(args), 0, "warm again");
	ASSERT_EQ(field("extracted"), 0, "nothing extracted");
	ASSERT_EQ(field("skipped"), 4, "skipped");
	ASSERT_EQ(field("failed"), 1, "failed again");

	/* What the store holds is what the extractor made. */
	if (ASSERT_OK(store_open(test_tmppath("cache"), NULL, &s), "open")) {
		fd = open(test_tmppath("tree/bin/ls"), O_RDONLY);
		ASSERT_OK(fileid_from_fd(fd, &id), "file id");
		ASSERT_EQ(pread(fd, head, sizeof(head), 0), 64, "read");
		close(fd);
		if (ASSERT_OK(store_get(s, id.b, STORE_KIND_DELTAS, &val, &len),
			      "ls cached")) {
			ASSERT_EQ(len, 64, "length");
			ASSERT_TRUE(memcmp(val, head, 64) == 0, "bytes");
			free(val);
		}
		fd = open(test_tmppath("tree/lib/nocfi.so"), O_RDONLY);
		ASSERT_OK(fileid_from_fd(fd, &id), "file id");
		close(fd);
		ASSERT_OK(store_get(s, id.b, STORE_KIND_DELTAS, &val, &len),
			  "negative result cached");
		ASSERT_EQ(len, 0, "empty");
		store_free(s);
	}

	snprintf(args, sizeof(args), "stats -cache-dir %s", test_tmppath("cache"));
	ASSERT_EQ(run(args), 0, "stats");
	ASSERT_EQ(field("records"), 3, "records");
	ASSERT_EQ(field("payload_bytes"), 128, "payload bytes");
	ASSERT_EQ(field("limit"), 1 << 30, "default limit");
	ASSERT_TRUE(strstr(out, "kind deltas: records=3 bytes=128\n") != NULL,
		    "per kind");
	snprintf(args, sizeof(args), "verify -cache-dir %s", test_tmppath("cache"));
	ASSERT_EQ(run(args), 0, "verify");
	ASSERT_STREQ(out, "cache verify: checked=3 removed=0\n", "verify out");
	snprintf(args, sizeof(args), "clear -cache-dir %s", test_tmppath("cache"));
	ASSERT_EQ(run(args), 0, "clear");
	ASSERT_STREQ(out, "cache clear: removed=3\n", "clear out");
	snprintf(args, sizeof(args), "stats -cache-dir %s", test_tmppath("cache"));
	ASSERT_EQ(run(args), 0, "stats after clear");
	ASSERT_EQ(field("records"), 0, "records after clear");
}

TEST(cache_warm_files_and_size)
{
	char args[1024];

	make_tree();
	/* Single files, a symbolic link named on the command line (followed),
	 * and the size the directory keeps. */
	ASSERT_OK(symlink(test_tmppath("tree/bin/true"), test_tmppath("true.link")),
		  "symlink");
	snprintf(args, sizeof(args),
		 "warm %s -cache-size 2M -cache-dir %s %s %s",
		 test_tmppath("tree/bin/ls"), test_tmppath("cache"), test_tmppath("true.link"),
		 test_tmppath("tree/bin/ls.hard"));
	ASSERT_EQ(run(args), 0, "warm files");
	ASSERT_EQ(field("files"), 2, "files");
	ASSERT_EQ(field("extracted"), 2, "extracted");
	snprintf(args, sizeof(args), "stats -cache-dir %s", test_tmppath("cache"));
	ASSERT_EQ(run(args), 0, "stats");
	ASSERT_EQ(field("limit"), 2 << 20, "limit kept");
	ASSERT_EQ(field("records"), 2, "records");
}

TEST(cache_cmd_errors)
{
	char args[1024];

	ASSERT_EQ(run("bogus"), 1, "unknown action");
	ASSERT_TRUE(strstr(err_out, "unknown action 'bogus'") != NULL,
		    "says so");
	ASSERT_EQ(run(""), 1, "no action");
	snprintf(args, sizeof(args), "warm -cache-dir %s", test_tmppath("c"));
	ASSERT_EQ(run(args), 1, "warm without PATH");
	ASSERT_TRUE(strstr(err_out, "no PATH") != NULL, "says so");
	ASSERT_EQ(run("warm -cache-size 12Q /bin/ls"), 1, "bad size");
	ASSERT_TRUE(strstr(err_out, "-cache-size '12Q'") != NULL, "says so");
	ASSERT_EQ(run("warm -j 0 /bin/ls"), 1, "bad -j");
	ASSERT_EQ(run("warm -frobnicate /bin/ls"), 1, "unknown flag");
	ASSERT_TRUE(strstr(err_out, "-frobnicate") != NULL, "names it");
	snprintf(args, sizeof(args), "warm -cache-dir %s %s", test_tmppath("c"),
		 test_tmppath("missing"));
	ASSERT_EQ(run(args), 1, "missing PATH");
	ASSERT_TRUE(strstr(err_out, "No such file") != NULL, "says so");
	ASSERT_TRUE(strstr(out, "cache warm: files=0") != NULL,
		    "summary anyway");
	snprintf(args, sizeof(args), "stats -cache-dir %s", test_tmppath("none"));
	ASSERT_EQ(run(args), 1, "stats of no cache");
	ASSERT_TRUE(strstr(err_out, "no cache in") != NULL, "says so");
	ASSERT_EQ(access(test_tmppath("none"), F_OK), -1, "not created");
	snprintf(args, sizeof(args), "clear -cache-dir %s", test_tmppath("none"));
	ASSERT_EQ(run(args), 0, "clear of no cache");
	snprintf(args, sizeof(args), "stats -cache-dir %s extra",
		 test_tmppath("c"));
	ASSERT_EQ(run(args), 1, "stats takes no PATH");
	ASSERT_EQ(run("-help"), 1, "flag first");
	ASSERT_EQ(run("stats -help"), 0, "help");
	ASSERT_TRUE(strstr(out, "usage:") != NULL, "usage");
}
