// StoredLoopGuard when the store fails (docs/SCALING.md), against a real redis-server: stopped with
// SIGSTOP, killed and restarted, full (maxmemory), holding a value this policy cannot read, down
// with storeFailClosed; and interop with the Rust CLI replica on one key (a value written by one
// is read by the other: the same script and value format). redis-server and the CLI are
// required: a missing one fails with a message saying how to get it (redis-server.mjs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LoopGuardError, replay, StoredLoopGuard } from '../index.js';
import { loopguardCli, resp, startRedis } from './redis-server.mjs';
import { CONFIG, verdict } from './storm.mjs';

const pairEvent = (i, conversation = 'c1') =>
  JSON.stringify({ kind: 'bot_message', channel: 'slack', account: 'T1', conversation, sender: i % 2 ? 'B' : 'A', receiver: i % 2 ? 'A' : 'B', ts_ms: 1_000_000 + i * 100, event_id: `m${i}` });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Where a test is not about the deadline, one that a loaded machine cannot miss by chance: a slow
// answer must not turn into a local decision there.
const PATIENT_MS = 2000;
// Far past any deadline here: only a decision that never comes back trips it.
const HANG_MS = 30_000;

/** `promise`, or a rejection naming `what` if it has not settled within HANG_MS. */
function settles(promise, what) {
  let timer;
  const hung = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${HANG_MS} ms`)), HANG_MS);
  });
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

describe('the store fails', () => {
  let redis;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis?.close());

  it('stopped (SIGSTOP), then killed and restarted: decisions go on locally and come back to the store', async (t) => {
    // The deadline under test. Each try of a stopped store costs one deadline (the tries are
    // never more than 250 ms apart), so a few decisions prove it; the healthy ones before the
    // fault must not miss it by chance on a loaded machine, hence no 20 ms here.
    const deadlineMs = 1000;
    const logs = [];
    const guard = new StoredLoopGuard(CONFIG, { store: redis.url, storePrefix: 'lg:f:', storeDeadlineMs: deadlineMs, log: (m) => logs.push(m) });
    t.after(() => guard.close());
    let i = 0;
    const step = async () => (await settles(guard.decide(pairEvent(i++)), `decision ${i}`)).via;
    /** Decides until one is made on the store again; the limit is a hang's, not a speed. */
    const untilStore = async () => {
      const end = Date.now() + HANG_MS;
      while (Date.now() < end) {
        if ((await step()) === 'store') return true;
        await sleep(10);
      }
      return false;
    };
    for (let k = 0; k < 20; k++) assert.equal(await step(), 'store', `decision ${i} before any fault`);

    redis.stop();
    // A stopped store never answers: without the deadline these decisions would never come back.
    for (let k = 0; k < 3; k++) assert.equal(await step(), 'local', `decision ${i} while the store is stopped`);
    assert.equal(guard.stats().degraded, true);
    const timedOut = guard.stats().storeErrors;
    assert.ok(timedOut >= 3, `each try of the stopped store is counted (${timedOut})`);
    assert.match(logs.join('\n'), new RegExp(`timed out|within ${deadlineMs} ms`), 'the failure is the deadline');
    redis.cont();
    assert.ok(await untilStore(), 'back on the store after SIGCONT');
    for (let k = 0; k < 10; k++) assert.equal(await step(), 'store');

    await redis.kill();
    for (let k = 0; k < 30; k++) {
      assert.equal(await step(), 'local', `decision ${i} while the store is dead`);
      await sleep(5);
    }
    await redis.restart();
    assert.ok(await untilStore(), 'back on the store after a restart');
    for (let k = 0; k < 10; k++) assert.equal(await step(), 'store');

    const s = guard.stats();
    assert.equal(s.onStore + s.onLocal, i, 'every event decided exactly once');
    assert.equal(s.episodes, 2);
    assert.equal(s.degraded, false);
    assert.equal(s.localKeys, 0, 'the local state is dropped when the store answers');
    assert.equal(logs.filter((m) => / failed \(/.test(m)).length, 2, logs.join('\n'));
    assert.equal(logs.filter((m) => /answers again/.test(m)).length, 2, logs.join('\n'));
    console.error(`# faults: ${i} decisions, ${s.onLocal} local, ${s.storeErrors} store errors; ${logs.join(' | ')}`);
  });

  it('full (maxmemory reached): the server refuses the write, the decision is made locally', async (t) => {
    const guard = new StoredLoopGuard(CONFIG, { store: redis.url, storePrefix: 'lg:oom:', storeDeadlineMs: PATIENT_MS, log: () => {} });
    t.after(() => guard.close());
    const first = await guard.decide(pairEvent(0, 'oom'));
    assert.equal(first.via, 'store');
    await resp(redis.port, ['CONFIG', 'SET', 'maxmemory', '1']);
    try {
      assert.equal((await guard.decide(pairEvent(1, 'oom'))).via, 'local');
      assert.equal(guard.stats().storeErrors, 1);
    } finally {
      await resp(redis.port, ['CONFIG', 'SET', 'maxmemory', '0']);
    }
    const header = first.version.toString(16).padStart(16, '0');
    assert.match(await resp(redis.port, ['GET', `lg:oom:{${first.key}}`]), new RegExp(`^\\$\\d+\r\n${header}`), 'the local decision was not written to the store');
    const d = await guard.decide(pairEvent(2, 'oom'));
    assert.equal(d.via, 'store');
    assert.ok(d.version > first.version);
  });

  it('a value this policy cannot read: that decision on local state, the value left alone, counted', async (t) => {
    const logs = [];
    const guard = new StoredLoopGuard(CONFIG, { store: redis.url, storePrefix: 'lg:bad:', storeDeadlineMs: PATIENT_MS, log: (m) => logs.push(m) });
    t.after(() => guard.close());
    await resp(redis.port, ['SET', 'lg:bad:{bot["T1","c1"]}', 'not a loopguard value']);
    const d = await guard.decide(pairEvent(0));
    assert.equal(d.via, 'local');
    assert.equal(guard.stats().unreadable, 1);
    assert.match(await resp(redis.port, ['GET', 'lg:bad:{bot["T1","c1"]}']), /not a loopguard value/);
    assert.match(logs.join('\n'), /unreadable value/);
  });

  it('storeFailClosed with the store down: decisions are refused (kind "store"), nothing crashes', async (t) => {
    const srv = net.createServer();
    await new Promise((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address();
    await new Promise((r) => srv.close(r));
    const guard = new StoredLoopGuard(CONFIG, { store: `redis://127.0.0.1:${port}`, storeFailClosed: true, log: () => {} });
    t.after(() => guard.close());
    const d = await guard.decide(pairEvent(0));
    assert.deepEqual([d.decision, d.via], [null, 'refused']);
    await assert.rejects(guard.beforeToolCall({ session: 's', tool: 'read', args: {} }), (e) => e instanceof LoopGuardError && e.kind === 'store');
    assert.equal(guard.stats().refused, 2);
  });
});

