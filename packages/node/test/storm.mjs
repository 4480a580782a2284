// A seeded storm for the multi-replica tests (store.test.mjs): pair storms, a burst storm with
// four senders, out-of-order timestamps, tool-loop sessions, and some bot messages delivered to two
// replicas (a Slack retry landing elsewhere); routed at random or by key hash. Also the replicas'
// runner and the checks on their merged output.
import { spawn } from 'node:child_process';
import path from 'node:path';

export const CONFIG = {
  tools: { loopDetection: { enabled: true } },
  channels: { defaults: { botLoopProtection: { maxEventsPerWindow: 20, windowSeconds: 60, cooldownSeconds: 60, maxConversationBotEvents: 40 } } },
};

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bot = (conversation, sender, receiver, ts, id) =>
  JSON.stringify({ kind: 'bot_message', channel: 'slack', account: 'T1', conversation, sender, receiver, ts_ms: ts, event_id: id });

/**
 * The storm's events (trace lines, in the order the platform sends them). A pair storm's messages
 * are `stepMs` apart; `outOfOrder` of the bot messages are dated up to 3 s earlier.
 */
export function storm(seed, { pairs = 3, perPair = 90, burst = 120, sessions = 3, calls = 25, stepMs = 250, outOfOrder = 0.1 } = {}) {
  const rnd = mulberry32(seed);
  const streams = [];
  const t0 = 1_700_000_000_000;
  let id = 0;
  const jitter = (ts) => (rnd() < outOfOrder ? ts - Math.floor(rnd() * 3000) : ts);
  for (let p = 0; p < pairs; p++) {
    streams.push(Array.from({ length: perPair }, (_, i) => bot(`pair-${p}`, i % 2 ? 'B' : 'A', i % 2 ? 'A' : 'B', jitter(t0 + i * stepMs), `e${id++}`)));
  }
  const senders = ['B1', 'B2', 'B3', 'B4'];
  streams.push(Array.from({ length: burst }, (_, i) => bot('burst', senders[Math.floor(rnd() * 4)], 'self', jitter(t0 + i * 300), `e${id++}`)));
  for (let s = 0; s < sessions; s++) {
    const session = `agent:main:s${s}`;
    const call = { session, tool: 'exec', args: { command: 'poll' } };
    streams.push(Array.from({ length: calls }, () => [JSON.stringify({ kind: 'tool_call', ...call }), JSON.stringify({ kind: 'tool_result', ...call, result: { out: 'same' } })]).flat());
  }
  const events = [];
  while (streams.some((s) => s.length)) {
    const live = streams.filter((s) => s.length);
    events.push(live[Math.floor(rnd() * live.length)].shift());
  }
  return events;
}

/**
 * Deliveries per replica: `[n, line]` with `n` unique over all deliveries. `route`: `random` (a
 * load balancer) or `hash` (by conversation/session). `dupes`: share of bot messages delivered
 * again to another replica.
 */
export function deliver(events, replicas, seed, { route = 'random', dupes = 0.05 } = {}) {
  const rnd = mulberry32(seed ^ 0x9e3779b9);
  const lanes = Array.from({ length: replicas }, () => []);
  let n = 0;
  for (const line of events) {
    const e = JSON.parse(line);
    const k = e.conversation ?? e.session;
    const r = route === 'hash' ? [...k].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % replicas : Math.floor(rnd() * replicas);
    lanes[r].push([++n, line]);
    if (e.kind === 'bot_message' && rnd() < dupes) lanes[(r + 1) % replicas].push([++n, line]);
  }
  return lanes;
}

const REPLICA = path.join(import.meta.dirname, 'replica.mjs');

/** Runs one replica process per lane at the same time; returns their decisions and stats. */
export async function runReplicas(lanes, options, { inFlight = 4 } = {}) {
  const startAt = Date.now() + 1500;
  const runs = lanes.map((events) => {
    // Killed if it runs far past any normal run (a replica stuck on the store), so that the test
    // fails naming it instead of waiting on it forever.
    const p = spawn(process.execPath, [REPLICA], { stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.stdin.end(JSON.stringify({ config: CONFIG, options, events, startAt, inFlight }));
    return new Promise((resolve, reject) =>
      p.on('exit', (code, sig) => {
        if (code !== 0) return reject(new Error(`replica exited ${code ?? sig}: ${stderr}`));
        const lines = stdout.trim().split('\n').map((l) => JSON.parse(l));
        resolve({ decisions: lines.filter((l) => !l.stats), stats: lines.find((l) => l.stats).stats, stderr });
      }),
    );
  });
  return Promise.all(runs);
}

/**
 * The decisions in commit order (by key, then version), checking that each key's versions are
 * distinct (no two decisions committed at one version: none made twice) and past 2^40 (the
 * store's clock: docs/SCALING.md).
 */
export function commitOrder(results) {
  const all = results.flatMap((r) => r.decisions);
  const byKey = new Map();
  for (const d of all) {
    if (!byKey.has(d.key)) byKey.set(d.key, []);
    byKey.get(d.key).push(d);
  }
  const ordered = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.version - b.version);
    list.forEach((d, i) => {
      if (d.version < 2 ** 40 || (i > 0 && d.version === list[i - 1].version)) {
        throw new Error(`key ${key}: version ${d.version} at commit ${i + 1} (not the clock's, or a decision made twice)`);
      }
    });
    ordered.push(...list);
  }
  return ordered;
}

/** A decision line without its line number (the merged order renumbers the events). */
export const verdict = (line) => {
  const { line: _n, store: _s, ...rest } = JSON.parse(line);
  return JSON.stringify(rest);
};
