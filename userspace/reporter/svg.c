// SPDX-License-Identifier: Apache-2.0
/*
 * A self-contained interactive flame graph: one SVG file with inline CSS
 * and JavaScript, no external resources.  Root at the bottom ("all"), then
 * the thread's name, then frames as folded prints them (kernel above user).
 * Siblings are merged by name and sorted alphabetically, like flamegraph.pl,
 * so a batch always gives the same picture.  Frames narrower than
 * MIN_WIDTH pixels are left out, which bounds the file for huge profiles.
 *
 * In a browser: hover shows name, samples and percent; click zooms into a
 * frame (its ancestors stay, greyed, full width) and "Reset Zoom" undoes
 * it; "Search" (or Ctrl-F) highlights frames matching a regular expression
 * and shows the matched percent of all samples.  Text is truncated with an
 * ellipsis to its frame, recomputed on zoom; without JavaScript the
 * truncation done here still holds.  A link can open a view:
 * file.svg#zoom=NAME&search=REGEX.
 */
#include "rep_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arr.h"
#include "hashmap.h"

#define IMG_WIDTH 1200
#define PAD_X 10
#define FRAME_H 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59 /* average glyph width / font size, Verdana-like */
#define PAD_TOP 50	/* title, subtitle, buttons */
#define PAD_BOTTOM 34	/* details line */
#define MIN_WIDTH 0.1	/* pixels */

/* What a box is drawn as (its class k<n> and colour): a location's kind
 * (enum frame_kind, every interpreter alike), the synthetic root and the
 * thread frames. */
enum {
	KIND_NATIVE,
	KIND_KERNEL,
	KIND_INTERP,
	KIND_ERROR,
	KIND_ROOT,
	KIND_THREAD,
	KIND_ALL
};

static int svg_kind(unsigned frame_kind)
{
	switch (frame_kind) {
	case FRAME_KERNEL: return KIND_KERNEL;
	case FRAME_ERROR: return KIND_ERROR;
	default: return FRAME_IS_INTERP(frame_kind) ? KIND_INTERP : KIND_NATIVE;
	}
}

struct node {
	uint64_t count;
	uint32_t name; /* strtab index */
	uint32_t first_child, next_sibling; /* 0 = none (node 0 is the root) */
	uint8_t kind;
};

struct fg {
	const struct rep_batch *b;
	struct rep_strtab names;
	struct intern index; /* (parent, name, kind) -> node */
	struct node *nodes;
	size_t n, cap;
	uint32_t *sort_buf;
	struct rep_buf out;
	double scale; /* pixels per sample */
	uint32_t max_depth;
	bool kinds_seen[KIND_ALL];
};

struct node_key {
	uint32_t parent, name, kind;
};

static int64_t child(struct fg *g, uint32_t parent, const char *name, int kind)
{
	struct node_key k = { parent, (uint32_t)rep_strtab_add(&g->names, name),
			      (uint32_t)kind };
	bool added;
	int64_t id;

	if (g->names.err)
		return g->names.err;
	id = intern_add(&g->index, &k, sizeof(k), &added);
	if (id < 0 || !added)
		return id;
	if (ARR_RESERVE(g->nodes, g->cap, (size_t)id + 1, ARR_NO_LIMIT))
		return -ENOMEM;
	g->nodes[id] = (struct node){ .name = k.name, .kind = (uint8_t)kind };
	if (id) { /* node 0 is the root, nobody's child */
		g->nodes[id].next_sibling = g->nodes[parent].first_child;
		g->nodes[parent].first_child = (uint32_t)id;
	}
	g->n = (size_t)id + 1;
	return id;
}

static int build_tree(struct fg *g, const struct rep_names *names)
{
	const struct rep_batch *b = g->b;
	uint32_t *path = NULL, maxn = 0, i, j;
	int err = 0;

	if (child(g, 0, "all", KIND_ROOT) != 0)
		return -ENOMEM;
	for (i = 0; i < b->n_stacks; i++)
		if (b->stacks[i].n > maxn)
			maxn = b->stacks[i].n;
	path = calloc(maxn + 1, sizeof(*path));
	if (!path)
		return -ENOMEM;
	for (i = 0; i < b->n_samples && !err; i++) {
		const struct rep_sample *s = &b->samples[i];
		uint32_t n = rep_sample_path(b, s, path);
		int64_t cur;

		if (!s->count)
			continue;
		g->nodes[0].count += s->count;
		cur = child(g, 0, rep_thread_label(b, s), KIND_THREAD);
		for (j = 0; cur >= 0; j++) {
			g->nodes[cur].count += s->count;
			if (j == n)
				break;
			cur = child(g, (uint32_t)cur, names->loc[path[j]],
				    svg_kind(b->locations[path[j]].kind));
		}
		if (cur < 0)
			err = (int)cur;
	}
	free(path);
	return err;
}

