// SPDX-License-Identifier: Apache-2.0
/*
 * PHP's offset table (interp_php.c) against the header oracle: what the
 * compiler laid out with each version's own headers, as Debian's
 * phpX.Y-dev packages install them (tests/tools/php_offsets.txt: 7.4, 8.2
 * and 8.4), and the constants the walk rests on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp_php.h"
#include "offsets_oracle.h"
#include "php.h"
#include "test.h"

static bool check_row(const struct oracle_row *r)
{
	const struct {
		const char *name;
		unsigned long value;
	} common[] = {
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
	struct php_layout_info l;
	unsigned major, minor;
	char what[96];
	size_t i;

	snprintf(what, sizeof(what), "php %s %s %s", r->version, r->build,
		 r->name);
	if (!ASSERT_EQ(sscanf(r->version, "%u.%u", &major, &minor), 2, what) ||
	    !ASSERT_OK(php_layout_describe(major, minor, &l), what))
		return false;
	if (strcmp(r->name, "major") == 0)
		return ASSERT_EQ(r->value, major, what);
	if (strcmp(r->name, "minor") == 0)
		return ASSERT_EQ(r->value, minor, what);
	if (strcmp(r->name, "op_filename") == 0)
		return ASSERT_EQ(l.op_filename, r->value, what);
	if (strcmp(r->name, "op_line_start") == 0)
		return ASSERT_EQ(l.op_line_start, r->value, what);
	if (strcmp(r->name, "eg_current") == 0)
		return ASSERT_EQ(l.eg_current, r->value, what);
	if (strcmp(r->name, "eg_size") == 0)
		return ASSERT_EQ(l.eg_size, r->value, what);
	/* bpf/php.h reads the fields of a zend_execute_data at once */
	if (strcmp(r->name, "ed_prev") == 0 && !ASSERT_LE(r->value + 8, PHP_ED_READ, what))
		return false;
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (strcmp(r->name, common[i].name) == 0)
			return ASSERT_EQ(common[i].value, r->value, what);
	test_fail(__FILE__, __LINE__, "%s: a value no test reads", what);
	return false;
}

TEST(php_offsets_vs_headers)
{
	static const char *const checked[] = { "7.4", "8.2", "8.4" };
	struct php_layout_info l;
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
	ASSERT_OK(php_layout_describe(8, 0, &l), "8.0");
	ASSERT_OK(php_layout_describe(8, 1, &l), "8.1");
	ASSERT_OK(php_layout_describe(8, 3, &l), "8.3");
	ASSERT_EQ(php_layout_describe(7, 3, &l), -ENOENT, "7.3: not covered");
	ASSERT_EQ(php_layout_describe(8, 5, &l), -ENOENT, "8.5: not covered");
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
