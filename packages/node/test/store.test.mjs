// StoredLoopGuard (docs/SCALING.md): replicas sharing one budget through a real redis-server.
// - the CAS script is byte for byte the Rust host's, and the `memory` store decides every example
//   trace as the whole-gateway replay does;
// - three replica processes on one store: their verdicts equal one node's replay (the Rust CLI,
//   `loopguard replay --store memory`) of the same events in commit order, with every key's
//   versions distinct (no decision doubled); without the store the same storm lets about
//   three times the pair budget through (the negative control).
// Faults and interop with the Rust CLI: store-faults.test.mjs. redis-server and the CLI are
// required: a missing one fails with a message saying how to get it (redis-server.mjs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LoopGuardError, StoredLoopGuard } from '../index.js';
import { CAS_SCRIPT } from '../lib/store.js';
import { loopguardCli, startRedis } from './redis-server.mjs';
import { CONFIG, commitOrder, deliver, runReplicas, storm, verdict } from './storm.mjs';
import { feed } from './trace-events.mjs';

const REPO = path.resolve(import.meta.dirname, '../../..');
const EXAMPLES = path.join(REPO, 'examples', 'traces');

describe('the store path', () => {
  it('CAS_SCRIPT is the Rust host\'s script, byte for byte (one SHA-1 for every replica)', () => {
    const rust = readFileSync(path.join(REPO, 'host/src/store/redis.rs'), 'utf8');
    const m = /pub const CAS_SCRIPT: &str = r"([^"]*)";/.exec(rust);
    assert.ok(m, 'CAS_SCRIPT not found in host/src/store/redis.rs');
    assert.equal(CAS_SCRIPT, m[1]);
  });

  for (const name of readdirSync(EXAMPLES).filter((d) => existsSync(path.join(EXAMPLES, d, 'trace.jsonl'))).sort()) {
    it(`store "memory": example ${name} through applyEvents and the hooks gives expected.jsonl`, async () => {
      const read = (f) => readFileSync(path.join(EXAMPLES, name, f), 'utf8');
      const expected = read('expected.jsonl');
      const guard = new StoredLoopGuard(read('config.json5'), { store: 'memory' });
      assert.equal(await guard.applyEvents(read('trace.jsonl')), expected);
      const hooks = new StoredLoopGuard(read('config.json5'), { store: 'memory' });
      let out = '';
      let n = 0;
      for (const line of read('trace.jsonl').split('\n')) {
        n += 1;
        if (line.trim() === '') continue;
        const ev = JSON.parse(line);
        out += `${JSON.stringify({ line: n, kind: ev.kind, ...(await feedStored(hooks, ev)) })}\n`;
      }
      assert.equal(out, expected);
      await guard.close();
      await hooks.close();
    });
  }

  it('policy names the same policy as an in-process LoopGuard, with the interface of the typed store calls', async () => {
    const { LoopGuard } = await import('../index.js');
    const guard = new StoredLoopGuard('{}', { store: 'memory' });
    const plain = new LoopGuard('{}');
    assert.deepEqual(guard.policy, plain.policy);
    assert.match(guard.policy.interfaceVersion, /^1\.([2-9]|\d\d+)\./);
    plain[Symbol.dispose]();
    await guard.close();
  });

  it('bad options are refused at construction, naming the option', () => {
    const cases = [
      [undefined, 'options'],
      [{ store: 'http://x:1' }, 'options.store'],
      [{ store: 'redis://127.0.0.1:1', storeTtlS: 0 }, 'options.storeTtlS'],
      [{ store: 'redis://127.0.0.1:1', storeDeadlineMs: 1.5 }, 'options.storeDeadlineMs'],
      [{ store: 'memory', storeFailClosed: 'yes' }, 'options.storeFailClosed'],
      [{ store: 'memory', storePrefix: 3 }, 'options.storePrefix'],
    ];
    for (const [options, where] of cases) {
      assert.throws(() => new StoredLoopGuard({}, options), (e) => e instanceof LoopGuardError && e.kind === 'input' && e.path === where, where);
    }
  });

  it('warmUp decides made-up events without touching the store or the local state', async () => {
    const guard = new StoredLoopGuard({}, { store: 'memory' });
    guard.warmUp({ rounds: 20 });
    assert.deepEqual([guard.stats().onStore, guard.stats().onLocal, guard.stats().localKeys], [0, 0, 0]);
    const d = await guard.decide('{"kind":"bot_message","channel":"warm","account":"warm","conversation":"warm","sender":"b0","receiver":"b1","ts_ms":1}');
    assert.equal(d.retries, 0, 'the warm-up wrote nothing (a key written before would conflict)');
    assert.throws(() => guard.warmUp({ rounds: 0 }), (e) => e.path === 'options.rounds');
    await guard.close();
  });

  it('a malformed event rejects with the policy\'s input error; nothing is written', async () => {
    const guard = new StoredLoopGuard({}, { store: 'memory' });
    await assert.rejects(guard.decide('{"kind":"bot_message"}'), (e) => e instanceof LoopGuardError && e.kind === 'input');
    await assert.rejects(guard.onBotMessage({ channel: 'x' }), (e) => e.kind === 'input' && e.path === 'message.account');
    assert.equal(guard.stats().onStore, 0);
    await guard.close();
  });
});

