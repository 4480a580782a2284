// OpenTelemetry metrics (docs/METRICS.md, issue 62): the SDK's own reader (@opentelemetry/
// sdk-metrics, pinned in devDependencies) collects what the guards recorded after scripted
// loops, and the names, attributes, units and buckets are checked against the table in
// docs/METRICS.md (read from the file, so the doc and the code cannot drift apart). The counts
// expected are the verdicts the test itself saw. Without OpenTelemetry nothing is recorded and
// @opentelemetry is never loaded (a child process with a module hook, with a positive control).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { LoopGuard, LoopGuardError, StoredLoopGuard, Supervisor } from '../index.js';
import { DURATION_SAMPLE, guardMetrics, MAX_HOSTS, MAX_KEYS } from '../lib/metrics.js';
import { startRedis } from './redis-server.mjs';

const DOC = readFileSync(path.resolve(import.meta.dirname, '../../../docs/METRICS.md'), 'utf8');
const CONFIG = { tools: { loopDetection: { enabled: true } } };

/** The table of docs/METRICS.md: instrument → { type, attributes, unit }. */
function documented() {
  const rows = new Map();
  for (const m of DOC.matchAll(/^\| `loopguard_\w+` \| `(loopguard\.[\w.]+)`(?: \(unit `(\w+)`\))? \| (\w+) \| ([^|]+) \|/gm)) {
    rows.set(m[1], { unit: m[2], type: m[3], attributes: [...m[4].matchAll(/`(\w+)`/g)].map((a) => a[1]).sort() });
  }
  assert.ok(rows.size >= 9, `docs/METRICS.md's table read: ${[...rows.keys()]}`);
  return rows;
}
const BUCKETS = /The latency buckets \(seconds\): ([\d., \n]+):/.exec(DOC)[1].split(',').map(Number);

/** The SDK's pull reader: collect() gives what an exporter would get. */
class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  async onForceFlush() {}
  async onShutdown() {}
  /** instrument name → { descriptor, points: [{ attributes, value }] } */
  async read() {
    const { resourceMetrics, errors } = await this.collect();
    assert.deepEqual(errors, []);
    const out = new Map();
    for (const scope of resourceMetrics.scopeMetrics) {
      assert.equal(scope.scope.name, 'loopguard');
      for (const m of scope.metrics) out.set(m.descriptor.name, { descriptor: m.descriptor, type: m.dataPointType, points: m.dataPoints });
    }
    return out;
  }
}
function provider() {
  const reader = new Reader();
  return { reader, provider: new MeterProvider({ readers: [reader] }) };
}
/** `kind/action/detector` → count, of a host's points on loopguard.decisions. */
function decisions(read, host) {
  const out = {};
  for (const p of read.get('loopguard.decisions')?.points ?? []) {
    if (p.attributes.host === host) out[`${p.attributes.kind}/${p.attributes.action}/${p.attributes.detector}`] = p.value;
  }
  return out;
}
const tally = (seen, kind, v) => {
  const k = `${kind}/${v.action}/${v.detector ?? 'none'}`;
  seen[k] = (seen[k] ?? 0) + 1;
};
const msg = (i) => ({ channel: 'discord', account: 'a', conversation: 'c1', sender: 'bot-a', receiver: 'bot-b', tsMs: 1_000 + i * 10 });

