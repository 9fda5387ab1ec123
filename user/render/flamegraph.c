// SPDX-License-Identifier: BSD-3-Clause
/* Folded stacks drawn as one self-contained, interactive SVG (flamegraph.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "flamegraph.h"
#include "utf8.h"

#define DEFAULT_WIDTH_PX 1200
#define MIN_WIDTH_PX 400 /* room for the title and the controls */
#define MAX_WIDTH_PX 100000
#define DEFAULT_MIN_FRAME_PX 0.1
#define PAD_X 10
#define TOP_PX 52 /* below the title and the controls */
#define FRAME_H 16
#define FONT_PX 12
/* A monospace advance, so labels are cut to fit without measuring text;
 * the script cuts with the same figure after a zoom. */
#define CHAR_W (FONT_PX * 0.6)
#define UNKNOWN_FRAME "[unknown]"
#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

struct entry {
	char *stack; /* normalised: frames safe for XML, none empty */
	uint64_t count, base_count;
};

/* A tree node; nodes[] holds them in pre-order, the root "all" first. */
struct node {
	const char *name; /* into an entry's stack, len bytes, no NUL */
	size_t len;
	unsigned depth;
	uint64_t count, base_count; /* inclusive: the node and its subtree */
	uint64_t start, base_start; /* left edge, in counts of each set */
	bool drawn;
};

struct graph {
	struct node *nodes;
	size_t nr, cap;
	size_t *path; /* path[d]: the node at depth d of the stack merged last */
	size_t path_cap;
	unsigned max_depth;
	uint64_t total, base_total;
};

static bool invalid_for_xml(const unsigned char *p, size_t n)
{
	/* XML 1.0 allows neither C0 controls (tab and newline would break the
	 * tooltip's first line, the name) nor U+FFFE and U+FFFF */
	return n == 0 || *p < 0x20 || *p == 0x7f ||
	       (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe);
}

/* The stack with each frame safe for XML and none empty (flamegraph.h). */
static char *normalize_stack(const char *stack)
{
	const unsigned char *p = (const unsigned char *)(stack ? stack : "");
	size_t len = strlen((const char *)p);
	bool empty = true;
	char *out, *o;

	/* worst cases: each byte becomes U+FFFD, or each ';' ends "[unknown]" */
	if (len > (SIZE_MAX - 16) / 10)
		return NULL;
	out = o = malloc(10 * len + 16);
	if (!out)
		return NULL;
	for (;;) {
		size_t n;

		if (*p == ';' || *p == '\0') {
			if (empty) {
				memcpy(o, UNKNOWN_FRAME, strlen(UNKNOWN_FRAME));
				o += strlen(UNKNOWN_FRAME);
			}
			if (!*p)
				break;
			*o++ = ';';
			p++;
			empty = true;
			continue;
		}
		n = td_utf8_char_len(p);
		empty = false;
		if (invalid_for_xml(p, n)) {
			memcpy(o, REPLACEMENT, 3);
			o += 3;
			p += n ? n : 1;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return out;
}

/* Frame by frame, shorter names first: a separator sorts below any byte,
 * the end of the stack below a separator. Sorted so, the stacks of a
 * subtree are adjacent and the tree comes out in pre-order. */
static int frame_rank(unsigned char c)
{
	return c == '\0' ? 0 : c == ';' ? 1 : c + 2;
}

static int by_frames(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct entry *)a)->stack;
	const unsigned char *y = (const unsigned char *)((const struct entry *)b)->stack;

	while (*x && *x == *y)
		x++, y++;
	return frame_rank(*x) - frame_rank(*y);
}

