// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown report's page: see report.h. The page is written in one pass:
 * the frame (header, contents, one section per present part), then each
 * part's JSON, then the script that draws the sections from it. Only the
 * contents and the flame graph are drawn here, so that the links work and
 * the graph shows before (and without) the script.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "flamegraph.h"
#include "query_render.h"
#include "report.h"

#define FLAME_WIDTH 1196 /* the page's column (1200 px) less the frame's border */

enum section { SEC_FUNNEL, SEC_TREE, SEC_THREADS, SEC_TRENDS, SEC_COMPARE, SEC_HOT, SEC_FLAME, NR_SECTIONS };

static const struct {
	const char *id;      /* the anchor; the script draws into id-body */
	const char *heading;
	const char *about;   /* what the section answers, with the CLI command that gives it as JSON */
} sections[NR_SECTIONS] = {
	[SEC_FUNNEL] = { "funnel", "Funnel",
			 "Where the pipeline slots go (topdown query --funnel)." },
	[SEC_TREE] = { "tree", "Top-Down tree",
		       "Each node with its threshold and confidence (topdown query --tree)." },
	[SEC_THREADS] = { "threads", "Threads",
			  "Per thread name and per thread, with on-CPU time, of one run (topdown query --threads)." },
	[SEC_TRENDS] = { "trends", "Trends",
			 "Nodes over the matching runs, anomalies in red (topdown query --trend NODE)." },
	[SEC_COMPARE] = { "compare", "Comparison",
			  "What changed from A to B (topdown compare)." },
	[SEC_HOT] = { "hot", "Hot functions",
		      "Where the samples landed, by self share (topdown query --hot)." },
	[SEC_FLAME] = { "flamegraph", "Flame graph",
			"The sampled stacks (topdown flamegraph): click a frame to zoom, Ctrl-F to search." },
};

static const char style[] =
	":root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bad: #b42318; --good: #1a7f37; --accent: #0b57d0; }\n"
	"* { box-sizing: border-box; }\n"
	"body { margin: 0; color: var(--fg); background: #fff; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }\n"
	"header, nav, main, footer { max-width: 1240px; margin: 0 auto; padding: 0 20px; }\n"
	"h1 { font-size: 26px; margin: 18px 0 2px; }\n"
	"h2 { font-size: 20px; margin: 14px 0 6px; }\n"
	"h3 { font-size: 16px; margin: 14px 0 4px; }\n"
	".sub, .legend, footer { color: var(--muted); }\n"
	"nav { border-top: 1px solid var(--line); border-bottom: 1px solid var(--line); padding-bottom: 8px; }\n"
	"nav h2 { font-size: 15px; margin: 8px 0 2px; }\n"
	"nav ol { display: flex; flex-wrap: wrap; gap: 2px 22px; margin: 0; padding-left: 20px; }\n"
	"a { color: var(--accent); }\n"
	"a:focus-visible, iframe:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }\n"
	"section { border-bottom: 1px solid var(--line); padding-bottom: 14px; }\n"
	".scroll { overflow-x: auto; max-width: 100%; }\n"
	"table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 4px 0; }\n"
	"caption { text-align: left; color: var(--muted); padding: 2px 0; }\n"
	"th, td { padding: 3px 10px; border-bottom: 1px solid #eaeef2; text-align: left; white-space: nowrap; }\n"
	"thead th { background: #f6f8fa; border-bottom: 1px solid var(--line); }\n"
	"tbody th { font-weight: normal; }\n"
	".num { text-align: right; }\n"
	".lvl2 { padding-left: 28px; } .lvl3 { padding-left: 46px; } .lvl4 { padding-left: 64px; }\n"
	".crossed, tr.regression td:first-child { color: var(--bad); font-weight: 600; }\n"
	".ok, tr.improvement td:first-child { color: var(--good); }\n"
	".funnel { list-style: none; margin: 6px 0; padding: 0; }\n"
	".funnel li { display: grid; grid-template-columns: 330px 76px minmax(200px, 1fr) 28px 100px; gap: 10px; align-items: center; padding: 1px 0; }\n"
	".funnel li.lvl2 .name { padding-left: 18px; } .funnel li.lvl3 .name { padding-left: 36px; } .funnel li.lvl4 .name { padding-left: 54px; }\n"
	".funnel li.lvl1 { font-weight: 600; }\n"
	".funnel li { padding-left: 0; }\n"
	".bar { height: 12px; background: #eef1f4; border-radius: 2px; overflow: hidden; }\n"
	".fill { display: block; height: 100%; background: #cf5a4f; }\n"
	".fill.useful { background: #3f9b57; }\n"
	".kind { color: var(--muted); font-weight: normal; }\n"
	".chart { width: 100%; max-width: 1100px; height: auto; display: block; }\n"
	".chart text { font-size: 11px; fill: var(--muted); }\n"
	".chart .grid { stroke: #eaeef2; }\n"
	".chart .line { fill: none; stroke: var(--accent); stroke-width: 1.5; }\n"
	".chart circle { fill: var(--accent); }\n"
	".chart circle.low { fill: #fff; stroke: var(--accent); }\n"
	".chart circle.anomaly { fill: var(--bad); stroke: #fff; }\n"
	"iframe.flame { display: block; width: 100%; border: 1px solid var(--line); }\n"
	"@media print {\n"
	"  nav, .noprint { display: none; }\n"
	"  body { font-size: 10.5px; }\n"
	"  header, main, footer { max-width: none; padding: 0; }\n"
	"  h2, h3 { break-after: avoid; }\n"
	"  tr, .funnel li, .chart { break-inside: avoid; }\n"
	"  .scroll { overflow: visible; }\n"
	"  thead th { background: none; }\n"
	"}\n"
	;

