// SPDX-License-Identifier: BSD-3-Clause
// topdown mcp-serve driven by the official TypeScript SDK client
// (Client + StdioClientTransport), as assistants drive it; sdk_http.test.mjs
// runs it again over Streamable HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import Ajv2020 from 'ajv/dist/2020.js';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

import { connect, isRoot, makeStore, sampleRun } from './helpers.mjs';

const TOOLS = [
  'collect_topdown', 'query_bottlenecks', 'query_by_bottleneck', 'get_funnel', 'compare_runs',
  'compare_by_labels', 'explain_metric', 'list_profiling_runs', 'get_thread_breakdown',
  'get_run_tree', 'query_trend', 'list_labels', 'get_hot_functions', 'get_flamegraph',
];

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });

let store;
let session;
let tools;

before(async () => {
  store = makeStore();
  session = await connect(['--db', store.db]);
  tools = new Map((await session.client.listTools()).tools.map((t) => [t.name, t]));
});

after(async () => {
  await session?.client.close();
  store?.remove();
});

// Calls a tool, checks the result against the tool's outputSchema with our
// own validator (the SDK checks it too), and returns it.
async function call(name, args) {
  const result = await session.client.callTool({ name, arguments: args });
  assert.equal(result.isError, false, `${name} failed: ${result.content?.[0]?.text}`);
  assert.equal(result.content[0].type, 'text');
  assert.ok(result.content[0].text.length > 0);
  const validate = ajv.compile(tools.get(name).outputSchema);
  assert.ok(validate(result.structuredContent), JSON.stringify(validate.errors));
  return result;
}

async function callError(name, args) {
  const result = await session.client.callTool({ name, arguments: args });
  assert.equal(result.isError, true);
  return result.content[0].text;
}

async function protocolError(promise, code) {
  await assert.rejects(promise, (err) => err instanceof McpError && err.code === code);
}

const close = (got, want, tolerance = 0.0006) =>
  assert.ok(Math.abs(got - want) <= tolerance, `got ${got}, want ${want}`);

describe('lifecycle', () => {
  test('initialize names the server and its capabilities', () => {
    const info = session.client.getServerVersion();
    const caps = session.client.getServerCapabilities();
    assert.equal(info.name, 'topdown');
    for (const cap of ['tools', 'resources', 'prompts', 'logging', 'completions'])
      assert.ok(caps[cap], `capability ${cap}`);
    assert.match(session.client.getInstructions(), /query_bottlenecks/);
  });

  test('ping', async () => {
    assert.deepEqual(await session.client.ping(), {});
  });
});