static int add_node(struct graph *g, const char *name, size_t len, unsigned depth)
{
	struct node *nodes = td_grow(g->nodes, &g->cap, g->nr, sizeof(*nodes));
	size_t *path;

	if (!nodes)
		return -ENOMEM;
	g->nodes = nodes;
	while (depth >= g->path_cap) {
		path = td_grow(g->path, &g->path_cap, depth, sizeof(*path));
		if (!path)
			return -ENOMEM;
		g->path = path;
	}
	nodes[g->nr] = (struct node){ .name = name, .len = len, .depth = depth };
	g->path[depth] = g->nr++;
	if (depth > g->max_depth)
		g->max_depth = depth;
	return 0;
}

/* Merges the sorted entries into g->nodes, counts and left edges. */
static int build_tree(struct graph *g, const struct entry *entries, size_t nr)
{
	unsigned path_len = 1;
	uint64_t *cursor, *base_cursor;
	int ret = add_node(g, "all", 3, 0);

	for (size_t i = 0; i < nr && !ret; i++) {
		const char *frame = entries[i].stack;
		bool shared = true; /* the path so far is the previous stack's */
		unsigned depth = 0;

		while (*frame && !ret) {
			size_t len = strcspn(frame, ";");
			const struct node *old;

			depth++;
			old = shared && depth < path_len ? &g->nodes[g->path[depth]] : NULL;
			if (!old || old->len != len || memcmp(old->name, frame, len)) {
				shared = false;
				ret = add_node(g, frame, len, depth);
			}
			frame += len + (frame[len] == ';');
		}
		path_len = depth + 1;
		for (unsigned d = 0; d <= depth && !ret; d++) {
			g->nodes[g->path[d]].count += entries[i].count;
			g->nodes[g->path[d]].base_count += entries[i].base_count;
		}
	}
	if (ret)
		return ret;

	/* a child's left edge is its parent's plus its elder siblings' counts;
	 * in pre-order, cursor[d] is the next free edge at depth d */
	cursor = calloc(g->max_depth + 2, sizeof(*cursor));
	base_cursor = calloc(g->max_depth + 2, sizeof(*base_cursor));
	if (!cursor || !base_cursor) {
		free(cursor);
		free(base_cursor);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->nr; i++) {
		struct node *node = &g->nodes[i];

		node->start = cursor[node->depth];
		node->base_start = base_cursor[node->depth];
		cursor[node->depth] += node->count;
		base_cursor[node->depth] += node->base_count;
		cursor[node->depth + 1] = node->start;
		base_cursor[node->depth + 1] = node->base_start;
	}
	free(cursor);
	free(base_cursor);
	return 0;
}

/* Text for XML content and attributes: escaped, and made valid on the way
 * (titles and units come from the caller unchecked). */
static void put_text(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		size_t n = td_utf8_char_len(p);

		if (n > (size_t)(end - p))
			n = 0;
		if (invalid_for_xml(p, n)) {
			fputs(REPLACEMENT, out);
			p += n ? n : 1;
			continue;
		}
		switch (*p) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fwrite(p, 1, n, out);
		}
		p += n;
	}
}

static void put_str(FILE *out, const char *s)
{
	put_text(out, s, strlen(s));
}

/* The label that fits width_px: the name, its start and "..", or nothing
 * when fewer than three characters fit. Names are valid UTF-8 here. */
static void put_label(FILE *out, const struct node *node, double width_px)
{
	double fit = floor((width_px - 6) / CHAR_W);
	size_t chars = 0, cut = 0;

	if (fit < 3)
		return;
	for (size_t i = 0, n; i < node->len; i += n ? n : 1) {
		n = td_utf8_char_len((const unsigned char *)node->name + i);
		if (chars == (size_t)fit - 2)
			cut = i;
		chars++;
	}
	if (chars <= fit) {
		put_text(out, node->name, node->len);
		return;
	}
	put_text(out, node->name, cut);
	fputs("..", out);
}

/* FNV-1a: colours that depend on the name alone, the same in every graph. */
static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static double share(uint64_t count, uint64_t total)
{
	return (double)count / (double)total;
}

