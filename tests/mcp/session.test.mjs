// SPDX-License-Identifier: BSD-3-Clause
// A scripted assistant session: the chain of calls a model makes, each
// step taking what it needs (run ids, node names, labels) from the
// previous answers' structuredContent alone, never from their text.
//   list_labels -> list_profiling_runs -> query_bottlenecks (newest run
//   with a tree first) -> explain_metric -> get_hot_functions ->
//   compare_by_labels
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import Ajv2020 from 'ajv/dist/2020.js';

import { connect, isRoot, makeStore, sampleRun } from './helpers.mjs';

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });

let store;
let session;
let schemas;

before(async () => {
  store = makeStore();
  // Where this host can sample, one branch's runs also carry stacks.
  if (isRoot) sampleRun(store.db, { git_branch: 'main', test_name: 'get' });
  session = await connect(['--db', store.db]);
  schemas = new Map((await session.client.listTools()).tools.map((t) => [t.name, ajv.compile(t.outputSchema)]));
});

after(async () => {
  await session?.client.close();
  store?.remove();
});

// The structured answer of a call, checked against the tool's schema.
async function ask(name, args) {
  const result = await session.client.callTool({ name, arguments: args });
  assert.equal(result.isError, false, `${name}: ${result.content?.[0]?.text}`);
  const validate = schemas.get(name);
  assert.ok(validate(result.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`);
  return result.structuredContent;
}

test('from the labels to the code and to a comparison, on structured answers alone', async () => {
  // 1. Which branches are stored: the most frequent git_branch values.
  const labels = await ask('list_labels', { key: 'git_branch' });
  const branches = labels.keys[0].values.map((v) => v.value);
  assert.ok(branches.length >= 2);
  const branch = branches.includes('main') ? 'main' : branches[0];

  // 2. That branch's runs, newest first.
  const listed = await ask('list_profiling_runs', { labels: { git_branch: branch } });
  assert.ok(listed.runs.length >= 1);

  // 3. The newest run that has a Top-Down tree: its bottlenecks.
  let chosen;
  let bottlenecks;
  for (const run of listed.runs) {
    bottlenecks = await ask('query_bottlenecks', { run_id: run.run_id });
    if (bottlenecks.bottlenecks.length) {
      chosen = run;
      break;
    }
    assert.match(bottlenecks.hint, /\w/); // an empty answer says why
  }
  assert.ok(chosen, 'a run with a tree');
  const node = bottlenecks.bottlenecks[0].name;

  // 4. What that node means, and what to do about it.
  const explained = await ask('explain_metric', { name: node });
  assert.ok(explained.path.endsWith(node));
  assert.ok(explained.hints.length > 0);

  // 5. Where the samples land in the same branch and test (runs collected with --sample);
  // the run's other labels (host, model, collector) belong to that run alone.
  const same = Object.fromEntries(Object.entries(chosen.labels).filter(([key]) => ['git_branch', 'test_name'].includes(key)));
  const hot = await ask('get_hot_functions', { labels: same, limit: 10 });
  if (isRoot) {
    assert.ok(hot.samples > 0);
    assert.ok(hot.functions.some((f) => f.function === 'hot_a'), JSON.stringify(hot.functions.map((f) => f.function)));
  } else {
    assert.equal(hot.samples, 0);
    assert.match(hot.hint, /--sample/);
  }

  // 6. The chosen branch against another, on the labels the answers gave.
  const other = branches.find((b) => b !== branch);
  const shared = Object.fromEntries(Object.entries(chosen.labels).filter(([key]) => key === 'test_name'));
  const compared = await ask('compare_by_labels', {
    labels_a: { git_branch: branch }, labels_b: { git_branch: other }, labels: shared,
  });
  assert.ok(compared.runs_a >= 1 && compared.runs_b >= 1);
  assert.ok(compared.metrics.some((m) => m.name === node || m.path.endsWith(node)));
});