static const char script[] =
	"'use strict';\n"
	"const $ = (id) => document.getElementById(id);\n"
	"const block = (id) => ($(id) ? JSON.parse($(id).textContent) : null);\n"
	"const SVG = 'http://www.w3.org/2000/svg';\n"
	"\n"
	"// An element with attributes (null and false ones left out) and children.\n"
	"function make(ns, tag, attrs, kids) {\n"
	"  const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);\n"
	"  for (const [k, v] of Object.entries(attrs || {}))\n"
	"    if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v);\n"
	"  for (const k of kids) if (k !== null && k !== undefined) e.append(k);\n"
	"  return e;\n"
	"}\n"
	"const el = (tag, attrs, ...kids) => make(null, tag, attrs, kids);\n"
	"const svg = (tag, attrs, ...kids) => make(SVG, tag, attrs, kids);\n"
	"\n"
	"// The CLI's formats (user/render/query_render.c): 12.3%, ~ when low, +1.2pp.\n"
	"const raw = (v) => (v === null ? '' : String(v));\n"
	"const pct = (v, low) => (v === null ? 'n/a' : (100 * v).toFixed(1) + '%' + (low ? '~' : ''));\n"
	"const pp = (v) => (v === null ? '-' : (v >= 0 ? '+' : '') + (100 * v).toFixed(1) + 'pp');\n"
	"const ptext = (p) => (p === null ? '-' : p < 0.001 ? '<0.001' : p.toFixed(3));\n"
	"const fixed = (v, d) => (v === null ? '-' : v.toFixed(d));\n"
	"const plural = (n, word) => n + ' ' + word + (n === 1 ? '' : 's');\n"
	"const cover = (runs, samples) => 'over ' + plural(runs, 'run') + (samples !== runs ? ' (' + samples + ' samples)' : '');\n"
	"const when = (ns) => new Date(ns / 1e6).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';\n"
	"const secs = (ns) => (ns / 1e9).toFixed(3) + ' s';\n"
	"const value = (v, low) => el('td', { class: low ? 'num low' : 'num', 'data-value': raw(v) }, pct(v, low));\n"
	"const LEGEND = '~ low confidence: its events were counted less than half the time';\n"
	"\n"
	"function table(caption, head, rows) {\n"
	"  return el('div', { class: 'scroll' }, el('table', {},\n"
	"    caption ? el('caption', {}, caption) : null,\n"
	"    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))),\n"
	"    el('tbody', {}, ...rows)));\n"
	"}\n"
	"\n"
	"function mark(n, counts) {\n"
	"  return el('span', { class: n.crossed ? 'crossed' : 'ok', title: n.crossed ? 'crosses its threshold' : 'within its threshold' },\n"
	"    (n.crossed ? '\\u2717' : '\\u2713') + (counts ? ' ' + n.crossed_samples + '/' + n.samples : ''));\n"
	"}\n"
	"\n"
	"function legend(body, low) {\n"
	"  if (low) body.append(el('p', { class: 'legend' }, LEGEND));\n"
	"}\n"
	"\n"
	"function funnel(t, body) {\n"
	"  body.append(el('p', { class: 'lead' }, 'Pipeline slots ' + cover(t.runs, t.samples) + ': useful work ',\n"
	"    el('strong', { id: 'funnel-useful', 'data-value': raw(t.useful) }, pct(t.useful)),\n"
	"    ', wasted ', el('strong', { id: 'funnel-wasted', 'data-value': raw(t.wasted) }, pct(t.wasted))));\n"
	"  const list = el('ul', { class: 'funnel' });\n"
	"  for (const n of t.nodes) {\n"
	"    const fill = el('span', { class: n.useful ? 'fill useful' : 'fill' });\n"
	"    fill.style.width = n.value === null ? '0' : Math.min(100, Math.max(0, 100 * n.value)) + '%';\n"
	"    list.append(el('li', { class: 'lvl' + n.level, 'data-path': n.path },\n"
	"      el('span', { class: 'name' }, n.name),\n"
	"      el('span', { class: n.low_confidence ? 'num low' : 'num', 'data-value': raw(n.value) }, pct(n.value, n.low_confidence)),\n"
	"      el('span', { class: 'bar' }, fill), mark(n, false),\n"
	"      el('span', { class: 'kind' }, n.level === 1 ? (n.useful ? 'useful work' : 'wasted') : '')));\n"
	"  }\n"
	"  body.append(list);\n"
	"  legend(body, t.nodes.some((n) => n.low_confidence));\n"
	"}\n"
	"\n"
	"function tree(t, body) {\n"
	"  const several = t.samples > 1;\n"
	"  const head = ['Node', 'Value'].concat(several ? ['Range'] : [], ['Confidence', 'Threshold crossed']);\n"
	"  const rows = t.nodes.map((n) => el('tr', { 'data-path': n.path },\n"
	"    el('th', { scope: 'row', class: 'lvl' + n.level, title: n.path }, n.name), value(n.value, n.low_confidence),\n"
	"    several ? el('td', { class: 'num' }, pct(n.min) + ' \\u2013 ' + pct(n.max)) : null,\n"
	"    el('td', { class: 'num', 'data-value': raw(n.confidence) }, n.confidence === null ? 'n/a' : (100 * n.confidence).toFixed(0) + '%'),\n"
	"    el('td', {}, mark(n, true))));\n"
	"  body.append(el('p', {}, 'Every node of the Top-Down tree ' + cover(t.runs, t.samples) +\n"
	"    '; a node crosses its threshold in most of its samples (crossed/samples).'), table(null, head, rows));\n"
	"  legend(body, t.nodes.some((n) => n.low_confidence));\n"
	"}\n"
	"\n"
	"function threads(t, body) {\n"
	"  const cols = t.columns;\n"
	"  const head = (first) => first.concat(['On-CPU'], cols.map((c) => c.split('.').pop()));\n"
	"  const values = (line) => cols.map((c) => value(line.values[c], line.low_confidence.includes(c)));\n"
	"  const oncpu = (line) => el('td', { class: 'num', 'data-ns': String(line.oncpu_ns) }, secs(line.oncpu_ns));\n"
	"  body.append(el('p', {}, 'Run ' + t.run.run_id + ' (' + (t.run.process || 'no process') + ', started ' +\n"
	"    when(t.run.started_ns) + ', ' + plural(t.run.threads, 'thread') + '), the busiest first.'));\n"
	"  body.append(el('h3', { id: 'threads-groups' }, 'Per thread name'),\n"
	"    table(null, head(['Thread name', 'Threads']), t.thread_names.map((g) => el('tr', { 'data-key': g.name },\n"
	"      el('th', { scope: 'row' }, g.name), el('td', { class: 'num' }, String(g.threads)), oncpu(g), ...values(g)))));\n"
	"  body.append(el('h3', { id: 'threads-each' }, 'Per thread'),\n"
	"    table(null, head(['TID', 'Name']), t.threads.map((x) => el('tr', { 'data-key': x.tid },\n"
	"      el('th', { scope: 'row' }, x.tid), el('td', {}, x.comm || ''), oncpu(x), ...values(x)))));\n"
	"  legend(body, t.threads.some((x) => x.low_confidence.length) || t.thread_names.some((x) => x.low_confidence.length));\n"
	"}\n"
	"\n"
	"// A line over the points, oldest left; anomalies red, low confidence hollow.\n"
	"function chart(t) {\n"
	"  const W = 1100, H = 190, L = 60, R = 14, T = 10, B = 26;\n"
	"  const pts = t.points;\n"
	"  const known = pts.filter((p) => p.value !== null).map((p) => p.value);\n"
	"  let lo = Math.min(...known), hi = Math.max(...known);\n"
	"  const pad = Math.max((hi - lo) * 0.1, 0.005);\n"
	"  lo = Math.max(0, lo - pad);\n"
	"  hi += pad;\n"
	"  const x = (i) => L + (pts.length === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (pts.length - 1));\n"
	"  const y = (v) => T + ((hi - v) * (H - T - B)) / (hi - lo);\n"
	"  const g = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart', role: 'img',\n"
	"    'aria-label': t.path + ' over ' + plural(pts.length, 'point') + ', ' + t.anomalies + ' flagged' });\n"
	"  for (let k = 0; k <= 4; k++) {\n"
	"    const v = lo + ((hi - lo) * k) / 4;\n"
	"    g.append(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }),\n"
	"      svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, pct(v)));\n"
	"  }\n"
	"  g.append(svg('text', { x: L, y: H - 6 }, when(pts[0].started_ns)),\n"
	"    svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, when(pts[pts.length - 1].started_ns)));\n"
	"  let d = '', pen = 'M';\n"
	"  pts.forEach((p, i) => {\n"
	"    if (p.value === null) { pen = 'M'; return; }\n"
	"    d += pen + x(i).toFixed(1) + ' ' + y(p.value).toFixed(1) + ' ';\n"
	"    pen = 'L';\n"
	"  });\n"
	"  g.append(svg('path', { d, class: 'line' }));\n"
	"  pts.forEach((p, i) => {\n"
	"    if (p.value === null) return;\n"
	"    g.append(svg('circle', { cx: x(i).toFixed(1), cy: y(p.value).toFixed(1), r: p.anomaly ? 4.5 : 2.2,\n"
	"      class: (p.anomaly ? 'anomaly' : '') + (p.low_confidence ? ' low' : ''), 'data-value': raw(p.value) },\n"
	"    svg('title', {}, p.run_id + ' (' + p.scope_key + ') ' + when(p.started_ns) + ': ' + pct(p.value, p.low_confidence) +\n"
	"      (p.anomaly ? ', anomaly at ' + fixed(p.deviation, 1) + ' sd' : ''))));\n"
	"  });\n"
	"  return g;\n"
	"}\n"
	"\n"
	"function trend(t, cap, body) {\n"
	"  const pts = t.points;\n"
	"  const box = el('div', { class: 'trend', 'data-path': t.path });\n"
	"  box.append(el('h3', { id: 'trend-' + t.path }, t.path),\n"
	"    el('p', {}, plural(pts.length, 'point') + ', oldest first; ' + t.anomalies + (t.anomalies === 1 ? ' anomaly' : ' anomalies') +\n"
	"      ' (more than ' + t.sigma + ' standard deviations from the ' + t.window + ' points before)' +\n"
	"      (pts.length >= cap ? '; the newest ' + cap + ' only: the report keeps at most ' + cap + ' points a trend' : '') + '.'));\n"
	"  if (pts.some((p) => p.value !== null)) box.append(chart(t));\n"
	"  const odd = pts.filter((p) => p.anomaly);\n"
	"  if (odd.length)\n"
	"    box.append(table('Anomalies of ' + t.path, ['Run', 'Started', 'Scope', 'Value', 'Window mean', 'Deviation (sd)'],\n"
	"      odd.map((p) => el('tr', {}, el('th', { scope: 'row' }, p.run_id), el('td', {}, when(p.started_ns)), el('td', {}, p.scope_key),\n"
	"        value(p.value, p.low_confidence), el('td', { class: 'num' }, pct(p.rolling_mean)), el('td', { class: 'num' }, fixed(p.deviation, 1))))));\n"
	"  body.append(box);\n"
	"}\n"
	"\n"
	"function compare(c, meta, body) {\n"
	"  const rank = { regression: 0, improvement: 1 };\n"
	"  const items = c.metrics.map((m, i) => [m, i])\n"
	"    .sort((p, q) => (rank[p[0].change] ?? 2) - (rank[q[0].change] ?? 2) || p[1] - q[1]).map((p) => p[0]);\n"
	"  body.append(el('p', {}, 'B (' + meta.side_b + ', ' + plural(c.runs_b, 'run') + ') against A (' + meta.side_a + ', ' +\n"
	"    plural(c.runs_a, 'run') + '): ', el('strong', { id: 'compare-regressions' }, plural(c.regressions, 'regression')), ', ' +\n"
	"    plural(c.improvements, 'improvement') + ' (Welch\\'s t-test, Cohen\\'s d); regressions first.'));\n"
	"  body.append(table(null, ['Change', 'Node', 'A mean', 'B mean', 'Delta', 'p', 'd'], items.map((m) =>\n"
	"    el('tr', { class: m.change, 'data-path': m.path },\n"
	"      el('td', {}, m.change), el('th', { scope: 'row' }, (m.thread_name ? m.thread_name + ': ' : '') + m.path),\n"
	"      value(m.a.mean, m.low_confidence), value(m.b.mean, m.low_confidence),\n"
	"      el('td', { class: 'num', 'data-value': raw(m.delta) }, pp(m.delta)),\n"
	"      el('td', { class: 'num', 'data-value': raw(m.p_value) }, ptext(m.p_value)),\n"
	"      el('td', { class: 'num' }, fixed(m.effect_size, 2))))));\n"
	"  legend(body, c.metrics.some((m) => m.low_confidence));\n"
	"}\n"
	"\n"
	"function hot(h, cap, body) {\n"
	"  body.append(el('p', {}, h.samples + ' ' + h.unit + ' over ' + plural(h.runs, 'run') + '; ' +\n"
	"    pct(h.unresolved_frames) + ' of the frames without a function name' +\n"
	"    (h.lost_samples ? ', ' + h.lost_samples + ' samples lost' : '') +\n"
	"    (h.functions.length >= cap ? '; the hottest ' + cap + ' functions' : '') + '.'));\n"
	"  body.append(table(null, ['#', 'Self', 'Total', 'Function', 'Module', 'Source'], h.functions.map((f) =>\n"
	"    el('tr', { 'data-function': f.function },\n"
	"      el('td', { class: 'num' }, String(f.rank)), value(f.self, false), value(f.total, false),\n"
	"      el('th', { scope: 'row' }, f.function), el('td', {}, f.module || ''),\n"
	"      el('td', {}, f.file ? f.file.split('/').pop() + ':' + f.line : '')))));\n"
	"}\n"
	"\n"
	"const meta = block('td-meta');\n"
	"const t = block('td-tree');\n"
	"if (t) {\n"
	"  funnel(t, $('funnel-body'));\n"
	"  tree(t, $('tree-body'));\n"
	"}\n"
	"if ($('td-threads')) threads(block('td-threads'), $('threads-body'));\n"
	"for (const b of document.querySelectorAll('script.td-trend')) trend(JSON.parse(b.textContent), meta.trend_points, $('trends-body'));\n"
	"if ($('td-compare')) compare(block('td-compare'), meta, $('compare-body'));\n"
	"if ($('td-hot')) hot(block('td-hot'), meta.hot_functions, $('hot-body'));\n"
	"document.documentElement.classList.add('drawn');\n"
	;

