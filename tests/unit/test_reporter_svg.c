// SPDX-License-Identifier: Apache-2.0
/*
 * The SVG flame graph, checked by consumers we did not write: xmllint parses
 * it, headless Chromium renders it (a screenshot with many colours) and runs
 * its script (a view opened from the URL: zoom and search, read back from
 * the DOM Chromium dumps).
 */
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

#include "rep_fixture.h"
#include "reporter.h"

#define CHROMIUM "/usr/bin/chromium"

static void write_svg(const struct rep_batch *b, const char *title,
		      const char *name, char *path, size_t n, char **text)
{
	size_t len;

	*text = NULL;
	snprintf(path, n, "%s/%s", test_tmpdir(), name);
	if (!ASSERT_OK(rep_encode_svg(b, title, text, &len), "encode svg"))
		return;
	ASSERT_EQ(strlen(*text), len, "length");
	ASSERT_OK(fix_write_file(path, *text, len), "write svg");
}

static int xmllint(const char *path)
{
	char cmd[1024];

	if (access("/usr/bin/xmllint", X_OK))
		return -2;
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>&1", path);
	return fix_run(cmd, NULL, 0);
}

/* Run headless Chromium on url with extra arguments; stdout into out. */
static int chromium(const char *args, const char *url, char *out, size_t cap)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "timeout 120 " CHROMIUM " --headless --no-sandbox --disable-gpu "
		 "--disable-background-networking --disable-component-update "
		 "--disable-sync --no-first-run --user-data-dir=%s/chromium-%d "
		 "%s '%s' 2>/dev/null",
		 test_tmpdir(), (int)getpid(), args, url);
	return fix_run(cmd, out, cap);
}

TEST(reporter_svg_fixture)
{
	static const struct test_needle text[] = {
		{ "CPU &lt;&amp;&gt; &quot;test&quot;", "title escaped" },
		{ "<title>compute (10 samples, 50.00%)</title>",
		  "hover text: name, samples, percent" },
		{ "ksys_write_[k] (4 samples, 20.00%)", "kernel" },
		{ "&lt;module&gt; (main.py:10)", "python, escaped" },
		{ "class=\"f k1\"", "kernel frames have their class" },
	};
	char path[512], *svg = NULL, *out = malloc(1 << 20), args[700], url[600];
	int rc;

	write_svg(fix_batch(), "CPU <&> \"test\"", "fixture.svg", path, sizeof(path), &svg);
	if (!svg)
		goto out;
	ASSERT_TRUE(strstr(svg, "<title>CPU") == NULL, "no <title> for the graph title");
	ASSERT_CONTAINS(svg, text);
	ASSERT_TRUE(strstr(svg, "http://") == strstr(svg, "http://www.w3.org/2000/svg"),
		    "no external resource (only the namespace URI)");
	ASSERT_EQ(fix_count(svg, "http"), 1, "one URI: the namespace");
	ASSERT_EQ(fix_count(svg, "<g class=\"f "), 14, "frames: all + 3 threads + 10");

	rc = xmllint(path);
	if (rc == -2)
		test_note("xmllint not installed (libxml2-utils): not parsed");
	else
		ASSERT_EQ(rc, 0, "xmllint --noout");

	if (access(CHROMIUM, X_OK)) {
		test_skip("chromium not installed: not rendered");
		goto out;
	}
	if (test_start_subtest("screenshot")) {
		char png[600], cmd[1024];
		unsigned w = 0, h = 0, colours = 0;
		double covered = 0;

		snprintf(png, sizeof(png), "%s/fixture.png", test_tmpdir());
		snprintf(args, sizeof(args), "--screenshot=%s --window-size=1200,800", png);
		snprintf(url, sizeof(url), "file://%s", path);
		chromium(args, url, NULL, 0);
		snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/tests/unit/png_stats.py %s",
			 test_srcdir(), png);
		rc = fix_run(cmd, out, 4096);
		ASSERT_EQ(rc, 0, "png_stats");
		ASSERT_EQ(sscanf(out, "%ux%u colours=%u covered=%lf", &w, &h, &colours,
				 &covered), 4, out);
		test_note("screenshot %ux%u: %u colours, %.1f%% covered", w, h, colours,
			  covered);
		ASSERT_EQ(w, 1200, "width");
		ASSERT_GE(colours, 50, "many colours (frames, text)");
		ASSERT_GE(covered, 5.0, "frames cover the picture");
	}
	if (test_start_subtest("script_zoom_search")) {
		/* The widest "main" is app's (10 samples); search "comp" hits
		 * compute (10) only: 50% of 20 samples. */
		snprintf(url, sizeof(url), "file://%s#zoom=main&search=comp", path);
		rc = chromium("--dump-dom", url, out, 1 << 20);
		ASSERT_EQ(rc, 0, "chromium --dump-dom");
		ASSERT_TRUE(strstr(out, "Matched: 50.00% (10 of 20 samples)") != NULL,
			    "matched percent");
		ASSERT_EQ(fix_count(out, "class=\"f k0 match\""), 1, "one match highlighted");
		ASSERT_EQ(fix_count(out, "parent\""), 2, "all and app greyed below the zoom");
		/* app-writer, python3 and everything above them: hidden. */
		ASSERT_EQ(fix_count(out, " hide\""), 9, "frames outside the zoom hidden");
		ASSERT_TRUE(strstr(out, "id=\"reset\" class=\"btn\" x=\"10\" y=\"22\" style=\"\"") != NULL,
			    "reset button shown");
		/* compute now spans the width: its text is not truncated. */
		ASSERT_TRUE(strstr(out, "width=\"1180.00\"") != NULL, "zoomed to full width");
	}