/* >0 when node's share of the new total exceeds its share of the base
 * total, exactly: shares of large counts differ below double precision. */
static int change_sign(const struct graph *g, const struct node *node)
{
	unsigned __int128 now = (unsigned __int128)node->count * g->base_total;
	unsigned __int128 before = (unsigned __int128)node->base_count * g->total;

	return now > before ? 1 : now < before ? -1 : 0;
}

static void put_fill(FILE *out, const struct graph *g, const struct node *node, bool differential,
		     double max_change)
{
	uint32_t h;
	int sign, c;

	if (!differential) {
		/* warm: red to yellow, a little variation in red and blue */
		h = name_hash(node->name, node->len);
		fprintf(out, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 230, (h >> 16) % 55);
		return;
	}
	sign = change_sign(g, node);
	if (!sign || max_change <= 0) {
		fputs("rgb(230,230,230)", out);
		return;
	}
	c = (int)lround(230 - 200 * fabs(share(node->count, g->total) - share(node->base_count, g->base_total)) /
				      max_change);
	if (sign > 0)
		fprintf(out, "rgb(255,%d,%d)", c, c);
	else
		fprintf(out, "rgb(%d,%d,255)", c, c);
}

/* The tooltip: the name alone on the first line (the script reads it
 * there), then the figures. */
static void put_tooltip(FILE *out, const struct graph *g, const struct node *node, const char *unit,
			bool differential)
{
	put_text(out, node->name, node->len);
	if (!differential) {
		fprintf(out, "\n%" PRIu64 " ", node->count);
		put_str(out, unit);
		fprintf(out, ", %.2f%%", 100 * share(node->count, g->total));
		return;
	}
	fprintf(out, "\nnew: %" PRIu64 " ", node->count);
	put_str(out, unit);
	fprintf(out, ", %.2f%%\nbase: %" PRIu64 " ", 100 * share(node->count, g->total), node->base_count);
	put_str(out, unit);
	fprintf(out, ", %.2f%%\nchange: %+.2f points of the total", 100 * share(node->base_count, g->base_total),
		100 * (share(node->count, g->total) - share(node->base_count, g->base_total)));
}

static const char style[] =
	"text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#legend { text-anchor: middle; fill: #444; }\n"
	"#matched { text-anchor: end; }\n"
	"#hidden { fill: #777; }\n"
	".btn { cursor: pointer; fill: #0550ae; }\n"
	".btn:hover { text-decoration: underline; }\n"
	".btn.off { opacity: 0.35; }\n"
	".end { text-anchor: end; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	"g.f text { pointer-events: none; }\n"
	"g.anc { opacity: 0.55; }\n";

/*
 * The page's behaviour. Every frame carries its depth and, per set, its
 * left edge and width in counts (data-s/data-n, data-bs/data-b), so a
 * layout is arithmetic: a zoom maps the zoomed frame's span onto the full
 * width, and at each depth spans are disjoint, so a frame above the
 * zoomed one whose span covers it is its ancestor and one below inside
 * it is its descendant. The matched share is the union of the matched
 * spans: a match inside another match adds nothing.
 */
