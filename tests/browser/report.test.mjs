// SPDX-License-Identifier: BSD-3-Clause
// topdown report's page (user/render/report.c) in Debian's headless
// Chromium, opened from file:// as a person would: it asks the network for
// nothing, its script runs without errors, the numbers it shows are the
// ones `topdown query ... --json` and `topdown compare ... --json` print
// for the same selection, sections come and go with their data, the
// keyboard reaches the contents, and 10,000 runs stay within a size and
// load-time budget. The store is filled through the CLI (import, and as
// root a sampled collect of td-workload); TD_BUILD names the build
// directory (build), where the screenshots go (report.png, report-flame.png).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const build = path.resolve(root, process.env.TD_BUILD || 'build');
const topdown = path.join(build, 'topdown');
const chromiumPath = process.env.TD_CHROMIUM || '/usr/bin/chromium';
const isRoot = process.getuid?.() === 0;

// 10,000 runs: the page stays below 5 MB and draws within 2 s.
const BIG_RUNS = 10000;
const BIG_MAX_BYTES = 5 * 1024 * 1024;
const BIG_MAX_LOAD_MS = 2000;

let dir;
let db;
let browser;
let sampled = false;

const td = (args) => execFileSync(topdown, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const tdJson = (args) => JSON.parse(td([...args, '--db', db, '--json']));

function importRun(file, model, labels, extra = []) {
  const args = ['import', path.join(root, 'tests/data/import', file), '--cpu-model', model, '--db', db, ...extra];
  for (const [key, value] of Object.entries(labels)) args.push('--label', `${key}=${value}`);
  td(args);
}

// A run collected with --sample from td-workload's split, labeled git_branch=main.
function sampleRun() {
  const child = spawn(path.join(build, 'td-workload'), ['--duration-ms', '4000', '--io-threads', '0', '--split'],
    { stdio: 'ignore' });
  try {
    td(['collect', '--pid', String(child.pid), '--duration', '3s', '--sample', '--sample-freq', '499',
      '--db', db, '--label', 'git_branch=main']);
  } finally {
    child.kill();
  }
}

// `topdown report ARGS --output FILE` on the store: the file's path.
function report(name, args) {
  const file = path.join(dir, name);
  td(['report', ...args, '--db', db, '--output', file]);
  return file;
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'td-report-'));
  db = path.join(dir, 'runs.db');
  const redis = ['--process', 'redis-server'];
  for (let i = 0; i < 3; i++) importRun('skx-l1.csv', 'skx', { git_branch: 'main', test_name: 'get' }, redis);
  for (let i = 0; i < 2; i++)
    importRun('spr-l1-percpu.csv', 'spr', { git_branch: 'feature', test_name: 'get' }, redis);
  importRun('neoverse-v2-l1-per-thread.json', 'neoverse-v2', { git_branch: 'arm' });
  if (isRoot) {
    sampleRun();
    sampled = true;
  }
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The page of file at 1280x800, with what it asked the network for and
// the errors it reported; fails on any request that is not the file itself
// or the flame graph's data: frame.
async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const network = [];
  const errors = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    network.push(url);
    return route.abort();
  });
  page.on('request', (req) => {
    if (!/^(file|data):/.test(req.url())) network.push(req.url());
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  const start = performance.now();
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('html.drawn');
  const loadMs = performance.now() - start;
  return { page, network, errors, loadMs };
}

function clean({ network, errors }) {
  assert.deepEqual(network, [], 'the page asked the network');
  assert.deepEqual(errors, [], 'the page reported errors');
}

const pct = (v, low) => (v === null ? 'n/a' : (100 * v).toFixed(1) + '%' + (low ? '~' : ''));
const raw = (v) => (v === null ? '' : String(v));

test('the sections show what query --json and compare --json print', async () => {
  const filter = ['--label', 'test_name=get'];
  const file = report('compare.html', [...filter, '--label-a', 'git_branch=main', '--label-b', 'git_branch=feature']);
  const shown = await open(file);
  const { page } = shown;
  clean(shown);

  const funnel = tdJson(['query', '--funnel', ...filter]);
  const frontend = funnel.nodes.find((n) => n.path === 'Frontend_Bound');
  assert.ok(frontend, 'the test runs have Frontend_Bound');
  const cell = page.locator('#funnel li[data-path="Frontend_Bound"] .num');
  assert.equal(await cell.getAttribute('data-value'), String(frontend.value));
  assert.equal(await cell.textContent(), pct(frontend.value, frontend.low_confidence));
  assert.equal(await page.locator('#funnel-useful').getAttribute('data-value'), raw(funnel.useful));

  const tree = tdJson(['query', '--tree', ...filter]);
  const rows = await page.locator('#tree tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    path: tr.dataset.path, value: tr.querySelector('[data-value]').dataset.value,
    text: tr.querySelector('[data-value]').textContent, mark: tr.lastElementChild.textContent,
  })));
  assert.ok(rows.length > 0);
  assert.deepEqual(rows, tree.nodes.map((n) => ({
    path: n.path, value: raw(n.value), text: pct(n.value, n.low_confidence),
    mark: (n.crossed ? '\u2717' : '\u2713') + ' ' + n.crossed_samples + '/' + n.samples,
  })));

  const threads = tdJson(['query', '--threads', ...filter]);
  const oncpu = await page.locator('#threads tbody').last().locator('tr').evaluateAll((trs) =>
    trs.map((tr) => [tr.dataset.key, tr.querySelector('[data-ns]').dataset.ns]));
  assert.ok(oncpu.length > 0);
  assert.deepEqual(oncpu, threads.threads.map((t) => [t.tid, String(t.oncpu_ns)]));

  for (const node of funnel.nodes.filter((n) => n.level === 1).map((n) => n.path)) {
    const trend = tdJson(['query', '--trend', node, '--top-n', '1000', ...filter]);
    const points = await page.locator(`.trend[data-path="${node}"] circle`).evaluateAll((cs) =>
      cs.map((c) => [c.dataset.value, c.classList.contains('anomaly')]));
    assert.ok(points.length > 0, `${node} has points`);
    assert.deepEqual(points, trend.points.filter((p) => p.value !== null).map((p) => [raw(p.value), p.anomaly]));
  }

  const cmp = tdJson(['compare', ...filter, '--label-a', 'git_branch=main', '--label-b', 'git_branch=feature']);
  const changes = await page.locator('#compare tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    path: tr.dataset.path, change: tr.className,
    delta: tr.querySelectorAll('[data-value]')[2].dataset.value,
  })));
  const rank = (c) => ({ regression: 0, improvement: 1 })[c] ?? 2;
  assert.ok(cmp.metrics.length > 0);
  assert.equal(changes.length, cmp.metrics.length);
  assert.deepEqual(changes.map((c) => rank(c.change)), [...changes.map((c) => rank(c.change))].sort(), 'regressions first');
  for (const m of cmp.metrics)
    assert.deepEqual(changes.find((c) => c.path === m.path), { path: m.path, change: m.change, delta: raw(m.delta) });
  assert.equal(await page.locator('#compare-regressions').textContent(),
    cmp.regressions + (cmp.regressions === 1 ? ' regression' : ' regressions'));

  // no run of test_name=get was sampled: no hot functions, no flame graph, nothing in the contents
  assert.equal(await page.locator('#hot, #flamegraph, a[href="#hot"], a[href="#flamegraph"]').count(), 0);
  await page.screenshot({ path: path.join(build, 'report.png') });
  await page.close();
});