describe('a store with a password', () => {
  let redis;
  before(async () => {
    redis = await startRedis({ args: ['--requirepass', 's3cret-pw'] });
  });
  after(() => redis?.close());

  it('the password comes in the URL; a wrong one is a store failure whose log line never shows it', async (t) => {
    const good = new StoredLoopGuard(CONFIG, { store: `redis://:s3cret-pw@127.0.0.1:${redis.port}`, storePrefix: 'lg:auth:', storeDeadlineMs: PATIENT_MS });
    t.after(() => good.close());
    assert.equal((await good.decide(pairEvent(0))).via, 'store');
    assert.equal(good.stats().backend, `redis://127.0.0.1:${redis.port}`);
    const logs = [];
    const bad = new StoredLoopGuard(CONFIG, { store: `redis://:wrong-pw@127.0.0.1:${redis.port}`, storePrefix: 'lg:auth:', storeDeadlineMs: PATIENT_MS, log: (m) => logs.push(m) });
    t.after(() => bad.close());
    const d = await bad.decide(pairEvent(1));
    assert.equal(d.via, 'local');
    assert.equal(logs.length, 1);
    assert.doesNotMatch(logs[0], /wrong-pw|s3cret/);
  });
});

describe('interop with the Rust CLI replica', () => {
  let redis;
  let cli;
  before(async () => {
    cli = loopguardCli();
    redis = await startRedis();
  });
  after(() => redis?.close());

  it('the CLI, then Node, then the CLI again decide one conversation on one store: versions continue, verdicts are one node\'s', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lg-node-interop-'));
    const cfg = path.join(dir, 'config.json');
    writeFileSync(cfg, JSON.stringify(CONFIG));
    const events = Array.from({ length: 60 }, (_, i) => pairEvent(i));
    const cliPart = (from, to) => {
      const f = path.join(dir, `part-${from}.jsonl`);
      writeFileSync(f, `${events.slice(from, to).join('\n')}\n`);
      const args = ['replay', '--config', cfg, '--store', redis.url, '--store-prefix', 'lg:io:', '--store-deadline-ms', String(PATIENT_MS), f];
      const out = execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: HANG_MS, killSignal: 'SIGKILL' });
      return out.trim().split('\n').filter((l) => !l.startsWith('{"store"')).map((l) => JSON.parse(l));
    };
    // Each write's version is past the one before (the store's clock), across hosts.
    const rising = (vs) => vs.every((v, i) => v >= 2 ** 40 && (i === 0 || v > vs[i - 1]));
    const first = cliPart(0, 25);
    assert.ok(rising(first.map((d) => d.store.version)));
    const guard = new StoredLoopGuard(CONFIG, { store: redis.url, storePrefix: 'lg:io:', storeDeadlineMs: PATIENT_MS });
    t.after(() => guard.close());
    const mine = [];
    for (const e of events.slice(25, 45)) mine.push(await guard.decide(e));
    await guard.close();
    assert.ok(mine.every((d) => d.via === 'store'));
    const last = cliPart(45, 60);
    const versions = [...first.map((d) => d.store.version), ...mine.map((d) => d.version), ...last.map((d) => d.store.version)];
    assert.ok(rising(versions), `versions continue: ${versions}`);
    assert.deepEqual(mine.map((d) => d.retries), [1, ...Array(19).fill(0)], 'Node meets the CLI\'s writes once, then writes at what it saw');
    const got = [...first.map((d) => verdict(JSON.stringify(d))), ...mine.map((d) => verdict(d.decision)), ...last.map((d) => verdict(JSON.stringify(d)))];
    const oneNode = replay(CONFIG, `${events.join('\n')}\n`).trim().split('\n').map(verdict);
    assert.deepEqual(got, oneNode);
    assert.ok(got.some((v) => v.includes('suppress')), 'the pair budget tripped');
    const lastHeader = versions.at(-1).toString(16).padStart(16, '0');
    assert.match(await resp(redis.port, ['GET', 'lg:io:{bot["T1","c1"]}']), new RegExp(`^\\$\\d+\r\n${lastHeader}`));
  });
});