/* ---- output ------------------------------------------------------------ */

/*
 * Append s as XML character data or attribute text: &<>"' escaped, control
 * characters as '?' and invalid UTF-8 as U+FFFD (batches are valid UTF-8
 * already; the title comes from the caller), so the file always parses.
 * At most max_chars characters; when s is longer, max_chars - 1 of them
 * and "…".
 */
static void xml_text(struct rep_buf *o, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0, total = 0, i, n;
	bool ok;

	for (i = 0; p[i]; total++)
		i += rep_utf8_next(p + i, &ok);
	for (; *p; chars++, p += n) {
		n = rep_utf8_next(p, &ok);
		if (total > max_chars && chars + 1 == max_chars) {
			rep_buf_puts(o, "\xe2\x80\xa6");
			return;
		}
		if (chars == max_chars)
			return;
		switch (*p) {
		case '&': rep_buf_puts(o, "&amp;"); break;
		case '<': rep_buf_puts(o, "&lt;"); break;
		case '>': rep_buf_puts(o, "&gt;"); break;
		case '"': rep_buf_puts(o, "&quot;"); break;
		case '\'': rep_buf_puts(o, "&apos;"); break;
		default:
			if (!ok)
				rep_buf_puts(o, REP_UTF8_REPLACEMENT);
			else if (*p < 0x20 || *p == 0x7f)
				rep_buf_add(o, "?", 1);
			else
				rep_buf_add(o, p, n);
		}
	}
}

/* A colour per kind, varied a little by name so neighbours differ and the
 * same function has the same colour everywhere. */
static void colour(int kind, const char *name, int rgb[3])
{
	/* base and range per channel: {r, dr, g, dg, b, db} */
	static const int pal[KIND_ALL][6] = {
		[KIND_NATIVE] = { 205, 50, 45, 75, 30, 30 },   /* red */
		[KIND_KERNEL] = { 235, 20, 150, 45, 20, 30 },  /* orange */
		[KIND_INTERP] = { 60, 60, 175, 55, 90, 60 },   /* green */
		[KIND_ERROR] = { 150, 30, 150, 30, 150, 30 },  /* grey */
		[KIND_ROOT] = { 190, 20, 190, 20, 205, 20 },	    /* lilac grey */
		[KIND_THREAD] = { 170, 40, 150, 30, 210, 40 },	    /* lilac */
	};
	uint32_t h = (uint32_t)hm_hash(name, strlen(name), 0);
	const int *p = pal[kind < KIND_ALL ? kind : KIND_NATIVE];
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0;

	rgb[0] = p[0] + (int)(p[1] * v1);
	rgb[1] = p[2] + (int)(p[3] * v2);
	rgb[2] = p[4] + (int)(p[5] * v2);
}

static const char *kind_label(int kind)
{
	switch (kind) {
	case KIND_NATIVE: return "native";
	case KIND_KERNEL: return "kernel";
	case KIND_INTERP: return "interpreted";
	case KIND_ERROR: return "error";
	case KIND_THREAD: return "thread";
	default: return "all";
	}
}

static double frame_y(const struct fg *g, uint32_t depth)
{
	return PAD_TOP + (double)(g->max_depth - depth) * FRAME_H;
}

static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct fg *g = arg;
	const struct node *x = &g->nodes[*(const uint32_t *)a];
	const struct node *y = &g->nodes[*(const uint32_t *)b];
	int c = strcmp(intern_key(&g->names.map, x->name, NULL),
		       intern_key(&g->names.map, y->name, NULL));

	return c ? c : (int)x->kind - (int)y->kind;
}

/* Children of id sorted by name, into g->sort_buf[at...]; returns how many. */
static uint32_t sorted_children(struct fg *g, uint32_t id, uint32_t at)
{
	uint32_t c, n = 0;

	for (c = g->nodes[id].first_child; c; c = g->nodes[c].next_sibling)
		g->sort_buf[at + n++] = c;
	qsort_r(g->sort_buf + at, n, sizeof(*g->sort_buf), cmp_nodes, g);
	return n;
}

