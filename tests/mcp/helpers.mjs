// SPDX-License-Identifier: BSD-3-Clause
// Shared by the MCP tests: the topdown binary, a store filled through
// `topdown import` from the perf stat files under tests/data/import, and a
// connected SDK client.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
export const topdown = process.env.TD_TOPDOWN
  ? path.resolve(process.env.TD_TOPDOWN)
  : path.join(root, 'build/topdown');

const data = (name) => path.join(root, 'tests/data/import', name);

function importRun(db, file, model, labels, extra = []) {
  const args = ['import', data(file), '--cpu-model', model, '--db', db, '--json', ...extra];
  for (const [key, value] of Object.entries(labels)) args.push('--label', `${key}=${value}`);
  return JSON.parse(execFileSync(topdown, args, { encoding: 'utf8' })).run_id;
}

// Five runs: two of main and two of feature (redis-server, test get), one
// per-thread run of an Arm host. perf's own figures for skx-l1.csv are
// 36.3% Frontend_Bound and 45.4% Retiring.
export function makeStore() {
  const dir = mkdtempSync(path.join(tmpdir(), 'td-mcp-'));
  const db = path.join(dir, 'runs.db');
  const redis = ['--process', 'redis-server'];
  const runs = {
    main: [
      importRun(db, 'skx-l1.csv', 'skx', { git_branch: 'main', test_name: 'get' }, redis),
      importRun(db, 'skx-l1.csv', 'skx', { git_branch: 'main', test_name: 'get' }, redis),
    ],
    feature: [
      importRun(db, 'spr-l1-percpu.csv', 'spr', { git_branch: 'feature', test_name: 'get' }, redis),
      importRun(db, 'spr-l1-percpu.csv', 'spr', { git_branch: 'feature', test_name: 'get' }, redis),
    ],
    arm: importRun(db, 'neoverse-v2-l1-per-thread.json', 'neoverse-v2', { git_branch: 'arm' }),
  };
  return { dir, db, runs, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// A run collected with --sample from td-workload's known split (split_a:
// 70% in hot_a, 30% in hot_b); needs root.
export function sampleRun(db, labels) {
  const workload = process.env.TD_WORKLOAD
    ? path.resolve(process.env.TD_WORKLOAD)
    : path.join(path.dirname(topdown), 'td-workload');
  const child = spawn(workload, ['--duration-ms', '4000', '--io-threads', '0', '--split'], { stdio: 'ignore' });
  try {
    const args = ['collect', '--pid', String(child.pid), '--duration', '3s', '--sample', '--sample-freq', '499',
      '--db', db, '--json'];
    for (const [key, value] of Object.entries(labels)) args.push('--label', `${key}=${value}`);
    return JSON.parse(execFileSync(topdown, args, { encoding: 'utf8' })).run_id;
  } finally {
    child.kill();
  }
}

// `topdown mcp-serve --transport http` on a free port: the server
// process and the URL it tells on stderr.
export function serveHttp(args) {
  const server = spawn(topdown, ['mcp-serve', '--transport', 'http', '--port', '0', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const url = new Promise((resolve, reject) => {
    server.stderr.on('data', (chunk) => {
      log += chunk;
      const served = /serving MCP at (\S+)/.exec(log);
      if (served) resolve(new URL(served[1]));
    });
    server.on('exit', (code) => reject(new Error(`mcp-serve exited (${code}) before serving: ${log}`)));
  });
  return { server, url };
}

// A connected SDK client, over stdio, or over Streamable HTTP when
// TD_MCP_TRANSPORT=http (sdk_http.test.mjs runs sdk.test.mjs that way).
// client.close() also ends the HTTP session and stops that server.
export async function connect(args, options = {}) {
  const client = new Client({ name: 'topdown-tests', version: '1.0.0' }, options);
  if (process.env.TD_MCP_TRANSPORT !== 'http') {
    const transport = new StdioClientTransport({
      command: topdown,
      args: ['mcp-serve', ...args],
      stderr: 'pipe',
    });
    await client.connect(transport);
    return { client, transport };
  }
  const { server, url } = serveHttp(args);
  const transport = new StreamableHTTPClientTransport(await url);
  await client.connect(transport);
  const close = client.close.bind(client);
  client.close = async () => {
    await transport.terminateSession();
    await close();
    server.kill('SIGTERM');
  };
  return { client, transport, server };
}

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