describe('tools/list', () => {
  test('lists every tool with schemas and annotations', () => {
    assert.deepEqual([...tools.keys()].sort(), [...TOOLS].sort());
    for (const t of tools.values()) {
      assert.equal(t.inputSchema.type, 'object');
      assert.equal(t.inputSchema.additionalProperties, false, t.name);
      assert.ok(ajv.compile(t.inputSchema), t.name);
      assert.equal(t.outputSchema.type, 'object');
      assert.ok(ajv.compile(t.outputSchema), t.name);
      assert.equal(t.annotations.readOnlyHint, t.name !== 'collect_topdown', t.name);
      assert.equal(t.annotations.destructiveHint, false);
      for (const [name, arg] of Object.entries(t.inputSchema.properties))
        assert.ok(arg.description, `${t.name}.${name} has a description`);
    }
  });

  test('pages with nextCursor', async () => {
    const paged = await connect(['--db', store.db, '--page-size', '5']);
    try {
      const names = [];
      let cursor;
      let pages = 0;
      do {
        const page = await paged.client.listTools(cursor ? { cursor } : {});
        assert.ok(page.tools.length <= 5);
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(names.sort(), [...TOOLS].sort());
      await protocolError(paged.client.listTools({ cursor: 'nonsense' }), -32602);
    } finally {
      await paged.client.close();
    }
  });
});

describe('tools/call', () => {
  test('query_bottlenecks', async () => {
    const r = await call('query_bottlenecks', { process: 'redis-server', labels: { git_branch: 'main' } });
    const s = r.structuredContent;
    assert.equal(s.runs, 2);
    assert.equal(s.bottlenecks[0].path, 'Frontend_Bound');
    close(s.bottlenecks[0].value, 0.363);
    assert.match(r.content[0].text, /Frontend_Bound/);
  });

  test('get_funnel', async () => {
    const s = (await call('get_funnel', { labels: { git_branch: 'main' } })).structuredContent;
    const node = (path) => s.nodes.find((n) => n.path === path);
    close(node('Frontend_Bound').value, 0.363);
    close(node('Retiring').value, 0.454);
    assert.equal(node('Retiring').useful, true);
    assert.equal(s.truncated, false);
  });

  test('query_by_bottleneck', async () => {
    const s = (await call('query_by_bottleneck', { node: 'Frontend_Bound', min_pct: 30 })).structuredContent;
    assert.deepEqual(s.runs.map((r) => r.run_id).sort(), [...store.runs.main].sort());
  });

  test('compare_by_labels', async () => {
    const s = (await call('compare_by_labels', {
      labels_a: { git_branch: 'main' }, labels_b: { git_branch: 'feature' },
      labels: { test_name: 'get' },
    })).structuredContent;
    assert.equal(s.runs_a, 2);
    assert.equal(s.runs_b, 2);
    const backend = s.metrics.find((m) => m.path === 'Backend_Bound');
    assert.equal(backend.change, 'regression');
    assert.ok(backend.delta > 0.1);
  });

  test('compare_runs', async () => {
    const s = (await call('compare_runs', {
      run_a: store.runs.main[0], run_b: store.runs.feature[0].slice(0, 8),
    })).structuredContent;
    assert.equal(s.runs_a, 1);
    assert.equal(s.runs_b, 1);
    assert.ok(s.metrics.length > 0);
  });

  test('explain_metric', async () => {
    const r = await call('explain_metric', { name: 'dram_bound' });
    assert.equal(r.structuredContent.path, 'Backend_Bound.Memory_Bound.DRAM_Bound');
    assert.ok(r.structuredContent.hints.length > 0);
  });

  test('list_profiling_runs is bounded by limit and says so', async () => {
    const r = await call('list_profiling_runs', { limit: 2 });
    assert.equal(r.structuredContent.runs.length, 2);
    assert.equal(r.structuredContent.truncated, true);
    assert.match(r.content[0].text, /raise limit/);
    const all = (await call('list_profiling_runs', {})).structuredContent;
    assert.equal(all.runs.length, 5);
    assert.equal(all.truncated, false);
    assert.equal(all.total, 5);
  });

  test('list_labels', async () => {
    const s = (await call('list_labels', {})).structuredContent;
    assert.equal(s.runs, 5);
    const branch = s.keys.find((k) => k.key === 'git_branch');
    assert.equal(branch.runs, 5);
    assert.equal(branch.distinct_values, 3);
    // two runs each for feature and main (ties go by value), one for arm
    assert.deepEqual(branch.values, [
      { value: 'feature', runs: 2 }, { value: 'main', runs: 2 }, { value: 'arm', runs: 1 },
    ]);
    const one = await call('list_labels', { key: 'test_name', process: 'redis-server', limit: 1 });
    assert.deepEqual(one.structuredContent.keys.map((k) => k.key), ['test_name']);
    assert.deepEqual(one.structuredContent.keys[0].values, [{ value: 'get', runs: 4 }]);
    assert.equal(one.structuredContent.truncated, false);
    const cut = await call('list_labels', { key: 'git_branch', limit: 2 });
    assert.equal(cut.structuredContent.truncated, true);
    assert.equal(cut.structuredContent.total, 3);
    assert.match(cut.content[0].text, /\(1 more\)/);
    assert.match(await callError('list_labels', { key: 'branch' }), /keys there are .*git_branch/);
    // matching nothing is an empty answer with a hint, not an error
    const none = await call('list_labels', { labels: { git_branch: 'nope' } });
    assert.deepEqual(none.structuredContent.keys, []);
    assert.match(none.structuredContent.hint, /no stored run matches/);
  });

  test('get_thread_breakdown', async () => {
    const s = (await call('get_thread_breakdown', { run_id: store.runs.arm })).structuredContent;
    assert.equal(s.threads.length, 3);
    const io = s.thread_names.find((g) => g.name === 'io_thd_*');
    assert.equal(io.threads, 2);
    assert.equal(io.oncpu_ns, 2250000000); // 750 + 1500 ms of task-clock in the file
  });

  test('get_run_tree', async () => {
    const s = (await call('get_run_tree', { run_id: store.runs.main[0].slice(0, 10) })).structuredContent;
    assert.equal(s.run_id, store.runs.main[0]);
    assert.equal(s.runs, 1);
    close(s.nodes.find((n) => n.path === 'Frontend_Bound').value, 0.363);
  });

  test('query_trend', async () => {
    const s = (await call('query_trend', { node: 'Frontend_Bound', labels: { test_name: 'get' } })).structuredContent;
    assert.equal(s.points.length, 4);
    assert.equal(s.path, 'Frontend_Bound');
  });

  test('collect_topdown is refused without --allow-collect', async () => {
    assert.match(await callError('collect_topdown', { process: 'init' }), /--allow-collect/);
  });

  test('a query matching nothing is an empty answer with a hint', async () => {
    for (const [name, args] of [['query_bottlenecks', {}], ['get_funnel', {}], ['list_profiling_runs', {}],
      ['get_thread_breakdown', {}], ['query_trend', { node: 'Retiring' }],
      ['compare_by_labels', { labels_a: { git_branch: 'main' }, labels_b: { git_branch: 'nope' } }]]) {
      const r = await call(name, { ...args, labels: { ...(args.labels || {}), git_branch: 'nope' } });
      assert.equal(r.structuredContent.total, 0, name);
      assert.match(r.structuredContent.hint, /no stored run matches/, name);
    }
  });

  test('a failed query is an isError result that says what to do', async () => {
    assert.match(await callError('query_trend', { node: 'Retirng' }), /unknown metric 'Retirng'/);
    assert.match(await callError('explain_metric', { name: 'dram_bond' }), /DRAM_Bound/);
    assert.match(await callError('list_profiling_runs', { labels: { 'bad key': 'x' } }), /bad label/);
    assert.match(await callError('get_run_tree', { run_id: 'ffffffff' }), /run/);
  });

  test('an unknown tool is a protocol error', async () => {
    await protocolError(session.client.callTool({ name: 'no_such_tool', arguments: {} }), -32602);
  });

  // MCP 2025-11-25 (SEP-1303): the model sees tool results, so what its
  // arguments get wrong comes back as isError with a message it can act on.
  test('bad arguments are tool errors the model can read', async () => {
    assert.match(await callError('query_bottlenecks', { limit: 'ten' }), /argument 'limit' must be an integer from 1 to 100/);
    assert.match(await callError('query_bottlenecks', { colour: 'red' }), /has no argument 'colour'; its arguments are: labels/);
    assert.match(await callError('explain_metric', {}), /needs the argument 'name'/);
    assert.match(await callError('explain_metric', { metric: 'zzz' }), /has no argument 'metric'/);
    assert.match(await callError('list_labels', { limit: 0 }), /argument 'limit'/);
    assert.match(await callError('query_bottlenecks', { process: 'x'.repeat(70000) }), /the limit is 65536/);
    assert.equal((await session.client.ping()).constructor, Object); // still serving
  });
});

describe('resources', () => {
  test('resources/list has the knowledge base and the runs', async () => {
    const { resources } = await session.client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes('topdown://metrics'));
    assert.ok(uris.includes('topdown://methodology'));
    assert.ok(uris.includes(`topdown://runs/${store.runs.arm}`));
    assert.equal(uris.length, 7);
  });

  test('resources/templates/list', async () => {
    const { resourceTemplates } = await session.client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [
      'topdown://metrics/{name}', 'topdown://runs/{run_id}', 'topdown://runs/{run_id}/tree',
    ]);
  });

  test('resources/read', async () => {
    const read = async (uri) => (await session.client.readResource({ uri })).contents[0];
    const metrics = JSON.parse((await read('topdown://metrics')).text);
    assert.ok(metrics.groups.some((g) => g.vendor === 'intel'));
    const dram = JSON.parse((await read('topdown://metrics/DRAM_Bound')).text);
    assert.equal(dram.path, 'Backend_Bound.Memory_Bound.DRAM_Bound');
    assert.match((await read('topdown://methodology')).text, /pipeline slot/);
    const run = JSON.parse((await read(`topdown://runs/${store.runs.arm}`)).text);
    assert.equal(run.run_id, store.runs.arm);
    assert.equal(run.threads, 3);
    const tree = JSON.parse((await read(`topdown://runs/${store.runs.main[1]}/tree`)).text);
    assert.ok(tree.nodes.some((n) => n.path === 'Retiring'));
    await protocolError(session.client.readResource({ uri: 'topdown://runs/ffffffff' }), -32002);
    await protocolError(session.client.readResource({ uri: 'topdown://nothing' }), -32002);
    await protocolError(session.client.readResource({ uri: 'topdown://metrics/no_such_metric' }), -32002);
  });
});