/* Depth of the deepest frame wide enough to draw. */
static void measure(struct fg *g, uint32_t id, uint32_t depth)
{
	uint32_t c;

	if (g->nodes[id].count * g->scale < MIN_WIDTH)
		return;
	if (depth > g->max_depth)
		g->max_depth = depth;
	g->kinds_seen[g->nodes[id].kind] = true;
	for (c = g->nodes[id].first_child; c; c = g->nodes[c].next_sibling)
		measure(g, c, depth + 1);
}

/* sort_buf is used as a stack: each level sorts its children above the
 * parent's, at most one slot per node in all. */
static void emit(struct fg *g, uint32_t id, uint32_t depth, uint64_t x_samples,
		 uint32_t at)
{
	const struct node *nd = &g->nodes[id];
	const char *name = intern_key(&g->names.map, nd->name, NULL);
	double x = PAD_X + x_samples * g->scale, w = nd->count * g->scale;
	double pct = 100.0 * nd->count / g->nodes[0].count;
	uint32_t n, i;
	int rgb[3];
	size_t fit;

	if (w < MIN_WIDTH)
		return;
	colour(nd->kind, name, rgb);
	rep_buf_printf(&g->out, "<g class=\"f k%d\" data-s=\"%" PRIu64 "\"><title>",
		       nd->kind, nd->count);
	xml_text(&g->out, name, SIZE_MAX);
	rep_buf_printf(&g->out,
		       " (%" PRIu64 " sample%s, %.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" "
		       "width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>"
		       "<text x=\"%.2f\" y=\"%.1f\">",
		       nd->count, nd->count == 1 ? "" : "s", pct, x,
		       frame_y(g, depth), w, FRAME_H - 1, rgb[0], rgb[1], rgb[2],
		       x + 3, frame_y(g, depth) + FRAME_H - 4.5);
	fit = w > 6 ? (size_t)((w - 6) / (FONT_SIZE * FONT_WIDTH)) : 0;
	if (fit >= 3)
		xml_text(&g->out, name, fit);
	rep_buf_puts(&g->out, "</text></g>\n");

	n = sorted_children(g, id, at);
	for (i = 0; i < n; i++) {
		uint32_t c = g->sort_buf[at + i];

		emit(g, c, depth + 1, x_samples, at + n);
		x_samples += g->nodes[c].count;
	}
}

static const char svg_style[] =
	"<style>\n"
	"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { fill: #555; text-anchor: middle; }\n"
	".btn { cursor: pointer; fill: #0645ad; }\n"
	".btn:hover { text-decoration: underline; }\n"
	"#matched, #search { text-anchor: end; }\n"
	".f { cursor: pointer; }\n"
	".f text { pointer-events: none; }\n"
	".f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	".f.parent rect { opacity: 0.5; }\n"
	".f.hide { display: none; }\n"
	".f.match rect { fill: rgb(230,0,230); }\n"
	"</style>\n";