static int no_memory(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory writing the report; free memory and retry");
	return -ENOMEM;
}

/* Text for an element or a quoted attribute. */
static void html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

/*
 * A part's JSON as a data block (json is released). Inside <script> the
 * HTML parser looks for "</script" and "<!--" only: every '<' written as
 * \u003c, the same string to JSON.parse, leaves it nothing to find
 * whatever labels, paths or function names hold.
 */
static int json_block(FILE *out, const char *id, bool trend, json_t *json, char *err, size_t errlen)
{
	char *text = json ? json_dumps(json, JSON_COMPACT) : NULL;

	json_decref(json);
	if (!text)
		return no_memory(err, errlen);
	fprintf(out, "<script type=\"application/json\" id=\"%s\"%s>", id, trend ? " class=\"td-trend\"" : "");
	for (const char *p = text; *p; p++) {
		if (*p == '<')
			fputs("\\u003c", out);
		else
			fputc(*p, out);
	}
	fputs("</script>\n", out);
	free(text);
	return 0;
}

/* What the page says beside the answers: the selection and its own caps. */
static json_t *meta_json(const struct td_report *r)
{
	return json_pack("{s:s, s:I, s:I, s:s?, s:s?}", "title", r->title ? r->title : "all runs",
			 "trend_points", (json_int_t)TD_REPORT_TREND_POINTS,
			 "hot_functions", (json_int_t)TD_REPORT_HOT_FUNCTIONS, "side_a", r->side_a, "side_b", r->side_b);
}