static const char script[] =
	"(() => {\n"
	"'use strict';\n"
	"const svg = document.documentElement;\n"
	"const num = (el, a) => parseFloat(el.getAttribute(a)) || 0;\n"
	"const $ = (id) => document.getElementById(id);\n"
	"const unit = svg.getAttribute('data-unit');\n"
	"const diff = svg.getAttribute('data-diff') === '1';\n"
	"const X0 = num(svg, 'data-x0'), W = num(svg, 'data-w'), TOP = num(svg, 'data-top');\n"
	"const FH = num(svg, 'data-fh'), MAXD = num(svg, 'data-maxd'), CW = num(svg, 'data-charw');\n"
	"const MINW = num(svg, 'data-minw'), INVERTED = svg.getAttribute('data-inverted') === '1';\n"
	"const totals = [num(svg, 'data-total'), num(svg, 'data-base-total')];\n"
	"const MATCH = 'rgb(230,0,230)';\n"
	"const frames = Array.from(document.querySelectorAll('g.f'), (g) => {\n"
	"  const lines = g.querySelector('title').textContent.split('\\n');\n"
	"  const rect = g.querySelector('rect');\n"
	"  return { g, rect, text: g.querySelector('text'), name: lines[0],\n"
	"    tip: lines[0] + ': ' + lines.slice(1).join('; '), d: num(g, 'data-d'),\n"
	"    s: [num(g, 'data-s'), num(g, 'data-bs')], n: [num(g, 'data-n'), num(g, 'data-b')],\n"
	"    fill: rect.getAttribute('fill') };\n"
	"});\n"
	"const byId = new Map(frames.map((f) => [f.g.id, f]));\n"
	"const state = { zoom: null, search: '', inverted: INVERTED, negate: false };\n"
	"const set = () => (diff && state.negate ? 1 : 0);\n"
	"\n"
	"function label(name, w) {\n"
	"  const fit = Math.floor((w - 6) / CW);\n"
	"  if (fit < 3) return '';\n"
	"  const chars = Array.from(name);\n"
	"  return chars.length <= fit ? name : chars.slice(0, fit - 2).join('') + '..';\n"
	"}\n"
	"\n"
	"function layout() {\n"
	"  const k = set(), z = state.zoom;\n"
	"  const zs = z ? z.s[k] : 0, zn = z ? z.n[k] : totals[k], zd = z ? z.d : 0;\n"
	"  for (const f of frames) {\n"
	"    const s = f.s[k], n = f.n[k], anc = f.d < zd;\n"
	"    let show = n > 0, x = X0, w = W;\n"
	"    if (anc) {\n"
	"      show = show && s <= zs && s + n >= zs + zn;\n"
	"    } else {\n"
	"      show = show && s >= zs && s + n <= zs + zn;\n"
	"      x = X0 + (s - zs) / zn * W;\n"
	"      w = n / zn * W;\n"
	"    }\n"
	"    show = show && w >= MINW;\n"
	"    f.g.style.display = show ? '' : 'none';\n"
	"    f.g.classList.toggle('anc', show && anc);\n"
	"    if (!show) continue;\n"
	"    const y = state.inverted ? TOP + f.d * FH : TOP + (MAXD - f.d) * FH;\n"
	"    f.rect.setAttribute('x', x.toFixed(2));\n"
	"    f.rect.setAttribute('y', y);\n"
	"    f.rect.setAttribute('width', w.toFixed(2));\n"
	"    f.text.setAttribute('x', (x + 3).toFixed(2));\n"
	"    f.text.setAttribute('y', y + FH - 5);\n"
	"    f.text.textContent = label(f.name, w);\n"
	"  }\n"
	"  $('reset').classList.toggle('off', !z);\n"
	"  $('invert').textContent = state.inverted ? 'Flame' : 'Icicle';\n"
	"  if (diff) {\n"
	"    $('negate').textContent = state.negate ? 'Negate: base' : 'Negate: new';\n"
	"    $('legend').textContent = 'width: ' + (state.negate ? 'base' : 'new') +\n"
	"      ' set; red: larger share than in base, blue: smaller';\n"
	"  }\n"
	"}\n"
	"\n"
	"/* Whether rx can run on any name without hanging the page: no\n"
	"   backreference, no repeated group that holds a quantifier or an\n"
	"   alternation ((A+)+B takes 2^n steps on n A's), and at most two\n"
	"   unbounded quantifiers (each one more multiplies the steps by a name's\n"
	"   length). A simple check of the text, strict on purpose. */\n"
	"function safePattern(rx) {\n"
	"  const groups = [{ inner: false }];\n"
	"  let unbounded = 0;\n"
	"  for (let i = 0; i < rx.length; i++) {\n"
	"    const c = rx[i], top = groups[groups.length - 1];\n"
	"    if (c === '\\\\') {\n"
	"      if (/[1-9k]/.test(rx[++i] || '')) return false;\n"
	"    } else if (c === '[') {\n"
	"      for (i += rx[i + 1] === '^' ? 2 : 1; i < rx.length && rx[i] !== ']'; i++)\n"
	"        if (rx[i] === '\\\\') i++;\n"
	"    } else if (c === '(') {\n"
	"      groups.push({ inner: false });\n"
	"      if (rx[i + 1] === '?') i++; /* (?: (?= (?! (?<: not a quantifier */\n"
	"    } else if (c === ')') {\n"
	"      const g = groups.length > 1 ? groups.pop() : top;\n"
	"      const q = rx[i + 1];\n"
	"      if ((q === '*' || q === '+' || q === '{') && g.inner) return false;\n"
	"      if (g.inner) groups[groups.length - 1].inner = true;\n"
	"    } else if (c === '|' || c === '?') {\n"
	"      top.inner = true;\n"
	"    } else if (c === '*' || c === '+' || c === '{') {\n"
	"      top.inner = true;\n"
	"      if (c !== '{' || /^\\{\\d*,\\}/.test(rx.slice(i))) unbounded++;\n"
	"    }\n"
	"  }\n"
	"  return unbounded <= 2;\n"
	"}\n"
	"\n"
	"/* The search as a test of a name: a regular expression when it is a safe\n"
	"   one, else the text itself; null (said) when it is neither. */\n"
	"function matcher(search) {\n"
	"  let rx;\n"
	"  try {\n"
	"    rx = new RegExp(search);\n"
	"  } catch (e) {\n"
	"    $('matched').textContent = 'Not a regular expression: ' + search;\n"
	"    return null;\n"
	"  }\n"
	"  if (safePattern(search)) return { test: (name) => rx.test(name), plain: false };\n"
	"  return { test: (name) => name.includes(search), plain: true };\n"
	"}\n"
	"\n"
	"function highlight() {\n"
	"  const k = set(), spans = [];\n"
	"  const m = state.search ? matcher(state.search) : null;\n"
	"  $('search').textContent = state.search ? 'Search: ' + state.search : 'Search';\n"
	"  for (const f of frames) {\n"
	"    const hit = m !== null && f.d > 0 && m.test(f.name);\n"
	"    f.rect.setAttribute('fill', hit ? MATCH : f.fill);\n"
	"    if (hit && f.n[k] > 0) spans.push([f.s[k], f.s[k] + f.n[k]]);\n"
	"  }\n"
	"  if (!m) {\n"
	"    if (!state.search) $('matched').textContent = '';\n"
	"    return;\n"
	"  }\n"
	"  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);\n"
	"  let sum = 0, end = 0;\n"
	"  for (const [a, b] of spans) {\n"
	"    if (b <= end) continue;\n"
	"    sum += b - Math.max(a, end);\n"
	"    end = b;\n"
	"  }\n"
	"  $('matched').textContent = (m.plain ? 'Matched as plain text (not a safe regular expression): ' :\n"
	"    'Matched: ') + (100 * sum / totals[k]).toFixed(1) + '% (' + sum +\n"
	"    ' of ' + totals[k] + ' ' + unit + ')';\n"
	"}\n"
	"\n"
	"function save() {\n"
	"  const p = new URLSearchParams();\n"
	"  if (state.zoom) p.set('zoom', state.zoom.g.id);\n"
	"  if (state.search) p.set('search', state.search);\n"
	"  if (state.inverted !== INVERTED) p.set('inverted', state.inverted ? '1' : '0');\n"
	"  if (state.negate) p.set('negate', '1');\n"
	"  const h = p.toString();\n"
	"  /* the URL less its hash, not pathname + search: a data: URL (the report's frame) has no path to resolve */\n"
	"  history.replaceState(null, '', h ? '#' + h : document.URL.split('#')[0]);\n"
	"}\n"
	"\n"
	"function update() {\n"
	"  /* a zoomed frame that has no width in the set shown cannot be zoomed into */\n"
	"  if (state.zoom && (state.zoom.d === 0 || state.zoom.n[set()] === 0)) state.zoom = null;\n"
	"  layout();\n"
	"  highlight();\n"
	"  save();\n"
	"}\n"
	"\n"
	"function restore() {\n"
	"  const p = new URLSearchParams(location.hash.slice(1));\n"
	"  state.zoom = byId.get(p.get('zoom')) || null;\n"
	"  state.search = p.get('search') || '';\n"
	"  state.inverted = p.has('inverted') ? p.get('inverted') === '1' : INVERTED;\n"
	"  state.negate = diff && p.get('negate') === '1';\n"
	"  update();\n"
	"}\n"
	"\n"
	"function ask() {\n"
	"  const re = prompt('Search frames (regular expression; empty clears)', state.search);\n"
	"  if (re === null) return;\n"
	"  state.search = re;\n"
	"  update();\n"
	"}\n"
	"\n"
	"$('frames').addEventListener('click', (e) => {\n"
	"  const g = e.target.closest('g.f');\n"
	"  if (!g) return;\n"
	"  state.zoom = byId.get(g.id);\n"
	"  update();\n"
	"});\n"
	"$('frames').addEventListener('mouseover', (e) => {\n"
	"  const g = e.target.closest('g.f');\n"
	"  if (g) $('details').textContent = byId.get(g.id).tip;\n"
	"});\n"
	"$('frames').addEventListener('mouseout', () => { $('details').textContent = ' '; });\n"
	"$('reset').addEventListener('click', () => { state.zoom = null; update(); });\n"
	"$('search').addEventListener('click', ask);\n"
	"$('invert').addEventListener('click', () => { state.inverted = !state.inverted; update(); });\n"
	"if (diff) $('negate').addEventListener('click', () => { state.negate = !state.negate; update(); });\n"
	"window.addEventListener('keydown', (e) => {\n"
	"  if (((e.ctrlKey || e.metaKey) && e.key === 'f') || e.key === '/') {\n"
	"    e.preventDefault();\n"
	"    ask();\n"
	"  } else if (e.key === 'Escape') {\n"
	"    state.search = '';\n"
	"    update();\n"
	"  }\n"
	"});\n"
	"window.addEventListener('hashchange', restore);\n"
	"restore();\n"
	"})();\n";