describe('OpenTelemetry metrics', () => {
  it('a guard that blocks: the instruments of docs/METRICS.md, the verdicts the caller saw', async () => {
    const { reader, provider: mp } = provider();
    const guard = new LoopGuard(CONFIG, { meterProvider: mp, metricsHost: 'gw-1' });
    const seen = {};
    const calls = 2 * DURATION_SAMPLE + 10;
    for (let i = 0; i < calls; i++) {
      const call = { session: `s${i % 3}`, tool: 'read', args: { path: '/same' } };
      tally(seen, 'tool_call', guard.beforeToolCall(call));
      tally(seen, 'tool_result', guard.afterToolOutcome(call, { result: 'same' }));
    }
    for (let i = 0; i < 40; i++) tally(seen, 'bot_message', guard.onBotMessage(msg(i)));
    assert.ok(Object.keys(seen).some((k) => k.startsWith('tool_call/block/')), `the loop was blocked: ${Object.keys(seen)}`);
    assert.ok(seen['bot_message/suppress/none'] > 0, 'the bot loop was suppressed');

    const read = await reader.read();
    assert.deepEqual(decisions(read, 'gw-1'), seen);
    const table = documented();
    for (const [name, m] of read) {
      const doc = table.get(name);
      assert.ok(doc, `${name} is in docs/METRICS.md's table`);
      assert.equal(doc.type, m.type === 0 ? 'histogram' : 'counter', name);
      if (doc.unit) assert.equal(m.descriptor.unit, doc.unit, name);
      for (const p of m.points) assert.deepEqual(Object.keys(p.attributes).sort(), doc.attributes, `${name}'s attributes`);
    }
    assert.match(DOC, new RegExp(`one in ${DURATION_SAMPLE} of each kind`), 'the sample the docs promise');
    const duration = read.get('loopguard.decision.duration');
    const timed = Object.fromEntries(duration.points.map((p) => [p.attributes.kind, p.value]));
    // each kind has one decision in DURATION_SAMPLE timed, whatever the mix of kinds
    assert.equal(timed.tool_call.count, Math.floor(calls / DURATION_SAMPLE));
    assert.equal(timed.tool_result.count, Math.floor(calls / DURATION_SAMPLE));
    assert.equal(timed.bot_message, undefined, '40 bot messages: none timed yet');
    assert.deepEqual(timed.tool_call.buckets.boundaries, BUCKETS);
    assert.ok(timed.tool_call.min > 0 && timed.tool_call.max < 1, `seconds, not ms: ${timed.tool_call.max}`);
    assert.deepEqual(read.get('loopguard.policy.swaps').points.map((p) => [p.attributes, p.value]), [[{ host: 'gw-1' }, 0]]);
  });

  it('the global provider, registered before the guard is made, is used; meterProvider: null turns it off', async (t) => {
    const { reader, provider: mp } = provider();
    assert.ok(metrics.setGlobalMeterProvider(mp));
    t.after(() => metrics.disable());
    const on = new LoopGuard(CONFIG);
    const off = new LoopGuard(CONFIG, { meterProvider: null, metricsHost: 'off' });
    const call = { session: 's', tool: 'exec', args: { cmd: 'ls' } };
    const seen = {};
    for (let i = 0; i < 30; i++) {
      tally(seen, 'tool_call', on.beforeToolCall(call));
      off.beforeToolCall(call);
    }
    const read = await reader.read();
    assert.deepEqual(decisions(read, 'node'), seen, 'host "node" by default');
    assert.deepEqual(decisions(read, 'off'), {});
  });

  it('no OpenTelemetry set up when the guard is made: nothing is recorded, even on a provider registered later', async (t) => {
    const guard = new LoopGuard(CONFIG, { metricsHost: 'early' });
    guard.beforeToolCall({ session: 's', tool: 'read', args: {} });
    const { reader, provider: mp } = provider();
    metrics.setGlobalMeterProvider(mp);
    t.after(() => metrics.disable());
    for (let i = 0; i < 20; i++) guard.beforeToolCall({ session: 's', tool: 'read', args: {} });
    assert.deepEqual(await reader.read(), new Map());
  });

  it('the Supervisor counts each decision once (its inline guard does not) and reports its policy counters', async (t) => {
    const { reader, provider: mp } = provider();
    metrics.setGlobalMeterProvider(mp); // a guard inside the Supervisor would record here
    t.after(() => metrics.disable());
    const sup = new Supervisor({ config: CONFIG, meterProvider: mp, metricsHost: 'openclaw' });
    t.after(() => sup.stop({ save: false }));
    const seen = {};
    for (let i = 0; i < 30; i++) {
      const call = { session: 's', tool: 'read', args: { path: '/a' } };
      tally(seen, 'tool_call', sup.call('beforeToolCall', call).value);
      tally(seen, 'tool_result', sup.call('afterToolOutcome', call, { result: 'x' }).value);
    }
    const read = await reader.read();
    assert.deepEqual(decisions(read, 'openclaw'), seen);
    assert.deepEqual(decisions(read, 'node'), {}, 'no second count by the inline LoopGuard');
    for (const name of ['loopguard.policy.swaps', 'loopguard.policy.traps', 'loopguard.policy.timeouts', 'loopguard.policy.recoveries']) {
      assert.deepEqual(read.get(name).points.map((p) => [p.attributes, p.value]), [[{ host: 'openclaw' }, 0]], name);
    }
  });

  it('bad options are refused with the option named', () => {
    assert.throws(() => new LoopGuard(CONFIG, { meterProvider: {} }), (e) => e instanceof LoopGuardError && e.path === 'options.meterProvider');
    const { provider: mp } = provider();
    assert.throws(() => new LoopGuard(CONFIG, { meterProvider: mp, metricsHost: '' }), (e) => e instanceof LoopGuardError && e.path === 'options.metricsHost');
    assert.throws(() => new LoopGuard(CONFIG, { metricsHost: 7 }), (e) => e instanceof LoopGuardError && e.path === 'options.metricsHost', 'checked with metrics off too');
  });

  it('the series have a ceiling: unknown words are `other`, raw keys and hosts are capped', async () => {
    const { reader, provider: mp } = provider();
    const m = guardMetrics(mp, 'h', 'options');
    for (let i = 0; i < 3 * MAX_KEYS; i++) m.decided('tool_call', { action: `made-up-${i}`, detector: 'generic_repeat' }, -1);
    m.decided('no_such_kind', { action: 'block', detector: 'a_newer_detector' }, -1);
    assert.equal(m.keys, MAX_KEYS + 2, 'the raw keys, then their two folded forms');
    for (let i = 0; i < MAX_HOSTS + 10; i++) guardMetrics(mp, `host-${i}`, 'options').decided('tool_call', { action: 'allow' }, -1);
    const points = (await reader.read()).get('loopguard.decisions').points;
    assert.deepEqual(decisions(new Map([['loopguard.decisions', { points }]]), 'h'), { 'tool_call/other/generic_repeat': 3 * MAX_KEYS, 'other/block/other': 1 });
    assert.match(DOC, new RegExp(`past ${MAX_HOSTS} names in one process`), 'the cap the docs promise');
    const hosts = new Set(points.map((p) => p.attributes.host));
    assert.equal(hosts.size, MAX_HOSTS);
    assert.ok(hosts.has('other') && !hosts.has(`host-${MAX_HOSTS + 9}`));
  });

  it('without OpenTelemetry, @opentelemetry is never loaded (and the check sees it when it is)', () => {
    const run = (...args) => JSON.parse(execFileSync(process.execPath, [path.join(import.meta.dirname, 'otel-absent.mjs'), ...args], { encoding: 'utf8', timeout: 120_000 }));
    const absent = run();
    assert.deepEqual(absent, { resolved: [], global: false, actions: ['allow', 'block', 'warn'] });
    const control = run('control');
    assert.deepEqual(control.resolved, ['@opentelemetry/api']);
  });
});

