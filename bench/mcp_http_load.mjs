// SPDX-License-Identifier: BSD-3-Clause
// The load client of bench/bench_mcp_http.sh: SESSIONS concurrent MCP
// sessions over Streamable HTTP, each initialize then CALLS tools/call
// round trips cycling through the tools an assistant asks most, with
// Node's own fetch (no SDK: the client's cost stays small and plain).
// Prints the per-tool latency table, the error count and the first
// errors' reasons (status and message) as JSON lines.
//
// usage: node bench/mcp_http_load.mjs URL SESSIONS CALLS
const [url, sessionsArg, callsArg] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const calls = Number(callsArg);
const calls_of = [
  ['query_bottlenecks', { labels: { git_branch: 'branch-07' }, limit: 5 }],
  ['get_funnel', { labels: { git_branch: 'branch-07', test_name: 'test-07' } }],
  ['list_profiling_runs', { limit: 10 }],
  ['list_labels', { key: 'git_branch', limit: 5 }],
  ['explain_metric', { name: 'DRAM_Bound' }],
];
const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

async function post(session, body) {
  const h = session ? { ...headers, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' } : headers;
  const res = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify(body) });
  const text = await res.text();
  return { res, text };
}

const times = new Map(calls_of.map(([name]) => [name, []]));
let errors = 0;
const reasons = new Map(); // "tool: status message" -> count

function failed(name, why) {
  errors++;
  const key = `${name}: ${why}`.slice(0, 200);
  reasons.set(key, (reasons.get(key) ?? 0) + 1);
}

async function run(index) {
  const init = await post(null, {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `load-${index}`, version: '1' } },
  });
  const session = init.res.headers.get('mcp-session-id');
  if (init.res.status !== 200 || !session) {
    for (let i = 0; i < calls; i++) failed('initialize', `${init.res.status} ${init.text}`);
    return;
  }
  await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  for (let i = 0; i < calls; i++) {
    const [name, args] = calls_of[(i + index) % calls_of.length];
    const start = process.hrtime.bigint();
    try {
      const { res, text } = await post(session, { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name, arguments: args } });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const answer = JSON.parse(text);
      if (res.status !== 200 || answer.error || answer.result?.isError)
        failed(name, `${res.status} ${JSON.stringify(answer.error ?? answer.result?.content ?? '')}`);
      else times.get(name).push(ms);
    } catch (e) {
      failed(name, `${e.name}: ${e.message} ${e.cause?.code ?? ''}`);
    }
  }
  await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': session } });
}

const wall = process.hrtime.bigint();
await Promise.all(Array.from({ length: sessions }, (_, i) => run(i)));
const seconds = Number(process.hrtime.bigint() - wall) / 1e9;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
for (const [name, list] of times) {
  list.sort((a, b) => a - b);
  console.log(JSON.stringify({ tool: name, n: list.length, p50: quantile(list, 0.5), p99: quantile(list, 0.99) }));
}
console.log(JSON.stringify({ calls: sessions * calls, errors, seconds }));
for (const [why, n] of reasons) console.log(JSON.stringify({ error: why, n }));
