// SPDX-License-Identifier: BSD-3-Clause
// topdown mcp-serve driven by the MCP Inspector's command-line mode, the
// way people try a server by hand.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { makeStore, serveHttp, topdown } from './helpers.mjs';

const run = promisify(execFile);
const inspector = path.join(path.dirname(fileURLToPath(import.meta.url)),
  'node_modules/.bin/mcp-inspector');

let store;

before(() => {
  store = makeStore();
});

after(() => store?.remove());

async function inspect(...args) {
  const { stdout } = await run(inspector, ['--cli', topdown, 'mcp-serve', '--db', store.db, ...args],
    { timeout: 60000 });
  return JSON.parse(stdout);
}

test('tools/list', async () => {
  const { tools } = await inspect('--method', 'tools/list');
  assert.equal(tools.length, 14);
  assert.ok(tools.every((t) => t.inputSchema.additionalProperties === false));
});

test('tools/call', async () => {
  const result = await inspect('--method', 'tools/call', '--tool-name', 'query_bottlenecks',
    '--tool-arg', 'process=redis-server', '--tool-arg', 'limit=1');
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.bottlenecks.length, 1);
  assert.equal(result.structuredContent.bottlenecks[0].path, 'Frontend_Bound');
  assert.match(result.content[0].text, /Frontend_Bound/);
});

test('tools/call list_labels', async () => {
  const result = await inspect('--method', 'tools/call', '--tool-name', 'list_labels',
    '--tool-arg', 'key=git_branch', '--tool-arg', 'limit=2');
  assert.equal(result.isError, false);
  assert.deepEqual(result.structuredContent.keys[0].values.map((v) => v.value), ['feature', 'main']);
  assert.equal(result.structuredContent.truncated, true);
});

test('resources/read', async () => {
  const result = await inspect('--method', 'resources/read', '--uri', `topdown://runs/${store.runs.arm}`);
  assert.equal(JSON.parse(result.contents[0].text).run_id, store.runs.arm);
});

test('prompts/get', async () => {
  const result = await inspect('--method', 'prompts/get', '--prompt-name', 'explain_regression',
    '--prompt-args', `run_a=${store.runs.main[0]}`, `run_b=${store.runs.feature[0]}`);
  assert.match(result.messages[0].content.text, new RegExp(`run_b "${store.runs.feature[0]}"`));
});

// The same Inspector, against `topdown mcp-serve --transport http`.
test('tools/list and tools/call over Streamable HTTP', async () => {
  const { server, url } = serveHttp(['--db', store.db]);
  try {
    const target = (await url).href;
    const http = async (...args) => JSON.parse((await run(inspector,
      ['--cli', target, '--transport', 'http', ...args], { timeout: 60000 })).stdout);
    const { tools } = await http('--method', 'tools/list');
    assert.equal(tools.length, 14);
    const result = await http('--method', 'tools/call', '--tool-name', 'query_bottlenecks',
      '--tool-arg', 'process=redis-server', '--tool-arg', 'limit=1');
    assert.equal(result.isError, false);
    assert.equal(result.structuredContent.bottlenecks[0].path, 'Frontend_Bound');
  } finally {
    server.kill('SIGTERM');
  }
});