struct layout {
	double x0, width, top, min_frame;
	unsigned max_depth; /* of the drawn frames */
	bool inverted, differential;
};

static void put_frame(FILE *out, const struct graph *g, const struct node *node, size_t id,
		      const struct layout *l, const char *unit, double max_change)
{
	double x = l->x0 + l->width * share(node->start, g->total);
	double w = l->width * share(node->count, g->total);
	unsigned row = l->inverted ? node->depth : l->max_depth - node->depth;
	double y = l->top + (double)row * FRAME_H;

	fprintf(out, "<g class=\"f\" id=\"f%zu\" data-d=\"%u\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"", id,
		node->depth, node->start, node->count);
	if (l->differential)
		fprintf(out, " data-bs=\"%" PRIu64 "\" data-b=\"%" PRIu64 "\"", node->base_start, node->base_count);
	/* hidden while it has no width: the script shows it when negated */
	fprintf(out, "%s><title>", node->count ? "" : " style=\"display:none\"");
	put_tooltip(out, g, node, unit, l->differential);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"", x, y, w,
		FRAME_H - 1);
	put_fill(out, g, node, l->differential, max_change);
	fprintf(out, "\"/><text x=\"%.2f\" y=\"%.0f\">", x + 3, y + FRAME_H - 5);
	put_label(out, node, w);
	fputs("</text></g>\n", out);
}

