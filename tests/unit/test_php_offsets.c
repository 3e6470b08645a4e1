// SPDX-License-Identifier: Apache-2.0
/*
 * PHP's offset table (interp_php.c) against the header oracle: what the
 * compiler laid out with each version's own headers, as Debian's
 * phpX.Y-dev packages install them (tests/tools/php_offsets.txt: 7.4, 8.2
 * and 8.4), and the constants the walk rests on; the store's verdicts
 * of older builds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exemgr.h"
#include "interp.h"
#include "interp_php.h"
#include "offsets_oracle.h"
#include "php.h"
#include "store.h"
#include "test.h"

static bool check_row(const struct oracle_row *r)
{
	const struct oracle_const common[] = {
		{ "zts", 0 },
		{ "ed_opline", PHP_ED_OPLINE },
		{ "ed_func", PHP_ED_FUNC },
		{ "ed_type_info", PHP_ED_TYPE_INFO },
		{ "ed_prev", PHP_ED_PREV },
		{ "op_lineno", PHP_OP_LINENO },
		{ "fn_type", PHP_FN_TYPE },
		{ "fn_name", PHP_FN_NAME },
		{ "fn_scope", PHP_FN_SCOPE },
		{ "ce_name", PHP_CE_NAME },
		{ "str_len", PHP_STR_LEN },
		{ "str_val", PHP_STR_VAL },
		{ "ZEND_CALL_TOP", PHP_CALL_TOP },
		{ "ZEND_INTERNAL_FUNCTION", PHP_INTERNAL_FUNCTION },
		{ "ZEND_USER_FUNCTION", PHP_USER_FUNCTION },
		{ "ZEND_EVAL_CODE", PHP_EVAL_CODE },
		{ "ZEND_VM_KIND_HYBRID", PHP_VM_KIND_HYBRID },
	};
	const struct php_layout *l;
	unsigned major, minor;
	char what[96];

	snprintf(what, sizeof(what), "php %s %s %s", r->version, r->build,
		 r->name);
	if (!ASSERT_EQ(sscanf(r->version, "%u.%u", &major, &minor), 2, what) ||
	    !ASSERT_NOT_NULL(l = php_layout_of(major, minor), what))
		return false;
	if (strcmp(r->name, "major") == 0)
		return ASSERT_EQ(r->value, major, what);
	if (strcmp(r->name, "minor") == 0)
		return ASSERT_EQ(r->value, minor, what);
	if (strcmp(r->name, "op_filename") == 0)
		return ASSERT_EQ(l->filename, r->value, what);
	if (strcmp(r->name, "op_line_start") == 0)
		return ASSERT_EQ(l->line_start, r->value, what);
	if (strcmp(r->name, "eg_current") == 0)
		return ASSERT_EQ(l->current_off, r->value, what);
	if (strcmp(r->name, "eg_size") == 0)
		return ASSERT_EQ(l->eg_size, r->value, what);
	/* bpf/php.h reads the fields of a zend_execute_data at once */
	if (strcmp(r->name, "ed_prev") == 0 && !ASSERT_LE(r->value + 8, PHP_ED_READ, what))
		return false;
	return oracle_check_const(r, common, sizeof(common) / sizeof(common[0]),
				  what);
}

TEST(php_offsets_vs_headers)
{
	static const char *const checked[] = { "7.4", "8.2", "8.4" };
	struct oracle_row *rows;
	size_t n, i, j, ok = 0, seen;

	rows = oracle_load("php", &n);
	if (!ASSERT_NOT_NULL(rows, "tests/tools/php_offsets.txt"))
		return;
	for (i = 0; i < n; i++)
		ok += check_row(&rows[i]);
	for (j = 0; j < sizeof(checked) / sizeof(checked[0]); j++) {
		for (seen = 0, i = 0; i < n; i++)
			seen += strcmp(rows[i].version, checked[j]) == 0;
		ASSERT_EQ(seen, 23, checked[j]);
	}
	/* the versions covered, of which 8.0, 8.1 and 8.3 without headers
	 * here (no Debian release has them) */
	ASSERT_NOT_NULL(php_layout_of(8, 0), "8.0");
	ASSERT_NOT_NULL(php_layout_of(8, 1), "8.1");
	ASSERT_NOT_NULL(php_layout_of(8, 3), "8.3");
	ASSERT_TRUE(!php_layout_of(7, 3), "7.3: not covered");
	ASSERT_TRUE(!php_layout_of(8, 5), "8.5: not covered");
	test_note("%zu of %zu oracle values equal (PHP 7.4, 8.2, 8.4)", ok, n);
	ASSERT_EQ(ok, n, "every value");
	free(rows);
}