static int write_blocks(FILE *out, const struct td_report *r, const bool *present, char *err, size_t errlen)
{
	int ret = json_block(out, "td-meta", false, meta_json(r), err, errlen);
	char id[32];

	if (!ret && present[SEC_TREE])
		ret = json_block(out, "td-tree", false, td_tree_json(r->tree), err, errlen);
	if (!ret && present[SEC_THREADS])
		ret = json_block(out, "td-threads", false, td_thread_breakdown_json(r->threads), err, errlen);
	for (size_t i = 0; !ret && i < r->nr_trends; i++) {
		if (!r->trends[i])
			continue;
		snprintf(id, sizeof(id), "td-trend-%zu", i);
		ret = json_block(out, id, true, td_trend_json(r->trends[i]), err, errlen);
	}
	if (!ret && present[SEC_COMPARE])
		ret = json_block(out, "td-compare", false, td_comparison_json(r->comparison), err, errlen);
	if (!ret && present[SEC_HOT])
		ret = json_block(out, "td-hot", false, td_hot_json(r->hot), err, errlen);
	return ret;
}

struct flame {
	char *svg;
	size_t len;
	double height;
};

/* The SVG's own height: a data: page cannot tell its frame how tall it is. */
static double svg_height(const char *svg)
{
	const char *tag = strstr(svg, "<svg ");
	const char *height = tag ? strstr(tag, " height=\"") : NULL;

	return height ? strtod(height + strlen(" height=\""), NULL) : 0;
}

