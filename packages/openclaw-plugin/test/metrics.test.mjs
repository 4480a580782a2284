// OpenTelemetry metrics from the plugin (docs/METRICS.md): when the gateway registered a global
// meter provider, the plugin's guard records with the host attribute `openclaw`, in both modes
// (the Supervisor; a `store` block's StoredLoopGuard). The SDK is the one pinned in
// packages/node's devDependencies (the plugin's own install carries no SDK: it never loads one).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fakeGateway, reset } from './helpers.mjs';

const fromNodePackage = createRequire(path.resolve(import.meta.dirname, '../../node/package.json'));
const { metrics } = fromNodePackage('@opentelemetry/api');
const { MeterProvider, MetricReader } = fromNodePackage('@opentelemetry/sdk-metrics');

class Reader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

/** A global provider for one test; its reader's points of `name` as [attributes, value]. */
function globalProvider(t) {
  const reader = new Reader();
  assert.ok(metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] })));
  t.after(() => metrics.disable());
  return async (name) => {
    const { resourceMetrics } = await reader.collect();
    const m = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((x) => x.descriptor.name === name);
    return (m?.dataPoints ?? []).map((p) => [p.attributes, p.value]);
  };
}

afterEach(() => reset());

test('the Supervisor mode records with host "openclaw": the block with its detector, the outcomes', async (t) => {
  const read = globalProvider(t);
  const g = fakeGateway({ config: { compat: 'documented' } });
  let blocks = 0;
  for (let i = 1; i <= 23; i += 1) blocks += g.toolCall().blocked ? 1 : 0;
  g.rt.client.flushOutcomes();
  assert.equal(blocks, 3, 'calls 21-23 blocked (plugin.test.mjs)');
  const points = await read('loopguard.decisions');
  assert.ok(points.length > 0);
  assert.ok(points.every(([a]) => a.host === 'openclaw'), JSON.stringify(points));
  const count = (kind, action) => points.filter(([a]) => a.kind === kind && a.action === action).reduce((n, [, v]) => n + v, 0);
  assert.equal(count('tool_call', 'block'), 3);
  assert.deepEqual(points.filter(([a]) => a.action === 'block').map(([a]) => a.detector), ['generic_repeat'], 'identical calls and outcomes (the policy text: "identical arguments and identical outcomes")');
  assert.equal(count('tool_result', 'recorded') + count('tool_result', 'abort'), 20, 'our own blocks are not outcomes');
  assert.deepEqual(await read('loopguard.policy.traps'), [[{ host: 'openclaw' }, 0]]);
});

test('the store mode records with host "openclaw": store decisions on the store', async (t) => {
  const read = globalProvider(t);
  const g = fakeGateway({ config: { compat: 'documented', store: { url: 'memory' } } });
  const ctx = { toolName: 'exec', agentId: 'main', sessionKey: 'agent:main:s1', runId: 'run-1' };
  for (let n = 1; n <= 5; n++) {
    const event = { toolName: 'exec', params: { command: 'ls' }, runId: 'run-1', toolCallId: `c${n}` };
    await g.fire('before_tool_call', event, { ...ctx, toolCallId: `c${n}` });
  }
  assert.deepEqual(await read('loopguard.decisions'), [[{ host: 'openclaw', kind: 'tool_call', action: 'allow', detector: 'none' }, 5]]);
  const store = await read('loopguard.store.decisions');
  assert.deepEqual(store.find(([a]) => a.on === 'store'), [{ host: 'openclaw', on: 'store' }, 5]);
});