describe('prompts', () => {
  test('prompts/list', async () => {
    const { prompts } = await session.client.listPrompts();
    const byName = Object.fromEntries(prompts.map((p) => [p.name, p.arguments.map((a) => a.name)]));
    assert.deepEqual(byName, {
      diagnose_bottleneck: ['process', 'labels'],
      compare_builds: ['label_a', 'label_b'],
      explain_regression: ['run_a', 'run_b'],
    });
  });

  test('prompts/get', async () => {
    const diagnose = await session.client.getPrompt({
      name: 'diagnose_bottleneck', arguments: { process: 'redis-server', labels: 'git_branch=main' },
    });
    assert.equal(diagnose.messages[0].role, 'user');
    assert.match(diagnose.messages[0].content.text, /query_bottlenecks/);
    assert.match(diagnose.messages[0].content.text, /\{"git_branch":"main"\}/);
    const builds = await session.client.getPrompt({
      name: 'compare_builds', arguments: { label_a: 'git_branch=main', label_b: 'git_branch=feature' },
    });
    assert.match(builds.messages[0].content.text, /compare_by_labels/);
    const regression = await session.client.getPrompt({
      name: 'explain_regression', arguments: { run_a: 'aaaaaaaa', run_b: 'bbbbbbbb' },
    });
    assert.match(regression.messages[0].content.text, /compare_runs with run_a "aaaaaaaa"/);
    await protocolError(session.client.getPrompt({ name: 'compare_builds', arguments: { label_a: 'x=1' } }), -32602);
    await protocolError(session.client.getPrompt({ name: 'compare_builds', arguments: { label_a: 'oops', label_b: 'x=1' } }), -32602);
    await protocolError(session.client.getPrompt({ name: 'no_such_prompt' }), -32602);
  });
});