/* No "]]>" may appear in the script: it ends the CDATA section. */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"  'use strict';\n"
	"  var svg = document.documentElement, frames = [], zoomed = null, re = null;\n"
	"  var total = +svg.getAttribute('data-total') || 1;\n"
	"  var W = +svg.getAttribute('width'), PAD = 10, CW = 12 * 0.59;\n"
	"  var details, matched, reset, search;\n"
	"  function $(id) { return document.getElementById(id); }\n"
	"  function fit(f, w) {\n"
	"    var n = Math.floor((w - 6) / CW), s = f.name;\n"
	"    if (n < 3) return '';\n"
	"    return s.length <= n ? s : s.substring(0, n - 1) + '\\u2026';\n"
	"  }\n"
	"  function draw(f, x, w) {\n"
	"    f.r.setAttribute('x', x.toFixed(2));\n"
	"    f.r.setAttribute('width', w.toFixed(2));\n"
	"    f.t.setAttribute('x', (x + 3).toFixed(2));\n"
	"    f.t.textContent = fit(f, w);\n"
	"  }\n"
	"  function pct(n) { return (100 * n / total).toFixed(2) + '%'; }\n"
	"  function inside(a, b) { return a.x >= b.x - 1e-6 && a.x + a.w <= b.x + b.w + 1e-6; }\n"
	"  function zoom(z) {\n"
	"    var k = (W - 2 * PAD) / z.w;\n"
	"    zoomed = z;\n"
	"    frames.forEach(function (f) {\n"
	"      var c = f.g.classList;\n"
	"      c.remove('parent', 'hide');\n"
	"      if (f.y > z.y && inside(z, f)) { c.add('parent'); draw(f, PAD, W - 2 * PAD); }\n"
	"      else if (f.y <= z.y && inside(f, z)) draw(f, PAD + (f.x - z.x) * k, f.w * k);\n"
	"      else c.add('hide');\n"
	"    });\n"
	"    reset.style.display = '';\n"
	"  }\n"
	"  function unzoom() {\n"
	"    zoomed = null;\n"
	"    frames.forEach(function (f) {\n"
	"      f.g.classList.remove('parent', 'hide');\n"
	"      draw(f, f.x, f.w);\n"
	"    });\n"
	"    reset.style.display = 'none';\n"
	"  }\n"
	"  function find(term) {\n"
	"    var hits = [], done = [], n = 0;\n"
	"    try { re = new RegExp(term); } catch (e) { alert('Bad regular expression: ' + e.message); return; }\n"
	"    frames.forEach(function (f) {\n"
	"      var m = re.test(f.name);\n"
	"      f.g.classList.toggle('match', m);\n"
	"      if (m) hits.push(f);\n"
	"    });\n"
	"    /* Count a match once even when a caller matched too. */\n"
	"    hits.sort(function (a, b) { return b.y - a.y; });\n"
	"    hits.forEach(function (f) {\n"
	"      if (!done.some(function (d) { return inside(f, d); })) { done.push(f); n += f.s; }\n"
	"    });\n"
	"    matched.textContent = 'Matched: ' + pct(n) + ' (' + n + ' of ' + total + ' samples)';\n"
	"    search.textContent = 'Reset Search';\n"
	"  }\n"
	"  function unfind() {\n"
	"    re = null;\n"
	"    frames.forEach(function (f) { f.g.classList.remove('match'); });\n"
	"    matched.textContent = '';\n"
	"    search.textContent = 'Search';\n"
	"  }\n"
	"  function ask() {\n"
	"    var t = prompt('Search frames (regular expression)', '');\n"
	"    if (t) find(t);\n"
	"  }\n"
	"  function frameOf(e) {\n"
	"    for (var n = e.target; n && n !== svg; n = n.parentNode)\n"
	"      if (n.classList && n.classList.contains('f')) return n.fr;\n"
	"    return null;\n"
	"  }\n"
	"  function init() {\n"
	"    details = $('details'); matched = $('matched'); reset = $('reset'); search = $('search');\n"
	"    Array.prototype.forEach.call(document.querySelectorAll('g.f'), function (g) {\n"
	"      var r = g.querySelector('rect'), title = g.querySelector('title').textContent;\n"
	"      var f = { g: g, r: r, t: g.querySelector('text'),\n"
	"                name: title.substring(0, title.lastIndexOf(' (')), s: +g.getAttribute('data-s'),\n"
	"                x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y') };\n"
	"      g.fr = f;\n"
	"      frames.push(f);\n"
	"    });\n"
	"    svg.addEventListener('mouseover', function (e) {\n"
	"      var f = frameOf(e);\n"
	"      details.textContent = f ? f.name + ' (' + f.s + ' samples, ' + pct(f.s) + ')' : ' ';\n"
	"    });\n"
	"    svg.addEventListener('mouseout', function (e) { if (frameOf(e)) details.textContent = ' '; });\n"
	"    svg.addEventListener('click', function (e) { var f = frameOf(e); if (f) zoom(f); });\n"
	"    reset.addEventListener('click', unzoom);\n"
	"    search.addEventListener('click', function () { if (re) unfind(); else ask(); });\n"
	"    document.addEventListener('keydown', function (e) {\n"
	"      if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); ask(); }\n"
	"      else if (e.key === 'Escape') { unfind(); unzoom(); }\n"
	"    });\n"
	"  }\n"
	"  /* Links can carry a view: file.svg#zoom=NAME&search=REGEX */\n"
	"  function fromHash() {\n"
	"    location.hash.substring(1).split('&').forEach(function (kv) {\n"
	"      var i = kv.indexOf('='), k = kv.substring(0, i), v = decodeURIComponent(kv.substring(i + 1));\n"
	"      if (k === 'search' && v) find(v);\n"
	"      if (k === 'zoom') {\n"
	"        var best = null;\n"
	"        frames.forEach(function (f) { if (f.name === v && (!best || f.w > best.w)) best = f; });\n"
	"        if (best) zoom(best);\n"
	"      }\n"
	"    });\n"
	"  }\n"
	"  function start() { init(); fromHash(); }\n"
	"  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);\n"
	"  else start();\n"
	"})();\n"
	"]]></script>\n";

