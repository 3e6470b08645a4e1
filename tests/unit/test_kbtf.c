// SPDX-License-Identifier: Apache-2.0
/*
 * The cut-down kernel types (kbtf.c) against an independent oracle:
 * bpftool's "gen min_core_btf" on the same object and the running
 * kernel's BTF must keep the same structs, sizes and members at the same
 * offsets.  Also: what the minimizer does with a kernel that lacks a
 * member, with a malformed object, and what the key depends on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "kbtf.h"
#include "test.h"
#include "tracer.h"

#define VMLINUX "/sys/kernel/btf/vmlinux"

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t w;

	if (!f)
		return -1;
	w = fwrite(p, 1, n, f);
	return fclose(f) == 0 && w == n ? 0 : -1;
}

/* Every named struct/union of want is in got with the same size and the
 * same members (name, bit offset, bit size), no more, no fewer. */
static int same_structs(const struct btf *want, const struct btf *got,
			int *checked)
{
	uint32_t id, n = btf__type_cnt(want);

	*checked = 0;
	for (id = 1; id < n; id++) {
		const struct btf_type *w = btf__type_by_id(want, id), *g;
		const char *name = btf__name_by_offset(want, w->name_off);
		int gid, i, j;

		if (!btf_is_composite(w) || !name || !*name)
			continue;
		gid = btf__find_by_name_kind(got, name, btf_kind(w));
		if (gid < 0) {
			test_note("missing %s", name);
			return -1;
		}
		g = btf__type_by_id(got, gid);
		if (g->size != w->size || btf_vlen(g) != btf_vlen(w)) {
			test_note("%s: size %u/%u, members %u/%u", name, g->size,
				  w->size, btf_vlen(g), btf_vlen(w));
			return -1;
		}
		for (i = 0; i < btf_vlen(w); i++) {
			const char *mn = btf__name_by_offset(want, btf_members(w)[i].name_off);

			for (j = 0; j < btf_vlen(g); j++)
				if (!strcmp(mn, btf__name_by_offset(got, btf_members(g)[j].name_off)))
					break;
			if (j == btf_vlen(g) ||
			    btf_member_bit_offset(w, i) != btf_member_bit_offset(g, j) ||
			    btf_member_bitfield_size(w, i) != btf_member_bitfield_size(g, j)) {
				test_note("%s.%s differs or is missing", name, mn);
				return -1;
			}
		}
		(*checked)++;
	}
	return 0;
}

TEST(kbtf_matches_bpftool_min_core_btf)
{
	char obj_path[512], ours_path[512], theirs_path[512], cmd[2048];
	struct btf *kernel, *ours, *theirs;
	size_t olen, len;
	const void *obj = tracer_object(&olen);
	void *min = NULL;
	int checked = 0;

	if (access(VMLINUX, R_OK)) {
		test_skip("no " VMLINUX);
		return;
	}
	if (system("command -v bpftool >/dev/null 2>&1")) {
		test_skip("no bpftool");
		return;
	}
	snprintf(obj_path, sizeof(obj_path), "%s/profiler.bpf.o", test_tmpdir());
	snprintf(ours_path, sizeof(ours_path), "%s/ours.btf", test_tmpdir());
	snprintf(theirs_path, sizeof(theirs_path), "%s/bpftool.btf", test_tmpdir());
	ASSERT_EQ(write_file(obj_path, obj, olen), 0, "object written");
	snprintf(cmd, sizeof(cmd), "bpftool gen min_core_btf %s %s %s",
		 VMLINUX, theirs_path, obj_path);
	ASSERT_EQ(system(cmd), 0, "bpftool gen min_core_btf");

	kernel = btf__parse(VMLINUX, NULL);
	ASSERT_TRUE(kernel, "kernel BTF parsed");
	ASSERT_OK(kbtf_minimize(obj, olen, kernel, &min, &len), "minimize");
	btf__free(kernel);
	test_note("%d CO-RE relocations; %zu bytes of types (the kernel's: "
		  "5 MB or so)", kbtf_count_relos(obj, olen), len);
	ASSERT_GT(kbtf_count_relos(obj, olen), 0, "the object has relocations");
	ASSERT_LT(len, 4096, "cut down");
	ASSERT_EQ(write_file(ours_path, min, len), 0, "ours written");
	free(min);

	ours = btf__parse(ours_path, NULL);
	theirs = btf__parse(theirs_path, NULL);
	ASSERT_TRUE(ours && theirs, "both parse");
	ASSERT_OK(same_structs(theirs, ours, &checked), "bpftool's structs in ours");
	test_note("%d structs agree with bpftool", checked);
	ASSERT_GE(checked, 4, "task_struct, pt_regs, signal_struct, ...");
	ASSERT_OK(same_structs(ours, theirs, &checked), "ours in bpftool's");
	btf__free(ours);
	btf__free(theirs);
}