describe('completion', () => {
  const complete = async (ref, name, value) =>
    (await session.client.complete({ ref, argument: { name, value } })).completion.values;

  test('run ids, processes and metric names', async () => {
    const prompt = (name) => ({ type: 'ref/prompt', name });
    const id = store.runs.arm;
    assert.deepEqual(await complete(prompt('explain_regression'), 'run_a', id.slice(0, 6)), [id]);
    assert.deepEqual(await complete(prompt('diagnose_bottleneck'), 'process', 'red'), ['redis-server']);
    const metrics = await complete({ type: 'ref/resource', uri: 'topdown://metrics/{name}' }, 'name', 'dram');
    assert.ok(metrics.includes('DRAM_Bound'), metrics.join(','));
  });

  test('label keys and values', async () => {
    const prompt = (name) => ({ type: 'ref/prompt', name });
    assert.deepEqual(await complete(prompt('diagnose_bottleneck'), 'labels', 'git'), ['git_branch=']);
    assert.deepEqual(await complete(prompt('compare_builds'), 'label_a', 'git_branch='),
      ['git_branch=feature', 'git_branch=main', 'git_branch=arm']);
    assert.deepEqual(await complete(prompt('compare_builds'), 'label_b', 'git_branch=f'), ['git_branch=feature']);
    // the pairs typed before narrow the runs: the arm run has no test_name
    assert.deepEqual(await complete(prompt('compare_builds'), 'label_a', 'git_branch=main,test_name='),
      ['git_branch=main,test_name=get']);
    assert.deepEqual(await complete(prompt('compare_builds'), 'label_a', 'git_branch=arm,test'), []);
    assert.deepEqual(await complete(prompt('compare_builds'), 'label_a', 'no_such_key='), []);
  });
});

describe('logging', () => {
  test('logging/setLevel sends notifications/message', async () => {
    const messages = [];
    session.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => messages.push(n.params));
    await session.client.setLoggingLevel('debug');
    await session.client.ping();
    assert.ok(messages.some((m) => m.level === 'debug' && /ping/.test(m.data)), JSON.stringify(messages));
    await session.client.setLoggingLevel('error');
    messages.length = 0;
    await session.client.ping();
    assert.equal(messages.length, 0);
    await protocolError(session.client.setLoggingLevel('loud'), -32602);
  });
});