test('the keyboard reaches the contents first, and its links lead to the sections', async () => {
  const shown = await open(report('keys.html', ['--label', 'git_branch=main']));
  const { page } = shown;
  clean(shown);
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => ({
    inNav: !!document.activeElement.closest('nav'), href: document.activeElement.getAttribute('href'),
  }));
  assert.deepEqual(first, { inNav: true, href: '#funnel' });
  const links = await page.locator('nav a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  for (const href of links) assert.equal(await page.locator(href + ' h2').count(), 1, `${href} has its heading`);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('href')), links[1]);
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => location.hash), links[1]);
  assert.equal(await page.locator('h1').count(), 1);
  await page.close();
});

test('a sampled run brings the hot functions and the flame graph', { skip: !isRoot && 'collect --sample needs root' },
  async () => {
    assert.ok(sampled);
    const filter = ['--label', 'git_branch=main'];
    const shown = await open(report('sampled.html', filter));
    const { page } = shown;
    clean(shown);
    const hot = tdJson(['query', '--hot', '--top-n', '50', ...filter]);
    const self = await page.locator('#hot tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.dataset.function, tr.querySelector('[data-value]').dataset.value]));
    assert.ok(self.length > 0);
    assert.deepEqual(self, hot.functions.map((f) => [f.function, raw(f.self)]));
    const frame = page.frames().find((f) => f.url().startsWith('data:image/svg+xml'));
    assert.ok(frame, 'the flame graph is framed');
    const names = await frame.evaluate(() =>
      [...document.querySelectorAll('g.f title')].map((t) => t.textContent.split('\n')[0]));
    assert.ok(names.includes('hot_a') && names.includes('hot_b'), 'the workload\'s functions are drawn');
    await page.locator('#flamegraph').scrollIntoViewIfNeeded();
    // a frame scrolled into view paints on a later frame of the page
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.screenshot({ path: path.join(build, 'report-flame.png') });
    await page.close();
  });

test('an empty selection writes no file, says why in one line and exits 0', () => {
  const file = path.join(dir, 'none.html');
  const run = spawnSync(topdown, ['report', '--label', 'git_branch=nope', '--db', db, '--output', file],
    { encoding: 'utf8' });
  assert.equal(run.status, 0);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^topdown report: no stored run matches[^\n]*\n$/);
  assert.equal(existsSync(file), false);
});

test(`${BIG_RUNS} runs: at most 5 MB, drawn within 2 s`, async (t) => {
  const gen = path.join(build, 'td-gen-runs');
  if (!existsSync(gen)) return t.skip('no td-gen-runs: make bench-tools builds it');
  const bigDb = path.join(dir, 'big.db');
  execFileSync(gen, ['--runs', String(BIG_RUNS), '--threads', '2', '--metrics', '10', '--seed', '7', '--db', bigDb],
    { stdio: 'ignore' });
  const file = path.join(dir, 'big.html');
  td(['report', '--db', bigDb, '--output', file]);
  const bytes = statSync(file).size;
  assert.ok(bytes <= BIG_MAX_BYTES, `${bytes} bytes`);
  const shown = await open(file);
  clean(shown);
  assert.ok(shown.loadMs <= BIG_MAX_LOAD_MS, `drawn in ${shown.loadMs.toFixed(0)} ms`);
  const points = await shown.page.locator('.trend').first().locator('circle').count();
  assert.equal(points, 1000);
  assert.match(await shown.page.locator('.trend p').first().textContent(), /the report keeps at most 1000 points/);
  t.diagnostic(`${BIG_RUNS} runs: ${(bytes / 1e6).toFixed(2)} MB, drawn in ${shown.loadMs.toFixed(0)} ms`);
  await shown.page.close();
});
