// SPDX-License-Identifier: BSD-3-Clause
// The flame graph SVG (user/render/flamegraph.c) in Debian's headless
// Chromium: it parses, its script runs without errors, and a person's
// hover, click, search and toggles do what the page says. The graphs come
// from tests/test_flamegraph.c (TD_FLAMEGRAPH_OUT); TD_BUILD names the
// build directory (build): its tests/test_flamegraph writes them, and the
// screenshots go there (flamegraph.png, flamegraph-diff.png).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const build = path.resolve(here, '../..', process.env.TD_BUILD || 'build');
const chromiumPath = process.env.TD_CHROMIUM || '/usr/bin/chromium';
const AREA = 1180; // the default width less the margins

let dir;
let browser;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'td-flame-'));
  execFileSync(path.join(build, 'tests/test_flamegraph'), {
    env: { ...process.env, TD_FLAMEGRAPH_OUT: dir },
    stdio: 'pipe',
  });
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// A page showing file (with hash), and the errors it reports as it runs.
async function open(file, hash = '') {
  const page = await browser.newPage({ viewport: { width: 1200, height: 260 } });
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(pathToFileURL(path.join(dir, file)).href + hash);
  return { page, errors };
}

// The frame's id, rect geometry, fill and label, found by its name (the
// tooltip's first line); null when there is no such frame.
function frame(page, name) {
  return page.evaluate((name) => {
    for (const g of document.querySelectorAll('g.f')) {
      if (g.querySelector('title').textContent.split('\n')[0] !== name) continue;
      const r = g.querySelector('rect');
      return {
        id: g.id,
        shown: g.style.display !== 'none',
        ancestor: g.classList.contains('anc'),
        x: parseFloat(r.getAttribute('x')),
        y: parseFloat(r.getAttribute('y')),
        width: parseFloat(r.getAttribute('width')),
        fill: r.getAttribute('fill'),
        label: g.querySelector('text').textContent,
      };
    }
    return null;
  }, name);
}

// The whole graph: a full-page screenshot never ends on an SVG document
// in Chromium, so the viewport takes the SVG's height instead.
async function screenshot(page, file) {
  const height = await page.evaluate(() => document.documentElement.height.baseVal.value);
  await page.setViewportSize({ width: 1200, height: Math.ceil(height) });
  await page.screenshot({ path: path.join(build, file) });
}

const text = (page, id) => page.locator(`#${id}`).textContent();
const hash = (page) => page.evaluate(() => decodeURIComponent(location.hash));
const rgb = (fill) => fill.match(/\d+/g).map(Number);