out:
	free(svg);
	free(out);
}

/* Names with XML specials, invalid UTF-8, control characters and "]]>" in
 * a narrow frame: the file still parses, text is truncated with "…". */
TEST(reporter_svg_escaping)
{
	static const struct rep_location l[] = {
		{ FRAME_NATIVE, REP_NONE, 1, "a<b>&\"c\"'d ]]> \x01\xff\xc3(", NULL, 0 },
		{ FRAME_NATIVE, REP_NONE, 2,
		  "std::vector<std::basic_string<char>>::_M_realloc_insert_very_long_name", NULL, 0 },
		{ FRAME_INTERP(INTERP_PYTHON), REP_NONE, 3, "worker", NULL, 0 },
		{ FRAME_NATIVE, REP_NONE, 4, "wide", NULL, 0 },
		{ FRAME_NATIVE, REP_NONE, 5, "caf\xc3\xa9_\xe2\x82\xac", NULL, 0 },
	};
	static const struct test_needle text[] = {
		{ "a&lt;b&gt;&amp;&quot;c&quot;&apos;d ]]&gt; ?"
		  "\xef\xbf\xbd\xef\xbf\xbd(",
		  "specials escaped, control as '?', bad bytes as U+FFFD" },
		{ "<title>t&lt;1&gt; (40 samples, 28.37%)</title>", "thread name escaped" },
		{ "<title>t2 (1 sample, 0.71%)</title>", "singular" },
		/* 40 of 141 samples: 335 px, room for 46 characters. */
		{ ">std::vector&lt;std::basic_string&lt;char&gt;&gt;::_M_real\xe2\x80\xa6</text>",
		  "long name truncated with an ellipsis" },
		{ ">caf\xc3\xa9_\xe2\x82\xac</text>", "UTF-8 kept" },
		{ "class=\"f k2\"", "interpreted frames have their class" },
	};
	static const uint32_t s0[] = { 1, 0 }, s1[] = { 2 }, s2[] = { 4, 3 };
	static const struct rep_stack st[] = { { 2, s0 }, { 1, s1 }, { 2, s2 } };
	static const struct rep_process p[] = { { .pid = 1 } };
	static const struct rep_sample s[] = {
		{ .stack = 0, .thread_name = "t<1>", .count = 40 },
		{ .stack = 1, .thread_name = "t2", .count = 1 },
		{ .stack = 2, .thread_name = "t3", .count = 100 },
	};
	struct rep_batch b = {
		.n_locations = 5, .locations = l, .n_stacks = 3, .stacks = st,
		.n_processes = 1, .processes = p, .n_samples = 3, .samples = s,
	};
	char path[512], *svg = NULL;
	int rc;

	write_svg(&b, NULL, "escape.svg", path, sizeof(path), &svg);
	if (!svg)
		return;
	ASSERT_CONTAINS(svg, text);
	ASSERT_EQ(fix_count(svg, "]]>"), 1, "only the script's CDATA end");
	rc = xmllint(path);
	if (rc != -2)
		ASSERT_EQ(rc, 0, "xmllint --noout");
	free(svg);
}

TEST(reporter_svg_empty)
{
	struct rep_batch b = { 0 };
	char path[512], *svg = NULL;
	int rc;

	write_svg(&b, "empty", "empty.svg", path, sizeof(path), &svg);
	ASSERT_TRUE(svg && strstr(svg, "No samples"), "says so");
	rc = xmllint(path);
	if (rc != -2)
		ASSERT_EQ(rc, 0, "xmllint --noout");
	free(svg);
}