TEST(php_offsets_regenerated)
{
	oracle_regenerate("php", "EP_PHP_INCLUDES",
			  "the include directories of php7.4-dev, php8.2-dev "
			  "and php8.4-dev, see tests/tools/interp_offsets.sh");
}

/*
 * A version added since the store said "not supported": a verdict kept by
 * an older build (an older record format, or the marks of before formats
 * and names were in them), or by a build whose registry gave PHP's kind
 * to another runtime, is not believed, the file is detected again; this
 * build's own verdict is.  With Debian's php8.2, which this build
 * supports.
 */
#define PHP82 "/usr/bin/php8.2"
TEST(php_unsupported_verdict_of_older_build_detected_again)
{
	const struct interp_module *m = interp_module(INTERP_PHP);
	const uint32_t old4 = 0x4e535550, /* "PUSN" */
		old8[2] = { 0x4e535550, m->record_format };
	struct interp_verdict own, older, other, own_not;
	const struct {
		const char *what;
		const void *mark;
		size_t len;
		unsigned files, unsupported;
	} cases[] = {
		{ "mark without format", &old4, sizeof(old4), 1, 0 },
		{ "mark without name", old8, sizeof(old8), 1, 0 },
		{ "empty record (not PHP, before names)", "", 0, 1, 0 },
		{ "older format", &older, sizeof(older), 1, 0 },
		{ "another runtime's verdict", &other, sizeof(other), 1, 0 },
		{ "this build's verdict", &own, sizeof(own), 0, 1 },
		{ "this build's not-PHP", &own_not, sizeof(own_not), 0, 0 },
	};
	struct store_opts o = { .no_sync = true };
	size_t i;

	interp_verdict(INTERP_PHP, -ENOTSUP, &own);
	interp_verdict(INTERP_PHP, -ENOENT, &own_not);
	older = own;
	older.format--;
	other = own;
	other.name ^= 1;

	if (access(PHP82, R_OK)) {
		test_skip("%s: %s (make deps installs php8.2-cli)", PHP82,
			  strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct exe_file f = { .path = (char *)PHP82, .fd = -1 };
		struct interp_stats st;
		struct interp_mgr *im;
		struct store *s;
		char dir[512];
		int fd;

		snprintf(dir, sizeof(dir), "%s/cache-%zu", test_tmpdir(), i);
		memset(f.id.b, 0x3c, sizeof(f.id.b));
		if (!ASSERT_OK(store_open(dir, &o, &s), "store"))
			return;
		ASSERT_OK(store_put(s, f.id.b, STORE_KIND_INTERP(INTERP_PHP),
				    cases[i].mark, cases[i].len),
			  cases[i].what);
		ASSERT_OK(interp_mgr_new(NULL, s, "php", &im), "manager");
		fd = open(PHP82, O_RDONLY | O_CLOEXEC);
		interp_detect(im, &f, fd);
		close(fd);
		interp_get_stats(im, INTERP_PHP, &st);
		ASSERT_EQ(st.files, cases[i].files, cases[i].what);
		ASSERT_EQ(st.files_unsupported, cases[i].unsupported,
			  cases[i].what);
		/* what detection found is the file's: this one is the test's */
		free(f.interp_data[INTERP_PHP]);
		interp_mgr_free(im);
		store_free(s);
	}
}