test('the SVG parses and its script runs without errors', async () => {
  const { page, errors } = await open('profile.svg');
  const root = await page.evaluate(() => ({
    name: document.documentElement.localName,
    parseErrors: document.getElementsByTagName('parsererror').length,
    frames: document.querySelectorAll('g.f').length,
    external: document.querySelectorAll('[href], script[src]').length,
  }));
  assert.deepEqual(root, { name: 'svg', parseErrors: 0, frames: 12, external: 0 });
  // the escaped and the replaced names read back as they were meant
  assert.ok(await frame(page, 'parse<std::string> & "co"'));
  assert.ok(await frame(page, 'na\u00efve_\ufffd'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('hovering a frame shows its name, count in the unit and share', async () => {
  const { page, errors } = await open('profile.svg');
  const f = await frame(page, 'hot_a');
  await page.locator(`#${f.id} rect`).hover();
  assert.equal(await text(page, 'details'), 'hot_a: 70 samples, 70.00%');
  assert.equal(await page.locator(`#${f.id} title`).textContent(), 'hot_a\n70 samples, 70.00%');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a click zooms into a frame, the hash keeps it, reset restores', async () => {
  const { page, errors } = await open('profile.svg');
  const before = await frame(page, 'hot_a');
  assert.equal(before.width, 826);
  await page.locator(`#${before.id} rect`).click();
  const zoomed = await frame(page, 'hot_a');
  assert.equal(zoomed.x, 10);
  assert.equal(zoomed.width, AREA);
  assert.equal((await frame(page, 'memcpy')).width, 337.14); // 20 of 70
  assert.equal((await frame(page, 'hot_b')).shown, false); // a sibling
  assert.equal((await frame(page, 'init')).shown, false);
  const run = await frame(page, 'run');
  assert.ok(run.shown && run.ancestor && run.width === AREA);
  assert.equal(await hash(page), `#zoom=${before.id}`);

  await page.reload(); // the hash brings the zoom back
  assert.equal((await frame(page, 'hot_a')).width, AREA);
  assert.equal((await frame(page, 'hot_b')).shown, false);

  await page.locator('#reset').click();
  assert.equal(await hash(page), '');
  assert.equal((await frame(page, 'hot_a')).width, 826);
  assert.equal((await frame(page, 'hot_b')).shown, true);
  assert.equal((await frame(page, 'run')).ancestor, false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('search highlights matches and counts nested matches once', async () => {
  const { page, errors } = await open('profile.svg');
  const answers = ['hot_a', '^hot_', '(', ''];
  page.on('dialog', (d) => d.accept(answers.shift()));

  await page.keyboard.press('/');
  assert.equal(await text(page, 'matched'), 'Matched: 70.0% (70 of 100 samples)');
  assert.equal((await frame(page, 'hot_a')).fill, 'rgb(230,0,230)');
  assert.equal((await frame(page, 'hot_a_helper')).fill, 'rgb(230,0,230)');
  assert.notEqual((await frame(page, 'memcpy')).fill, 'rgb(230,0,230)');
  assert.equal(await hash(page), '#search=hot_a');

  await page.keyboard.press('Control+f');
  assert.equal(await text(page, 'matched'), 'Matched: 90.0% (90 of 100 samples)');

  await page.locator('#search').click(); // not a regex: said, nothing thrown
  assert.match(await text(page, 'matched'), /^Not a regular expression: \(/);

  await page.locator('#search').click(); // empty clears
  assert.equal(await text(page, 'matched'), '');
  assert.equal(await hash(page), '');
  assert.notEqual((await frame(page, 'hot_a')).fill, 'rgb(230,0,230)');

  // a shared link with zoom and search
  const f = await frame(page, 'run');
  await page.goto(page.url().split('#')[0] + `#zoom=${f.id}&search=memcpy`);
  await page.reload();
  assert.equal((await frame(page, 'run')).width, AREA);
  assert.equal(await text(page, 'matched'), 'Matched: 20.0% (20 of 100 samples)');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the icicle toggle flips the order of depths', async () => {
  const { page, errors } = await open('profile.svg');
  const flame = [await frame(page, 'all'), await frame(page, 'main'), await frame(page, 'run')];
  assert.ok(flame[0].y > flame[1].y && flame[1].y > flame[2].y);
  assert.equal(await text(page, 'invert'), 'Icicle');
  await page.locator('#invert').click();
  const icicle = [await frame(page, 'all'), await frame(page, 'main'), await frame(page, 'run')];
  assert.ok(icicle[0].y < icicle[1].y && icicle[1].y < icicle[2].y);
  assert.equal(icicle[0].y, 52);
  assert.equal(await text(page, 'invert'), 'Flame');
  assert.equal(await hash(page), '#inverted=1');
  await page.locator('#invert').click();
  assert.equal((await frame(page, 'all')).y, flame[0].y);

  await page.goto(page.url().split('#')[0]);
  await screenshot(page, 'flamegraph.png');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a differential graph: red hotter, blue cooler, negate sizes by the base', async () => {
  const { page, errors } = await open('diff.svg');
  const hot = rgb((await frame(page, 'hot_a')).fill);
  const cool = rgb((await frame(page, 'hot_b')).fill);
  assert.ok(hot[0] > hot[2] + 100, `hot_a is ${hot}`);
  assert.ok(cool[2] > cool[0] + 100, `hot_b is ${cool}`);
  assert.equal((await frame(page, 'hot_a')).width, 708); // 60%
  assert.equal((await frame(page, 'removed')).shown, false); // no width in the new set

  const f = await frame(page, 'hot_a');
  await page.locator(`#${f.id} rect`).hover();
  assert.equal(await text(page, 'details'),
    'hot_a: new: 60 L3 misses, 60.00%; base: 30 L3 misses, 30.00%; change: +30.00 points of the total');

  await screenshot(page, 'flamegraph-diff.png');
  await page.locator('#negate').click();
  assert.equal((await frame(page, 'hot_a')).width, 354); // 30%
  assert.equal((await frame(page, 'removed')).shown, true);
  assert.deepEqual(rgb((await frame(page, 'hot_a')).fill), hot); // colours keep their meaning
  assert.equal(await hash(page), '#negate=1');
  assert.match(await text(page, 'legend'), /^width: base set/);

  page.on('dialog', (d) => d.accept('removed'));
  await page.keyboard.press('/');
  assert.equal(await text(page, 'matched'), 'Matched: 10.0% (10 of 100 L3 misses)');
  assert.deepEqual(errors, []);
  await page.close();
});

// promise, or a failure once ms have passed without it settling.
function within(ms, promise, what) {
  let timer;
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

test('a search that would backtrack for ever runs as plain text, and the page answers', async () => {
  // (A+)+B on 30 A's is 2^30 steps of a regular expression engine: minutes
  const link = '#search=' + encodeURIComponent('(A+)+B');
  const { page, errors } = await within(5000, open('redos.svg', link), 'loading the page');
  assert.equal(await within(1000, text(page, 'matched'), 'reading the match'),
    'Matched as plain text (not a safe regular expression): 10.0% (10 of 100 samples)');
  assert.equal((await frame(page, 'parse_(A+)+B')).fill, 'rgb(230,0,230)');
  await screenshot(page, 'flamegraph-search.png');

  // a safe expression is still one; a backreference or a repeated alternation is not
  const answers = ['^A+$', '(A|AA)+B', 'A\\1', 'parse_\\(A\\+\\)'];
  page.on('dialog', (d) => d.accept(answers.shift()));
  await page.keyboard.press('/');
  assert.equal(await text(page, 'matched'), 'Matched: 90.0% (90 of 100 samples)');
  await page.keyboard.press('/');
  assert.match(await text(page, 'matched'), /^Matched as plain text .*: 0\.0% /);
  await page.keyboard.press('/');
  assert.match(await text(page, 'matched'), /^Matched as plain text .*: 0\.0% /);
  await page.keyboard.press('/');
  assert.equal(await text(page, 'matched'), 'Matched: 10.0% (10 of 100 samples)');
  assert.deepEqual(errors, []);
  await page.close();
});