describe('locate', () => {
  test('questions about samples on runs without any are empty answers with a hint', async () => {
    for (const name of ['get_hot_functions', 'get_flamegraph']) {
      const r = await call(name, { labels: { git_branch: 'main' } });
      assert.equal(r.structuredContent.samples, 0);
      assert.match(r.structuredContent.hint, /--sample/);
    }
  });

  test('bad arguments are tool errors the model can read', async () => {
    assert.match(await callError('get_hot_functions', { limit: 0 }), /limit/);
    assert.match(await callError('get_flamegraph', { thread: 5 }), /thread/);
  });

  test('a sampled run: hot functions and folded stacks', { skip: !isRoot && 'needs root: sampling loads BPF programs' }, async () => {
    const labels = { test_name: 'mcp-locate' };
    sampleRun(store.db, labels);
    const hot = (await call('get_hot_functions', { labels, thread: 'split_a', limit: 2 })).structuredContent;
    assert.equal(hot.runs, 1);
    assert.deepEqual(hot.functions.map((f) => f.function), ['hot_a', 'hot_b']);
    // the split itself is checked to 3 points by tests/test_locate_e2e.c; here, concurrent
    // test files share the CPUs and the samples are few: the order is what counts
    assert.ok(hot.functions[0].self > hot.functions[1].self, `hot_a ${hot.functions[0].self}`);
    assert.match(hot.functions[0].file, /workload\.c$/);
    assert.equal(hot.truncated, true);
    const flame = await call('get_flamegraph', { labels, limit: 3 });
    const stacks = flame.structuredContent.stacks;
    assert.equal(stacks.length, 3);
    assert.ok(stacks[0].count >= stacks[1].count && stacks[1].count >= stacks[2].count);
    assert.ok(stacks.some((st) => st.stack.endsWith(';split_a;hot_a')));
    assert.match(flame.content[0].text, /;hot_a \d+/);
  });
});

describe('collect_topdown', { skip: !isRoot && 'needs root: collecting loads BPF programs' }, () => {
  let collecting;

  before(async () => {
    collecting = await connect(['--db', store.db, '--allow-collect', '--max-duration', '2s']);
  });
  after(async () => collecting?.client.close());

  test('reports progress and stores a run', async () => {
    const progress = [];
    const result = await collecting.client.callTool(
      { name: 'collect_topdown', arguments: { pid: String(process.pid), duration: '30s', labels: { test_name: 'mcp' } } },
      undefined, { onprogress: (p) => progress.push(p), timeout: 60000 });
    assert.equal(result.isError, false, result.content[0].text);
    assert.equal(result.structuredContent.duration_capped, true);
    assert.ok(result.structuredContent.duration_s < 3);
    assert.ok(progress.length >= 1, 'at least one progress notification');
    assert.ok(progress.every((p) => p.total === 2));
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);
    const runs = (await collecting.client.callTool({ name: 'list_profiling_runs', arguments: { labels: { test_name: 'mcp' } } })).structuredContent.runs;
    assert.deepEqual(runs.map((r) => r.run_id), [result.structuredContent.run_id]);
  });

  test('cancellation ends the collection; the server keeps serving', async () => {
    const abort = new AbortController();
    const pending = collecting.client.callTool(
      { name: 'collect_topdown', arguments: { pid: String(process.pid), labels: { test_name: 'cancelled' } } },
      undefined, { signal: abort.signal, timeout: 60000 });
    setTimeout(() => abort.abort('enough'), 500);
    await assert.rejects(pending);
    assert.deepEqual(await collecting.client.ping(), {});
    // the collection is gone: a new one may start, and the cancelled one stored nothing
    const next = await collecting.client.callTool(
      { name: 'collect_topdown', arguments: { pid: String(process.pid), duration: '500ms' } },
      undefined, { timeout: 60000 });
    assert.equal(next.isError, false, next.content[0].text);
    const cancelled = await collecting.client.callTool({ name: 'list_profiling_runs', arguments: { labels: { test_name: 'cancelled' } } });
    assert.equal(cancelled.isError, false); // no run matches: an empty answer
    assert.deepEqual(cancelled.structuredContent.runs, []);
  });
});