/* The flame graph in memory; -ENODATA when it has nothing to draw. */
static int flame_draw(const struct td_folded_set *set, struct flame *f, char *err, size_t errlen)
{
	char title[256];
	struct td_flamegraph_opts opts = { .title = title, .unit = set->unit, .width_px = FLAME_WIDTH };
	FILE *mem = open_memstream(&f->svg, &f->len);
	int ret;

	if (!mem)
		return no_memory(err, errlen);
	snprintf(title, sizeof(title), "topdown: %s", set->event);
	ret = td_flamegraph_svg(mem, set->stacks, set->nr_stacks, &opts, err, errlen);
	if (fclose(mem) != 0 && ret == 0)
		ret = no_memory(err, errlen);
	if (ret == 0)
		f->height = svg_height(f->svg);
	return ret;
}

/* Base64, for the data: URL the flame graph is framed from. */
static void base64(FILE *out, const unsigned char *p, size_t n)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		unsigned long v = (unsigned long)p[i] << 16 | (i + 1 < n ? (unsigned long)p[i + 1] << 8 : 0) |
				  (i + 2 < n ? p[i + 2] : 0);

		fputc(digits[v >> 18 & 63], out);
		fputc(digits[v >> 12 & 63], out);
		fputc(i + 1 < n ? digits[v >> 6 & 63] : '=', out);
		fputc(i + 2 < n ? digits[v & 63] : '=', out);
	}
}

