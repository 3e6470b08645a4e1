/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small test runner in the spirit of the BPF selftests: tests register
 * themselves, assertions report the expression and carry on to the end of
 * the test, subtests and skips with a reason, a name filter, and the last
 * line is "N passed, N failed" (skips follow).
 *
 *   TEST(folded_basic) { ASSERT_EQ(f(), 3, "three"); }
 *   TEST_ROOT(bpf_load) { ... }     skipped with a reason when not root
 */
#ifndef EP_TEST_H
#define EP_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
	bool needs_root;
	struct test_case *next;
};

void test_register(struct test_case *tc);
/* Mark the current test (or subtest) failed; prints where and why. */
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Skip the rest of the current test with a reason. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool test_skipped(void);
/* Subtests: if (test_start_subtest("pie")) { ... } */
bool test_start_subtest(const char *name);
/* Informational line attached to the current test (figures, ratios). */
void test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Environment the Makefile passes: EP_SRCDIR, EP_BIN, EP_WORKLOADS. */
const char *test_srcdir(void);
const char *test_bin(void);
const char *test_workloads(void);
/* The number of the first line of the source file rel (under
 * test_srcdir()) that holds marker, or 0. */
unsigned test_src_line(const char *rel, const char *marker);
/* A fresh temporary directory for the current test, removed at the end. */
const char *test_tmpdir(void);
/* "test_tmpdir()/name"; the string stays valid for the next 7 calls. */
const char *test_tmppath(const char *name);

/* The number of elements of the array a (the tables of cases). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define TEST_(fname, root)                                                     \
	static void test_##fname(void);                                        \
	static struct test_case tc_##fname = { #fname, test_##fname, root,     \
					       NULL };                         \
	__attribute__((constructor)) static void reg_##fname(void)             \
	{                                                                      \
		test_register(&tc_##fname);                                    \
	}                                                                      \
	static void test_##fname(void)
#define TEST(name) TEST_(name, false)
#define TEST_ROOT(name) TEST_(name, true)

#define ASSERT_TRUE(cond, what)                                                \
	({                                                                     \
		bool ok_ = (cond);                                             \
		if (!ok_)                                                      \
			test_fail(__FILE__, __LINE__, "%s: expected true: %s", \
				  what, #cond);                                \
		ok_;                                                           \
	})
#define ASSERT_FALSE(cond, what) ASSERT_TRUE(!(cond), what)

#define ASSERT_OP_(a, b, op, what)                                             \
	({                                                                     \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		bool ok_ = a_ op b_;                                           \
		if (!ok_)                                                      \
			test_fail(__FILE__, __LINE__,                          \
				  "%s: %s = %lld, expected " #op " %lld", what,  \
				  #a, a_, b_);                                 \
		ok_;                                                           \
	})
#define ASSERT_EQ(a, b, what) ASSERT_OP_(a, b, ==, what)
#define ASSERT_NEQ(a, b, what) ASSERT_OP_(a, b, !=, what)
#define ASSERT_LT(a, b, what) ASSERT_OP_(a, b, <, what)
#define ASSERT_LE(a, b, what) ASSERT_OP_(a, b, <=, what)
#define ASSERT_GT(a, b, what) ASSERT_OP_(a, b, >, what)
#define ASSERT_GE(a, b, what) ASSERT_OP_(a, b, >=, what)
#define ASSERT_OK(err, what) ASSERT_OP_(err, 0, ==, what)

#define ASSERT_NEAR(a, b, tol, what)                                           \
	({                                                                     \
		double a_ = (a), b_ = (b), d_ = a_ - b_;                       \
		bool ok_ = (d_ < 0 ? -d_ : d_) <= (tol);                       \
		if (!ok_)                                                      \
			test_fail(__FILE__, __LINE__,                          \
				  "%s: %s = %.3f, expected %.3f +- %.3f", what,  \
				  #a, a_, b_, (double)(tol));                  \
		ok_;                                                           \
	})

#define ASSERT_STREQ(a, b, what)                                               \
	({                                                                     \
		const char *a_ = (a), *b_ = (b);                               \
		bool ok_ = a_ && b_ && strcmp(a_, b_) == 0;                    \
		if (!ok_)                                                      \
			test_fail(__FILE__, __LINE__,                          \
				  "%s: %s = \"%s\", expected \"%s\"", what, #a,  \
				  a_ ? a_ : "(null)", b_ ? b_ : "(null)");     \
		ok_;                                                           \
	})

#define ASSERT_NOT_NULL(p, what) ASSERT_TRUE((p) != NULL, what)

/* A string an output must hold and what it shows: one row of a table
 * that ASSERT_CONTAINS checks, so a test keeps its needles together. */
struct test_needle {
	const char *needle;
	const char *what;
};

/* Fails at file:line for each needle hay (NULL: holds none) lacks;
 * true when it holds them all. */
bool test_contains(const char *file, int line, const char *hay,
		   const struct test_needle *n, size_t count);
#define ASSERT_CONTAINS(hay, needles)                                          \
	test_contains(__FILE__, __LINE__, hay, needles, ARRAY_SIZE(needles))

#endif