static void put_svg(FILE *out, const struct graph *g, const struct td_flamegraph_opts *opts,
		    const struct layout *l, unsigned width_px, size_t hidden)
{
	double frames_end = l->top + (double)(l->max_depth + 1) * FRAME_H;
	double height = frames_end + (hidden ? 44 : 28);
	double max_change = 0;
	size_t id = 0;

	if (l->differential)
		for (size_t i = 0; i < g->nr; i++)
			if (g->nodes[i].drawn)
				max_change = fmax(max_change, fabs(share(g->nodes[i].count, g->total) -
								   share(g->nodes[i].base_count, g->base_total)));

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%.0f\" "
		     "viewBox=\"0 0 %u %.0f\"", width_px, height, width_px, height);
	fprintf(out, " data-x0=\"%.0f\" data-w=\"%.0f\" data-top=\"%.0f\" data-fh=\"%d\" data-maxd=\"%u\"", l->x0,
		l->width, l->top, FRAME_H, l->max_depth);
	fprintf(out, " data-charw=\"%.2f\" data-minw=\"%g\" data-total=\"%" PRIu64 "\"", CHAR_W, l->min_frame,
		g->total);
	if (l->differential)
		fprintf(out, " data-base-total=\"%" PRIu64 "\"", g->base_total);
	fprintf(out, " data-diff=\"%d\" data-inverted=\"%d\" data-unit=\"", l->differential, l->inverted);
	put_str(out, opts->unit);
	fprintf(out, "\">\n<style>\n%s</style>\n", style);
	/* the document's title names the browser's tab */
	fputs("<title>", out);
	put_str(out, opts->title ? opts->title : "Flame graph");
	fprintf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" fill=\"#f7f7f5\"/>\n", width_px,
		height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", width_px / 2.0);
	put_str(out, opts->title ? opts->title : "Flame graph");
	fputs("</text>\n", out);
	/* the controls' row: toggles on the left, search on the right, where
	 * the pattern it shows has room to grow leftwards */
	fprintf(out, "<text id=\"reset\" class=\"btn off\" x=\"%d\" y=\"42\">Reset zoom</text>\n", PAD_X);
	fprintf(out, "<text id=\"invert\" class=\"btn\" x=\"%d\" y=\"42\">%s</text>\n", PAD_X + 100,
		l->inverted ? "Flame" : "Icicle");
	if (l->differential) {
		fprintf(out, "<text id=\"negate\" class=\"btn\" x=\"%d\" y=\"42\">Negate: new</text>\n", PAD_X + 170);
		fprintf(out, "<text id=\"legend\" x=\"%.1f\" y=\"42\">width: new set; red: larger share than in "
			     "base, blue: smaller</text>\n", width_px / 2.0);
	}
	fprintf(out, "<text id=\"search\" class=\"btn end\" x=\"%u\" y=\"42\">Search</text>\n", width_px - PAD_X);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < g->nr; i++)
		if (g->nodes[i].drawn)
			put_frame(out, g, &g->nodes[i], id++, l, opts->unit, max_change);
	fputs("</g>\n", out);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n", PAD_X, frames_end + 18);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%.0f\"></text>\n", width_px - PAD_X, frames_end + 18);
	if (hidden)
		fprintf(out, "<text id=\"hidden\" x=\"%d\" y=\"%.0f\">%zu frames narrower than %g px are not drawn"
			     "</text>\n", PAD_X, frames_end + 36, hidden, l->min_frame);
	fprintf(out, "<script><![CDATA[\n%s]]></script>\n</svg>\n", script);
}