static void write_section(FILE *out, enum section s, const struct flame *flame)
{
	const char *id = sections[s].id;

	fprintf(out, "<section id=\"%s\" aria-labelledby=\"%s-h\">\n<h2 id=\"%s-h\">%s</h2>\n<p class=\"sub\">%s</p>\n",
		id, id, id, sections[s].heading, sections[s].about);
	if (s == SEC_FLAME) {
		/* framed, not inline: the graph's script takes its document for its own */
		fprintf(out, "<iframe class=\"flame\" title=\"Flame graph\" height=\"%.0f\" "
			"src=\"data:image/svg+xml;base64,", flame->height + 2);
		base64(out, (const unsigned char *)flame->svg, flame->len);
		fputs("\"></iframe>\n", out);
	} else {
		fprintf(out, "<div id=\"%s-body\"></div>\n", id);
	}
	fputs("</section>\n", out);
}

static int write_page(FILE *out, const struct td_report *r, const bool *present, const struct flame *flame,
		      char *err, size_t errlen)
{
	const char *title = r->title ? r->title : "all runs";
	int ret;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", out);
	/* the page fetches nothing, whatever its data holds */
	fputs("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-src data:; img-src data:\">\n", out);
	fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>topdown report: ", out);
	html_text(out, title);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>topdown report</h1>\n<p class=\"sub\">",
		style);
	html_text(out, title);
	fputs("</p>\n<noscript><p>The page's script draws the sections; without it their numbers are in the "
	      "JSON blocks of its source.</p></noscript>\n</header>\n", out);
	fputs("<nav aria-labelledby=\"contents-h\">\n<h2 id=\"contents-h\">Contents</h2>\n<ol>\n", out);
	for (int s = 0; s < NR_SECTIONS; s++)
		if (present[s])
			fprintf(out, "<li><a href=\"#%s\">%s</a></li>\n", sections[s].id, sections[s].heading);
	fputs("</ol>\n</nav>\n<main>\n", out);
	for (int s = 0; s < NR_SECTIONS; s++)
		if (present[s])
			write_section(out, s, flame);
	fputs("</main>\n<footer><p>Written by topdown report. Each section is drawn from the JSON beside it in "
	      "this file: what the command its heading names prints with --json.</p></footer>\n", out);
	ret = write_blocks(out, r, present, err, errlen);
	if (ret == 0)
		fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", script);
	return ret;
}