/**
 * `feed` (trace-events.mjs) maps one event to one synchronous LoopGuard hook and its verdict to
 * decision fields; a StoredLoopGuard's hooks return Promises. So: a first pass records which hook
 * `feed` calls with which arguments, the real hook is awaited, and a second pass maps its verdict.
 */
async function feedStored(guard, ev) {
  const STOP = Symbol('recorded');
  let call;
  try {
    feed(new Proxy({}, { get: (_, m) => (...a) => { call = [m, a]; throw STOP; } }), ev);
  } catch (e) {
    if (e !== STOP) throw e;
  }
  const value = await guard[call[0]](...call[1]);
  return feed(new Proxy({}, { get: () => () => value }), ev);
}

describe('three replicas on one redis-server', () => {
  let redis;
  let cli;
  before(async () => {
    cli = loopguardCli();
    redis = await startRedis();
  });
  after(() => redis?.close());

  const dir = mkdtempSync(path.join(os.tmpdir(), 'lg-node-store-'));
  const cfgFile = path.join(dir, 'config.json');
  writeFileSync(cfgFile, JSON.stringify(CONFIG));

  /** One node's replay of `events` in this order: the Rust CLI on its in-process store. */
  const oracle = (events) => {
    const trace = path.join(dir, 'oracle.jsonl');
    writeFileSync(trace, `${events.join('\n')}\n`);
    const out = execFileSync(cli, ['replay', '--config', cfgFile, '--store', 'memory', trace], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    return out.trim().split('\n').filter((l) => !l.startsWith('{"store"')).map(verdict);
  };

  for (const [seed, route] of [[52, 'random'], [7, 'hash']]) {
    it(`seed ${seed}, routed ${route}: the verdicts are one node's replay in commit order`, async () => {
      const events = storm(seed);
      const lanes = deliver(events, 3, seed, { route });
      const byN = new Map(lanes.flat());
      const results = await runReplicas(lanes, { store: redis.url, storePrefix: `lg:t${seed}:`, storeDeadlineMs: 2000 });
      for (const r of results) assert.equal(r.stats.onLocal + r.stats.refused, 0, `a replica left the store: ${JSON.stringify(r.stats)} ${r.stderr}`);
      const ordered = commitOrder(results);
      assert.equal(ordered.length, byN.size, 'every delivery decided exactly once');
      const expected = oracle(ordered.map((d) => byN.get(d.n)));
      assert.deepEqual(ordered.map((d) => verdict(d.decision)), expected);
      const retries = results.reduce((s, r) => s + r.stats.casRetries, 0);
      console.error(`# seed ${seed} ${route}: ${ordered.length} decisions, ${retries} CAS retries`);
    });
  }

  it('the negative control: each replica alone lets about three times the pair budget through', async () => {
    // One timestamp per pair storm: a message dated before a cooldown started does not inherit
    // it (docs/spec/bot-loop.md §2.4 step 10), so with spread timestamps the count allowed
    // depends on the commit order; here it is the budget whatever the order.
    const events = storm(99, { stepMs: 0, outOfOrder: 0 });
    const lanes = deliver(events, 3, 99, { dupes: 0 });
    const allowed = (results) =>
      results.flatMap((r) => r.decisions).filter((d) => d.key.startsWith('bot[') && d.key.includes('pair-') && JSON.parse(d.decision).action === 'allow').length;
    const shared = allowed(await runReplicas(lanes, { store: redis.url, storePrefix: 'lg:neg:', storeDeadlineMs: 2000 }));
    const alone = allowed(await runReplicas(lanes, { store: 'memory' }));
    console.error(`# pair storms: ${shared} allowed with the store, ${alone} without`);
    assert.equal(shared, 3 * 20, 'with the store: the budget of 20 per pair, across the replicas');
    assert.ok(alone >= 2.5 * shared, `without the store only ${alone} allowed`);
  });
});