/* Checks and normalises the stacks into entries[], with the totals. */
static int read_stacks(const struct td_folded *stacks, size_t n, bool differential, struct entry *entries,
		       size_t *nr, struct graph *g, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t base = differential ? stacks[i].base_count : 0;

		if (!stacks[i].count && !base)
			continue;
		if (__builtin_add_overflow(g->total, stacks[i].count, &g->total) ||
		    __builtin_add_overflow(g->base_total, base, &g->base_total)) {
			snprintf(err, errlen, "the counts add up past %" PRIu64 ": scale them down before drawing",
				 UINT64_MAX);
			return -EOVERFLOW;
		}
		entries[*nr] = (struct entry){ .stack = normalize_stack(stacks[i].stack), .count = stacks[i].count,
					       .base_count = base };
		if (!entries[*nr].stack) {
			snprintf(err, errlen, "out of memory reading the stacks of the flame graph");
			return -ENOMEM;
		}
		(*nr)++;
	}
	if (!g->total || (differential && !g->base_total)) {
		snprintf(err, errlen, "no stacks to draw: every stack%s has a count of 0",
			 !g->total ? "" : " of the base set");
		return -ENODATA;
	}
	return 0;
}

int td_flamegraph_svg(FILE *out, const struct td_folded *stacks, size_t n,
		      const struct td_flamegraph_opts *opts, char *err, size_t errlen)
{
	struct graph g = { 0 };
	struct layout l = { 0 };
	struct entry *entries = NULL;
	unsigned width_px;
	size_t nr = 0, hidden = 0;
	int ret;

	if (!opts || !opts->unit) {
		snprintf(err, errlen, "a flame graph needs its unit: what a count is (samples, L3 misses)");
		return -EINVAL;
	}
	width_px = opts->width_px ? opts->width_px : DEFAULT_WIDTH_PX;
	if (width_px < MIN_WIDTH_PX || width_px > MAX_WIDTH_PX) {
		snprintf(err, errlen, "a flame graph's width must be %d to %d pixels (0 for %d), not %u", MIN_WIDTH_PX,
			 MAX_WIDTH_PX, DEFAULT_WIDTH_PX, width_px);
		return -EINVAL;
	}
	if (!n || !stacks) {
		snprintf(err, errlen, "no stacks to draw: the profile is empty (profile longer, or widen the filter)");
		return -ENODATA;
	}
	entries = calloc(n, sizeof(*entries));
	if (!entries) {
		snprintf(err, errlen, "out of memory reading the stacks of the flame graph");
		return -ENOMEM;
	}
	ret = read_stacks(stacks, n, opts->differential, entries, &nr, &g, err, errlen);
	if (ret)
		goto out;
	qsort(entries, nr, sizeof(*entries), by_frames);
	ret = build_tree(&g, entries, nr);
	if (ret) {
		snprintf(err, errlen, "out of memory building the flame graph");
		goto out;
	}

	l = (struct layout){ .x0 = PAD_X, .width = width_px - 2 * PAD_X, .top = TOP_PX,
			     .min_frame = opts->min_width_px > 0 ? opts->min_width_px : DEFAULT_MIN_FRAME_PX,
			     .inverted = opts->inverted, .differential = opts->differential };
	for (size_t i = 0; i < g.nr; i++) {
		struct node *node = &g.nodes[i];

		/* a node narrower than the limit has only narrower descendants */
		node->drawn = !i || l.width * share(node->count, g.total) >= l.min_frame ||
			      (l.differential && l.width * share(node->base_count, g.base_total) >= l.min_frame);
		if (!node->drawn)
			hidden++;
		else if (node->depth > l.max_depth)
			l.max_depth = node->depth;
	}
	put_svg(out, &g, opts, &l, width_px, hidden);
	if (fflush(out) || ferror(out)) {
		snprintf(err, errlen, "could not write the flame graph: %s", strerror(errno));
		ret = -EIO;
	}
out:
	for (size_t i = 0; i < nr; i++)
		free(entries[i].stack);
	free(entries);
	free(g.nodes);
	free(g.path);
	return ret;
}