int td_report_html(FILE *out, const struct td_report *r, char *err, size_t errlen)
{
	bool present[NR_SECTIONS] = {
		[SEC_FUNNEL] = r->tree, [SEC_TREE] = r->tree, [SEC_THREADS] = r->threads,
		[SEC_COMPARE] = r->comparison, [SEC_HOT] = r->hot,
	};
	struct flame flame = { 0 };
	bool any = false;
	int ret = 0;

	for (size_t i = 0; i < r->nr_trends; i++)
		present[SEC_TRENDS] |= r->trends[i] != NULL;
	if (r->folded) {
		ret = flame_draw(r->folded, &flame, err, errlen);
		present[SEC_FLAME] = ret == 0;
		ret = ret == -ENODATA ? 0 : ret;
	}
	for (int s = 0; s < NR_SECTIONS; s++)
		any |= present[s];
	if (ret == 0 && !any) {
		snprintf(err, errlen, "nothing to report: the selection has no Top-Down rows, trends, comparison or samples");
		ret = -ENODATA;
	}
	if (ret == 0)
		ret = write_page(out, r, present, &flame, err, errlen);
	if (ret == 0 && (fflush(out) != 0 || ferror(out))) {
		snprintf(err, errlen, "cannot write the report: %s", strerror(errno));
		ret = -EIO;
	}
	free(flame.svg);
	return ret;
}