/* A kernel whose task_struct lacks what we read: -ENOENT, so the daemon
 * hands libbpf the whole BTF and lets it report the real problem. */
TEST(kbtf_missing_member_is_enoent)
{
	struct btf *k = btf__new_empty();
	size_t olen, len = 0;
	const void *obj = tracer_object(&olen);
	void *min = NULL;
	int u32;

	ASSERT_TRUE(k, "empty BTF");
	u32 = btf__add_int(k, "unsigned int", 4, 0);
	ASSERT_GT(u32, 0, "int");
	ASSERT_GT(btf__add_struct(k, "task_struct", 64), 0, "struct");
	ASSERT_OK(btf__add_field(k, "flags", u32, 0, 0), "flags");
	ASSERT_EQ(kbtf_minimize(obj, olen, k, &min, &len), -ENOENT, "-ENOENT");
	ASSERT_TRUE(min == NULL && len == 0, "nothing returned");
	btf__free(k);
}

TEST(kbtf_malformed_object_is_einval)
{
	static const char junk[64] = "\177ELF not really";
	struct btf *k = btf__new_empty();
	size_t olen, len;
	const void *obj = tracer_object(&olen);
	void *min = NULL;
	char *cut;
	size_t at;

	ASSERT_EQ(kbtf_minimize(junk, sizeof(junk), k, &min, &len), -EINVAL, "junk");
	ASSERT_EQ(kbtf_count_relos(junk, sizeof(junk)), -EINVAL, "junk relos");
	/* every truncation: an error, never a crash */
	cut = malloc(olen);
	ASSERT_TRUE(cut, "alloc");
	memcpy(cut, obj, olen);
	for (at = 0; at < olen; at += olen / 97 + 1) {
		int err = kbtf_minimize(cut, at, k, &min, &len);

		ASSERT_TRUE(err < 0, "truncated object refused");
		ASSERT_TRUE(min == NULL, "nothing returned");
	}
	free(cut);
	btf__free(k);
}

/* The key names the kernel and the object: stable, and another object
 * (another build of the daemon) gets another key. */
TEST(kbtf_key_names_kernel_and_object)
{
	struct file_id a, b, c;
	size_t olen;
	const void *obj = tracer_object(&olen);
	char *other;

	if (access(VMLINUX, R_OK)) {
		test_skip("no " VMLINUX);
		return;
	}
	ASSERT_OK(kbtf_key(obj, olen, &a), "key");
	ASSERT_OK(kbtf_key(obj, olen, &b), "key again");
	ASSERT_EQ(memcmp(a.b, b.b, 16), 0, "stable");
	other = malloc(olen);
	ASSERT_TRUE(other, "alloc");
	memcpy(other, obj, olen);
	other[olen - 1] ^= 1;
	ASSERT_OK(kbtf_key(other, olen, &c), "other key");
	ASSERT_NEQ(memcmp(a.b, c.b, 16), 0, "another object, another key");
	free(other);
}