describe('OpenTelemetry metrics of a StoredLoopGuard on a real redis-server', () => {
  let redis;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis?.close());

  it('store decisions on store, then on local state after the store died; one fallback episode', async (t) => {
    const { reader, provider: mp } = provider();
    const guard = new StoredLoopGuard(CONFIG, { store: redis.url, storePrefix: 'lg:m:', storeDeadlineMs: 1000, meterProvider: mp, metricsHost: 'replica-1', log: () => {} });
    t.after(() => guard.close());
    const seen = {};
    const call = { session: 's', tool: 'read', args: { path: '/same' } };
    const onStore = 30;
    for (let i = 0; i < onStore; i++) {
      tally(seen, 'tool_call', await guard.beforeToolCall(call));
      tally(seen, 'tool_result', await guard.afterToolOutcome(call, { result: 'same' }));
    }
    for (let i = 0; i < 5; i++) tally(seen, 'bot_message', await guard.onBotMessage(msg(i)));
    assert.ok(Object.keys(seen).some((k) => k.startsWith('tool_call/block/')), `blocked through the store: ${Object.keys(seen)}`);
    await redis.kill();
    const onLocal = 4;
    for (let i = 0; i < onLocal; i++) tally(seen, 'tool_call', await guard.beforeToolCall({ session: 'other', tool: 'read', args: {} }));

    const read = await reader.read();
    assert.deepEqual(decisions(read, 'replica-1'), seen);
    const store = Object.fromEntries(read.get('loopguard.store.decisions').points.map((p) => [p.attributes.on, [p.attributes.host, p.value]]));
    assert.deepEqual(store, { store: ['replica-1', 2 * onStore + 5], local: ['replica-1', onLocal], refused: ['replica-1', 0] });
    assert.deepEqual(read.get('loopguard.store.fallback_episodes').points.map((p) => [p.attributes, p.value]), [[{ host: 'replica-1' }, 1]]);
    assert.deepEqual(read.get('loopguard.store.cas_retries').points.map((p) => [p.attributes, p.value]), [[{ host: 'replica-1' }, 0]], 'one replica: no conflicts');
  });
});