static void header(struct fg *g, const char *title, int height)
{
	const struct rep_batch *b = g->b;
	double secs = b->end_ns > b->start_ns ? (b->end_ns - b->start_ns) / 1e9 : 0;
	int k, x = PAD_X;

	rep_buf_printf(&g->out,
		       "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		       "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		       "data-total=\"%" PRIu64 "\">\n",
		       IMG_WIDTH, height, IMG_WIDTH, height, g->nodes[0].count);
	rep_buf_puts(&g->out, svg_style);
	rep_buf_puts(&g->out, svg_script);
	rep_buf_printf(&g->out,
		       "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f2\"/>\n"
		       "<text id=\"title\" x=\"%d\" y=\"22\">",
		       IMG_WIDTH / 2);
	xml_text(&g->out, title && *title ? title : "Flame Graph", SIZE_MAX);
	rep_buf_printf(&g->out,
		       "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"40\">%" PRIu64
		       " samples, %.1f s",
		       IMG_WIDTH / 2, g->nodes[0].count, secs);
	if (b->period_ns)
		rep_buf_printf(&g->out, " at %.0f Hz", 1e9 / b->period_ns);
	if (b->host_name) {
		rep_buf_puts(&g->out, ", ");
		xml_text(&g->out, b->host_name, 64);
	}
	rep_buf_printf(&g->out, "</text>\n"
		       "<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"22\" style=\"display:none\">Reset Zoom</text>\n"
		       "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"22\">Search</text>\n",
		       PAD_X, IMG_WIDTH - PAD_X);
	/* Legend: the kinds this graph shows. */
	for (k = 0; k < KIND_ALL; k++) {
		int rgb[3];

		if (!g->kinds_seen[k] || k == KIND_ROOT)
			continue;
		colour(k, "", rgb);
		rep_buf_printf(&g->out,
			       "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"rgb(%d,%d,%d)\"/>"
			       "<text x=\"%d\" y=\"%d\">%s</text>\n",
			       x, height - 14, rgb[0], rgb[1], rgb[2], x + 14, height - 5,
			       kind_label(k));
		x += 14 + 8 * (int)strlen(kind_label(k)) + 14;
	}
	rep_buf_printf(&g->out,
		       "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		       "<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n",
		       x + 10, height - 5, IMG_WIDTH - PAD_X, height - 5);
}

int rep_encode_svg(const struct rep_batch *b, const char *title, char **buf,
		   size_t *len)
{
	struct rep_names names = { 0 };
	struct fg g = { .b = b };
	int err, height;

	err = rep_names_init(&names, b);
	if (!err)
		err = rep_strtab_init(&g.names);
	if (!err)
		err = build_tree(&g, &names);
	if (err)
		goto cleanup;
	g.sort_buf = calloc(g.n + 1, sizeof(*g.sort_buf));
	if (!g.sort_buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	g.scale = g.nodes[0].count ?
			  (double)(IMG_WIDTH - 2 * PAD_X) / g.nodes[0].count : 0;
	measure(&g, 0, 0);
	height = PAD_TOP + (int)(g.max_depth + 1) * FRAME_H + PAD_BOTTOM;
	header(&g, title, height);
	rep_buf_puts(&g.out, "<g id=\"frames\">\n");
	if (g.nodes[0].count)
		emit(&g, 0, 0, 0, 0);
	else
		rep_buf_printf(&g.out, "<text x=\"%d\" y=\"%d\">No samples</text>\n",
			       PAD_X, PAD_TOP + FRAME_H);
	rep_buf_puts(&g.out, "</g>\n</svg>\n");
	err = rep_buf_take(&g.out, buf, len);
cleanup:
	rep_buf_free(&g.out);
	rep_names_free(&names);
	rep_strtab_free(&g.names);
	intern_free(&g.index);
	free(g.nodes);
	free(g.sort_buf);
	return err;
}
